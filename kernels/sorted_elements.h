// SortedElements: the distribution kernel for values of up to kMaxElements elements that a float
// holds exactly (float32, float16, bfloat16, bool and the 8- and 16-bit integers). Their finite
// non-zero elements are sorted by bucket (bucket_grid.h), by a radix sort of two 8-bit digits of
// a 16-bit key of their float bits: the histogram is then the runs of equal keys, the counts of
// zeros, infinities and NaNs are counted on the way, and an order statistic is selected within
// the one bucket that holds its rank (nth_element over a few elements).
//
// Many values of real trials are small (a CNN's biases and gradients, a transformer's layers of a
// few hundred elements). The bucket counters (bucket_counter.h) pay per value for the range of
// buckets it spans (scanned to read the counts, again to find the wanted buckets, cleared after),
// which for a value of 36 elements is most of the cost; the sort pays per element, through
// arrays that stay in the L1 cache and no table larger than its 2 KB of digit counts.
//
// A float32 subnormal's bucket is not a function of the key (its float64 has another exponent):
// values with any are declined, and counted by BucketCounter instead.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/bucket_grid.h"
#include "schema/value_blob.h"

namespace trialdb::distribution_kernel {

class SortedElements {
 public:
  // Values of more elements go to the counters: from about 1,500 elements of a normal
  // distribution on, the sort's passes cost more instructions than counting does (callgrind).
  static constexpr int64_t kMaxElements = 1024;

  // Sorts the elements of v, which load(data, i) reads as float (numel <= kMaxElements). False
  // (and nothing kept) when one is a float32 subnormal.
  template <class Load>
  bool sort(const TensorView& v, Load load) {
    static_assert(std::is_same_v<decltype(load(v.data, 0)), float>);
    if (keys_.size() < static_cast<size_t>(v.numel)) keys_.resize(static_cast<size_t>(v.numel));
    uint32_t* const keys = keys_.data();
    size_t finite = 0;
    int64_t zero = 0, nan = 0, inf[2] = {0, 0};
    uint32_t subnormal = 0;
    for (int64_t i = 0; i < v.numel; ++i) {
      const uint32_t bits = std::bit_cast<uint32_t>(load(v.data, i));
      const uint32_t mag = bits & kMagnitude;
      zero += mag == 0;
      nan += mag > kInfinity;
      inf[bits >> 31] += mag == kInfinity;
      subnormal |= mag - 1 < kSmallestNormal - 1;
      keys[finite] = sort_key(bits);
      finite += mag - 1 < kInfinity - 1;  // finite and non-zero: kept
    }
    finite_ = finite, zero_ = zero, nan_ = nan, inf_[0] = inf[0], inf_[1] = inf[1];
    return !subnormal && (sort_finite(), true);
  }

  int64_t nan() const { return nan_; }
  int64_t zero() const { return zero_; }
  int64_t inf(int sign) const { return inf_[sign]; }

  // f(bucket, count) for every non-empty bucket, in bucket order.
  template <class F>
  void for_each_bucket(F&& f) const {
    const uint32_t* const k = sorted_;
    const int64_t n = static_cast<int64_t>(finite_);
    for (int64_t i = 0; i < n;) {
      if (i == negative_ && zero_) f(int64_t{0}, zero_);
      const uint32_t key = bucket_key(k[i]);
      const int64_t from = i;
      while (++i < n && bucket_key(k[i]) == key) {
      }
      f(bucket_of_key(key), i - from);
    }
    if (negative_ == n && zero_) f(int64_t{0}, zero_);
  }

  // values[i] = the element of order ranks[i] among the non-NaN ones (ranks ascending), as
  // double; zeros as +0.0. Reorders elements within their buckets.
  void select(const int64_t* ranks, size_t count, double* values);

 private:
  // The order-preserving key of float bits: negative floats' bits inverted, positive floats'
  // sign bit set, so that keys compare as the floats do.
  static constexpr uint32_t kSignBit = 0x8000'0000u;
  static constexpr uint32_t order_key(uint32_t bits) {
    return bits ^ (static_cast<uint32_t>(static_cast<int32_t>(bits) >> 31) | kSignBit);
  }
  // What is sorted: a normal float's order key moved one step toward zero's (positive keys down,
  // negative ones up). A bucket holds its upper edge (magnitudes (k * 2^16, (k + 1) * 2^16] share
  // one), so the top 16 bits of a sort key are its bucket key, which every pass then reads with a
  // shift. Still order-preserving and one-to-one on normal floats (subnormals, the only keys it
  // could move across zero's, are declined), and positive ones keep the sign bit.
  static constexpr uint32_t sort_key(uint32_t bits) {
    const uint32_t key = order_key(bits);
    return key & kSignBit ? key - 1 : key + 1;
  }
  static constexpr uint32_t key_bits(uint32_t sort_key) {
    const uint32_t key = sort_key & kSignBit ? sort_key + 1 : sort_key - 1;
    return key & kSignBit ? key ^ kSignBit : ~key;
  }
  // The bucket key of a finite non-zero element's sort key, ordered as the buckets are:
  // [0, 0x8000) negative, [0x8000, 0x10000) positive.
  static constexpr int kBucketKeyShift = 16;
  static constexpr uint32_t bucket_key(uint32_t sort_key) { return sort_key >> kBucketKeyShift; }
  // A normal float32's bucket (bucket_grid.h) less its magnitude's bucket key: the exponent rebias
  // from float32 to float64.
  static constexpr int64_t kKeyToBucket = int64_t{1023 - 127} << kBucketMantissaBits;
  static constexpr uint32_t kPositiveBucketKeys = 0x8000;
  static int64_t bucket_of_key(uint32_t bucket_key) {
    if (bucket_key >= kPositiveBucketKeys)
      return static_cast<int64_t>(bucket_key - kPositiveBucketKeys + 1) + kKeyToBucket;
    return -(static_cast<int64_t>(kPositiveBucketKeys - bucket_key) + kKeyToBucket);
  }

  static constexpr uint32_t kMagnitude = 0x7FFF'FFFFu, kInfinity = 0x7F80'0000u, kSmallestNormal = 0x0080'0000u;

  // Sorts sorted_[0, finite_) by bucket key.
  void sort_finite();

  std::vector<uint32_t> keys_, scratch_;
  uint32_t* sorted_ = nullptr;      // keys_ or scratch_, whichever the sort ended in
  bool whole_keys_sorted_ = false;  // sorted_ by the whole key (few elements), not only by bucket
  size_t finite_ = 0;               // finite non-zero elements: sorted_[0, finite_)
  int64_t negative_ = 0, zero_ = 0, nan_ = 0, inf_[2] = {0, 0};
};

}  // namespace trialdb::distribution_kernel
