// Float32KeyCounter: the counting pass of the distribution kernel for float32 values too large to
// sort (sorted_elements.h), on
// keys that cost four integer operations per element: the float32 bits rounded up to their top
// 16 bits, which for a normal number is its bucket (sign, exponent, top 7 mantissa bits; rounded
// up because a bucket holds its upper edge) less a constant, plus a sign offset that keeps -0.0
// apart from the largest NaN payloads. The counting pass is a plain histogram of keys in
// kCountTables interleaved tables (a ReLU output's zeros would otherwise be a chain of dependent
// increments of one counter); the classes of elements are read off the keys afterwards. Keys
// that hold a float32 subnormal, an infinity or a finite value in the infinity's key cannot tell
// those apart: a value with any is declined and counted by BucketCounter instead.
//
// The ingest runs the counting pass inside the reductions' pass (reductions.h), which reads
// every element anyway and finds the range of keys it touched, so that only that range is read
// (take_histogram, which writes the histogram blob from it and zeroes it as it goes). The pass also keeps the extremes,
// so that the selection need not gather the first and last buckets for p0 and p100; the gathering pass compares each
// element's key with the few wanted ones in vector registers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/bucket_grid.h"
#include "kernels/cpu_features.h"
#include "kernels/distribution_counter.h"
#include "schema/histogram_blob.h"
#include "schema/value_blob.h"

namespace trialdb::distribution_kernel {

// Appends the elements [start, start + len) of v whose key is wanted to their bucket's range of
// buffer (wanted[keys[j]]: the bucket's ordinal, 0 for none). The block's hits are listed without
// a branch first, then appended: in a large value many groups of eight hold a hit, and a branch
// on them is not predicted.
template <class Load, class Elem>
void gather_wanted_listing(const TensorView& v, int64_t start, int64_t len, const uint32_t* keys, const uint8_t* wanted,
                           Load load, int64_t* cursor, Elem* buffer) {
  int32_t hits[kBlock];
  int64_t n = 0;
  for (int64_t j = 0; j < len; ++j) {
    hits[n] = static_cast<int32_t>(j);
    n += wanted[keys[j]] != 0;
  }
  for (int64_t h = 0; h < n; ++h) buffer[cursor[wanted[keys[hits[h]]]]++] = load(v.data, start + hits[h]);
}

class Float32KeyCounter {
 public:
  // Below this many elements, clearing and merging the whole key tables costs more than it saves
  // (count()'s pass; the reductions' pass merges only its range of keys, from any size on).
  static constexpr int64_t kMinElements = int64_t{1} << 19;

  Float32KeyCounter() : tables_(kCountTables * kTableStride, 0), wanted_(kKeys, 0) {}

  // Counts v (float32). False (and nothing kept) when v holds an element of an ambiguous key.
  bool count(const TensorView& v);

  // The counting pass for a caller that reads every element anyway (the reductions' pass,
  // reductions.h): it increments count_table(q)[bits_key(bits)] for each element, in any of the
  // kCountTables tables, then calls finish_count with the smallest and largest non-NaN element.
  // finish_count returns count's result.
  static constexpr int kCountTables = 2;
  static constexpr uint32_t kKeyRound = 0xFFFF;
  static constexpr int kKeyShift = 16;
  static uint32_t bits_key(uint32_t bits) { return ((bits + kKeyRound) >> kKeyShift) + (bits >> 31); }
  uint32_t* count_table(int q) { return tables_.data() + q * kTableStride; }
  bool finish_count(float min, float max);
  // finish_count for a pass that also found its number of NaNs and its smallest non-zero and
  // largest magnitude (+Inf and 0 when it has no non-zero one): only the keys in between are
  // merged and scanned, so that a value costs its range of buckets rather than the whole tables
  // (which is what made the counter pay only from hundreds of thousands of elements on). A value
  // with a NaN or an ambiguous key goes through finish_count.
  bool finish_count(float min, float max, int64_t nan, float min_nonzero_magnitude, float max_magnitude);

  int64_t zero() const { return zero_; }
  int64_t nan() const { return nan_; }
  int64_t inf(int) const { return 0; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  // counts() needs the range's counts in the first table: merge_range() puts them there after
  // the reductions' pass (finish_count with the range leaves them apart).
  void merge_range();
  const uint32_t* counts(int sign) const { return tables_.data() + key(sign, lo_); }
  // What fill_distribution (distribution.cc) wants of the counts, read off both tables in one
  // pass that zeroes them as it goes: the histogram's runs into *blob, broken where
  // BucketRunWriter (bucket_runs.h) breaks them, so the blob is the same; the number of negative
  // elements; and the buckets holding ranks[0, k) (ascending, distinct, below the non-NaN
  // elements' count) listed into found (room for k) with the elements below them, for
  // ListedBuckets (rank_selection.h). Returns how many were found. Listing every bucket, then
  // grouping the list into runs, then packing those cost more (bench/README.md).
  struct TakenHistogram {
    int64_t negative;
    size_t found;
  };
  TakenHistogram take_histogram(const int64_t* ranks, size_t k, HistogramBlobWriter* blob, ListedBucket* found);
  bool extremes(double* lo, double* hi) const {
    *lo = min_, *hi = max_;
    return true;
  }

  void want(int sign, int64_t s, uint8_t ordinal) {
    wanted_[key(sign, s)] = ordinal;
    wanted_keys_.push_back(key(sign, s));
  }
  template <class Load, class Elem>
  void gather(const TensorView& v, Load load, int64_t* cursor, Elem* buffer) {
    if (wanted_keys_.size() <= kMaxComparedKeys && cpu_has_avx2()) {
      int32_t hits[kBlock];
      for (int64_t start = 0; start < v.numel; start += kBlock) {
        const int64_t len = std::min(kBlock, v.numel - start);
        const int64_t n = list_wanted_keys(v.data, start, len, wanted_keys_.data(), wanted_keys_.size(), hits);
        for (int64_t h = 0; h < n; ++h) {
          const int64_t i = start + hits[h];
          buffer[cursor[wanted_[element_key(v.data, i)]]++] = load(v.data, i);
        }
      }
      return;
    }
    uint32_t keys[kBlock];
    for (int64_t start = 0; start < v.numel; start += kBlock) {
      const int64_t len = std::min(kBlock, v.numel - start);
      block_keys(v, start, len, keys);
      gather_wanted_listing(v, start, len, keys, wanted_.data(), load, cursor, buffer);
    }
  }
  void unwant();

  // Clears the keys a counted value can have touched: zeros, NaNs and its range of buckets.
  void clear();

 private:
  // A key is the magnitude's key plus kNegativeKeys for negative elements. Magnitude keys: 0 for
  // zero, [1, kSmallestNormalKey) for subnormals (and the smallest normal), then the normal
  // buckets up to kInfinityKey (Inf, and magnitudes over 0x7F7F0000), then NaNs up to
  // kLargestKey. A negative NaN whose key would pass kKeys wraps to 1 (declined).
  static constexpr uint32_t kSmallestNormalKey = 0x81;
  static constexpr uint32_t kInfinityKey = 0x7F80;
  static constexpr uint32_t kLargestKey = 0x8000;
  static constexpr uint32_t kNegativeKeys = kLargestKey + 1;
  static constexpr uint32_t kKeys = 2 * kLargestKey + 1;
  static constexpr uint32_t kTableStride = (kKeys + 63) / 64 * 64;
  // A normal float32's bucket less its magnitude key: the exponent rebias from float32 to float64.
  static constexpr int64_t kKeyToBucket = int64_t{1023 - 127} << kBucketMantissaBits;

  static uint32_t key(int sign, int64_t s) {
    return static_cast<uint32_t>(s - kKeyToBucket) + (sign ? kNegativeKeys : 0);
  }

  // Lists the offsets j in [0, len) of the elements start + j of p whose key is one of
  // keys[0, count) into hits and returns how many (AVX2 only). Sixteen elements (their keys packed
  // to 16 bits) are compared with every wanted key at once: for the few buckets a selection
  // usually wants, that costs less than a table lookup per element. A distribution's percentiles want two ranks each,
  // in 12-14 buckets for most values besides the extremes' (bench/README.md).
  static constexpr size_t kMaxComparedKeys = 16;
  static int64_t list_wanted_keys(const uint8_t* p, int64_t start, int64_t len, const uint32_t* keys, size_t count,
                                  int32_t* hits);

  static uint32_t element_key(const uint8_t* data, int64_t i) {
    uint32_t bits;
    std::memcpy(&bits, data + 4 * i, 4);
    return bits_key(bits);
  }
  static void block_keys(const TensorView& v, int64_t start, int64_t len, uint32_t* keys) {
    for (int64_t j = 0; j < len; ++j) keys[j] = element_key(v.data, start + j);
  }

  std::vector<uint32_t> tables_;       // kCountTables tables; the first holds the merged counts
  std::vector<uint8_t> wanted_;        // the ordinal of the wanted bucket of a key, 0 for none
  std::vector<uint32_t> wanted_keys_;  // which they are
  int64_t lo_ = 0, hi_ = -1, zero_ = 0, nan_ = 0;
  float min_ = 0, max_ = 0;  // of the non-NaN elements
  bool split_ = false;       // the range's counts are in both tables (merge_range)
  bool taken_ = false;       // take_histogram read and zeroed the range
};

static_assert(DistributionCounter<Float32KeyCounter>);

}  // namespace trialdb::distribution_kernel
