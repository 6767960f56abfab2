// The sparse histogram of one value as text: the non-empty buckets of the global grid
// (bucket_grid.h) as runs of consecutive buckets, in a JSON object
//
//   {"<first bucket of a run>": [count, count, ...], ...}     e.g. {"-3":[1,0,2],"0":[7],"16001":[4]}
//
// Runs are in bucket order and may hold up to kMaxRunGap empty buckets (a 0) between non-empty
// ones, which is shorter than starting a new run. A run never crosses an octave of the grid (and
// the zero bucket is a run of its own), so a reader looks up a run's octave once, not each
// bucket's. JSON, because SQLite reads it without the
// extension: the histogram_buckets view expands it with json_each (schema.sql); the decoder
// here serves the tests and tools.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/bucket_grid.h"

namespace trialdb {

inline constexpr int64_t kMaxRunGap = 4;

class BucketRunWriter {
 public:
  // Buckets in ascending order, count > 0.
  void add(int64_t bucket, uint64_t count);
  bool empty() const { return !open_; }
  // The text ("{}" when nothing was added); the writer starts over.
  std::string finish();

 private:
  // The most one add writes: the gap's zeros, "],\"<bucket>\":[" and the count.
  static constexpr size_t kMaxAdd = 2 * kMaxRunGap + 64;
  std::string out_ = "{";  // the text in [0, used_), room to write in after it
  size_t used_ = 1;
  // The last bucket (in bucket order) of bucket k's octave: a run goes no further.
  static int64_t last_of_octave(int64_t k) {
    const int64_t octave = bucket_octave(k);
    return k > 0 ? (octave + 1) << kBucketMantissaBits : k < 0 ? -((octave << kBucketMantissaBits) + 1) : 0;
  }

  int64_t next_ = 0;      // the bucket after the last one added
  int64_t run_last_ = 0;  // the open run's last possible bucket
  bool open_ = false;     // a run is open
};

// (bucket, count) of every non-empty bucket, in order; false if `text` is not such an object.
bool decode_bucket_runs(std::string_view text, std::vector<std::pair<int64_t, uint64_t>>* out);

}  // namespace trialdb
