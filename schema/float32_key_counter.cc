// Float32KeyCounter's counting pass and its clearing between values (float32_key_counter.h).
#include "schema/float32_key_counter.h"

namespace trialdb::distribution_kernel {

bool Float32KeyCounter::count(const TensorView& v) {
  uint32_t* const t = tables_.data();
  uint32_t keys[kBlock];
  for (int64_t start = 0; start < v.numel; start += kBlock) {
    const int64_t len = std::min(kBlock, v.numel - start);
    block_keys(v, start, len, keys);
    int64_t j = 0;
    for (; j + kCountTables <= len; j += kCountTables)
      for (int q = 0; q < kCountTables; ++q) ++t[q * kTableStride + keys[j + q]];
    for (; j < len; ++j) ++t[keys[j]];
  }
  for (int q = 1; q < kCountTables; ++q) {
    uint32_t* const other = t + q * kTableStride;
    for (uint32_t k = 0; k < kKeys; ++k) {
      t[k] += other[k];
      other[k] = 0;
    }
  }
  for (const uint32_t base : {uint32_t{0}, kNegativeKeys}) {
    bool ambiguous = t[base + kInfinityKey] != 0;
    for (uint32_t m = 1; m < kSmallestNormalKey; ++m) ambiguous |= t[base + m] != 0;
    if (ambiguous) {
      std::fill(tables_.begin(), tables_.begin() + kKeys, 0);
      return false;
    }
  }
  zero_ = t[0] + t[kNegativeKeys];
  nan_ = 0;
  for (const uint32_t base : {uint32_t{0}, kNegativeKeys})
    for (uint32_t m = kInfinityKey + 1; m <= kLargestKey && base + m < kKeys; ++m) nan_ += t[base + m];
  uint32_t lo = kSmallestNormalKey, hi = kInfinityKey - 1;
  while (lo <= hi && !t[lo] && !t[kNegativeKeys + lo]) ++lo;
  while (hi >= lo && !t[hi] && !t[kNegativeKeys + hi]) --hi;
  lo_ = lo + kKeyToBucket, hi_ = hi + kKeyToBucket;
  return true;
}

void Float32KeyCounter::unwant() {
  for (const uint32_t k : wanted_keys_) wanted_[k] = 0;
  wanted_keys_.clear();
}

void Float32KeyCounter::clear() {
  uint32_t* const t = tables_.data();
  for (const uint32_t base : {uint32_t{0}, kNegativeKeys}) {
    t[base] = 0;
    std::fill(t + base + kInfinityKey + 1, t + std::min(base + kLargestKey + 1, kKeys), 0);
    if (lo_ <= hi_) std::fill(t + key(base != 0, lo_), t + key(base != 0, hi_) + 1, 0);
  }
}

}  // namespace trialdb::distribution_kernel
