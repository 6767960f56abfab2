// Float32KeyCounter: the counting pass of the distribution kernel for large float32 values, on
// keys that cost four integer operations per element: the float32 bits rounded up to their top
// 16 bits, which for a normal number is its bucket (sign, exponent, top 7 mantissa bits; rounded
// up because a bucket holds its upper edge) less a constant, plus a sign offset that keeps -0.0
// apart from the largest NaN payloads. The counting pass is a plain histogram of keys in
// kCountTables interleaved tables (a ReLU output's zeros would otherwise be a chain of dependent
// increments of one counter); the classes of elements are read off the keys afterwards. Keys
// that hold a float32 subnormal, an infinity or a finite value in the infinity's key cannot tell
// those apart: a value with any is declined and counted by BucketCounter instead.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "schema/bucket_grid.h"
#include "schema/distribution_counter.h"
#include "schema/value_blob.h"

namespace trialdb::distribution_kernel {

// Appends the elements [start, start + len) of v whose key is wanted to their bucket's range of
// buffer (wanted[keys[j]]: the bucket's ordinal, 0 for none). The block's hits are listed without
// a branch first, then appended: in a large value many groups of eight hold a hit, and a branch
// on them is not predicted.
template <class Load, class Elem>
void gather_wanted_listing(const TensorView& v, int64_t start, int64_t len, const uint32_t* keys,
                           const uint8_t* wanted, Load load, int64_t* cursor, Elem* buffer) {
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
  // Below this many elements, clearing and merging the key tables costs more than it saves.
  static constexpr int64_t kMinElements = int64_t{1} << 19;

  Float32KeyCounter() : tables_(kCountTables * kTableStride, 0), wanted_(kKeys, 0) {}

  // Counts v (float32). False (and nothing kept) when v holds an element of an ambiguous key.
  bool count(const TensorView& v);

  int64_t zero() const { return zero_; }
  int64_t nan() const { return nan_; }
  int64_t inf(int) const { return 0; }
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  int64_t at(int sign, int64_t s) const { return tables_[key(sign, s)]; }

  void want(int sign, int64_t s, uint8_t ordinal) {
    wanted_[key(sign, s)] = ordinal;
    wanted_keys_.push_back(key(sign, s));
  }
  template <class Load, class Elem>
  void gather(const TensorView& v, Load load, int64_t* cursor, Elem* buffer) {
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
  static constexpr int kCountTables = 2;
  static constexpr uint32_t kKeyRound = 0xFFFF;
  static constexpr int kKeyShift = 16;
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

  static uint32_t key(int sign, int64_t s) { return static_cast<uint32_t>(s - kKeyToBucket) + (sign ? kNegativeKeys : 0); }

  static void block_keys(const TensorView& v, int64_t start, int64_t len, uint32_t* keys) {
    const uint8_t* const p = v.data + 4 * start;
    for (int64_t j = 0; j < len; ++j) {
      uint32_t bits;
      std::memcpy(&bits, p + 4 * j, 4);
      keys[j] = ((bits + kKeyRound) >> kKeyShift) + (bits >> 31);
    }
  }

  std::vector<uint32_t> tables_;         // kCountTables tables; the first holds the merged counts
  std::vector<uint8_t> wanted_;          // the ordinal of the wanted bucket of a key, 0 for none
  std::vector<uint32_t> wanted_keys_;    // which they are
  int64_t lo_ = 0, hi_ = -1, zero_ = 0, nan_ = 0;
};

static_assert(DistributionCounter<Float32KeyCounter>);

}  // namespace trialdb::distribution_kernel
