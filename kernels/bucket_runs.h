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
    struct One {
      int64_t bucket;
      uint64_t count;
    } one{bucket, count};
    add_all(&one, 1);
  }
  // add(b[i].bucket, b[i].count) for each of b[0, n), in one loop. The open run's state is kept in
  // locals meanwhile: stored through `this`, the counts' stores could alias it, and every field
  // would be stored and loaded again for each bucket.
  template <class BucketCount>
  void add_all(const BucketCount* b, size_t n) {
    uint64_t* const counts = counts_;
    int64_t length = length_, next = next_, run_last = run_last_;
    uint64_t counts_or = counts_or_;
    for (size_t i = 0; i < n; ++i) {
      const int64_t bucket = b[i].bucket;
      const auto count = static_cast<uint64_t>(b[i].count);
      if (length && bucket <= run_last && bucket - next <= kMaxRunGap) {
        // The gap's zeros: kMaxRunGap of them stored whatever the gap, which costs less than a
        // loop (or a call) for the gaps of a sparse histogram; the room after the run has space.
        for (int64_t j = 0; j < kMaxRunGap; ++j) counts[length + j] = 0;
        length += bucket - next;
      } else {
        blob_.add_run(run_first_, counts, static_cast<size_t>(length), counts_or);
        length = 0;
        counts_or = 0;
        run_first_ = bucket;
        run_last = last_of_octave(bucket);
      }
      counts[length++] = count;
      counts_or |= count;
      next = bucket + 1;
    }
    length_ = length, next_ = next, run_last_ = run_last, counts_or_ = counts_or;
    open_ = open_ || n > 0;
  }
  bool empty() const { return !open_; }
  // The histogram blob; the writer starts over.
  std::string finish() {
    end_run();
    open_ = false;
    return blob_.finish();
  }
  // Drops what was added (a value given up part-way): the writer starts over, keeping its room.
  void clear() {
    length_ = 0;
    counts_or_ = 0;
    open_ = false;
    blob_.clear();
  }

 private:
  // The last bucket (in bucket order) of bucket k's octave: a run goes no further.
  static int64_t last_of_octave(int64_t k) {
    const int64_t octave = bucket_octave(k);
    return k > 0 ? (octave + 1) << kBucketMantissaBits : k < 0 ? -((octave << kBucketMantissaBits) + 1) : 0;
  }
  // The open run into the blob, whole: its counts are kept here, at most an octave of them.
  void end_run() {
    blob_.add_run(run_first_, counts_, static_cast<size_t>(length_), counts_or_);
    length_ = 0;
    counts_or_ = 0;
  }

  HistogramBlobWriter blob_;
  static constexpr int64_t kMaxRunLength = INT64_C(1) << kBucketMantissaBits;
  uint64_t counts_[kMaxRunLength + kMaxRunGap];
  int64_t length_ = 0;      // of the open run (0: none open)
  uint64_t counts_or_ = 0;  // its counts' bitwise or
  int64_t run_first_ = 0;   // its first bucket
  int64_t next_ = 0;        // the bucket after the last one added
  int64_t run_last_ = 0;    // the open run's last possible bucket
  bool open_ = false;       // a bucket was added
};

}  // namespace trialdb
