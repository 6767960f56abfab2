// Where the runs of a value's histogram break: the non-empty buckets of the global grid
// (bucket_grid.h), in order, grouped into runs of consecutive buckets for the histogram blob
// (schema/histogram_blob.h), which stores them and reads them back.
//
// A run may hold up to kMaxRunGap empty buckets (a 0) between non-empty ones, which is shorter than
// starting a new run. A run never crosses an octave of the grid (and the zero bucket is a run of
// its own), so a reader looks up a run's octave once, not each bucket's.
#pragma once
#include <cstdint>
#include <string>

#include "kernels/bucket_grid.h"
#include "schema/histogram_blob.h"

namespace trialdb {

inline constexpr int64_t kMaxRunGap = 4;
static_assert(kMaxBucket < kHistogramBucketLimit, "the histogram blob cannot number every bucket of the grid");
static_assert((INT64_C(1) << kBucketMantissaBits) <= kHistogramMaxRun, "a run of a whole octave is too long");

class BucketRunWriter {
 public:
  // Buckets in ascending order, count > 0.
  void add(int64_t bucket, uint64_t count) {
    if (open_ && bucket <= run_last_ && bucket - next_ <= kMaxRunGap) {
      for (; next_ < bucket; ++next_) blob_.add_count(0);
    } else {
      blob_.begin_run(bucket);
      open_ = true;
      run_last_ = last_of_octave(bucket);
    }
    blob_.add_count(count);
    next_ = bucket + 1;
  }
  bool empty() const { return !open_; }
  // The histogram blob; the writer starts over.
  std::string finish() {
    open_ = false;
    return blob_.finish();
  }

 private:
  // The last bucket (in bucket order) of bucket k's octave: a run goes no further.
  static int64_t last_of_octave(int64_t k) {
    const int64_t octave = bucket_octave(k);
    return k > 0 ? (octave + 1) << kBucketMantissaBits : k < 0 ? -((octave << kBucketMantissaBits) + 1) : 0;
  }

  HistogramBlobWriter blob_;
  int64_t next_ = 0;      // the bucket after the last one added
  int64_t run_last_ = 0;  // the open run's last possible bucket
  bool open_ = false;     // a run is open
};

}  // namespace trialdb
