// Float32KeyCounter's counting pass and its clearing between values (float32_key_counter.h).
#include "kernels/float32_key_counter.h"

#include <bit>
#include <limits>
#include <utility>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace trialdb::distribution_kernel {

namespace {

// The smallest and largest non-NaN float32 of a stream of blocks, in SSE2 compares (every x86-64
// has them): the compiler leaves a running minimum scalar, as it may not reorder it.
class Extremes {
 public:
  void add(const uint8_t* p, int64_t len) {
    int64_t j = 0;
#if defined(__SSE2__)
    for (; j + 4 * kChains <= len; j += 4 * kChains)
      for (int c = 0; c < kChains; ++c) {
        const __m128 x = _mm_loadu_ps(reinterpret_cast<const float*>(p + 4 * (j + 4 * c)));
        lo4_[c] = _mm_min_ps(x, lo4_[c]);  // the second operand where x is NaN
        hi4_[c] = _mm_max_ps(x, hi4_[c]);
      }
#endif
    for (; j < len; ++j) {
      float x;
      std::memcpy(&x, p + 4 * j, 4);
      lo_ = x < lo_ ? x : lo_;
      hi_ = x > hi_ ? x : hi_;
    }
  }
  void finish(float* lo, float* hi) const {
    *lo = lo_, *hi = hi_;
#if defined(__SSE2__)
    for (int c = 0; c < kChains; ++c) {
      float lanes[2][4];
      _mm_storeu_ps(lanes[0], lo4_[c]);
      _mm_storeu_ps(lanes[1], hi4_[c]);
      for (int l = 0; l < 4; ++l) {
        *lo = std::min(*lo, lanes[0][l]);
        *hi = std::max(*hi, lanes[1][l]);
      }
    }
#endif
  }

 private:
  float lo_ = std::numeric_limits<float>::infinity(), hi_ = -std::numeric_limits<float>::infinity();
#if defined(__SSE2__)
  static constexpr int kChains = 4;  // independent compares, so their latency overlaps
  __m128 lo4_[kChains] = {_mm_set1_ps(lo_), _mm_set1_ps(lo_), _mm_set1_ps(lo_), _mm_set1_ps(lo_)};
  __m128 hi4_[kChains] = {_mm_set1_ps(hi_), _mm_set1_ps(hi_), _mm_set1_ps(hi_), _mm_set1_ps(hi_)};
#endif
};

}  // namespace

bool Float32KeyCounter::count(const TensorView& v) {
  uint32_t* const t = tables_.data();
  uint32_t keys[kBlock];
  Extremes extremes;
  for (int64_t start = 0; start < v.numel; start += kBlock) {
    const int64_t len = std::min(kBlock, v.numel - start);
    block_keys(v, start, len, keys);
    extremes.add(v.data + 4 * start, len);
    int64_t j = 0;
    for (; j + kCountTables <= len; j += kCountTables)
      for (int q = 0; q < kCountTables; ++q) ++t[q * kTableStride + keys[j + q]];
    for (; j < len; ++j) ++t[keys[j]];
  }
  float min, max;
  extremes.finish(&min, &max);
  return finish_count(min, max);
}

bool Float32KeyCounter::finish_count(float min, float max) {
  uint32_t* const t = tables_.data();
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
  min_ = min, max_ = max;
  uint32_t lo_key = kSmallestNormalKey, hi_key = kInfinityKey - 1;
  while (lo_key <= hi_key && !t[lo_key] && !t[kNegativeKeys + lo_key]) ++lo_key;
  while (hi_key >= lo_key && !t[hi_key] && !t[kNegativeKeys + hi_key]) --hi_key;
  lo_ = lo_key + kKeyToBucket, hi_ = hi_key + kKeyToBucket;
  return true;
}

bool Float32KeyCounter::finish_count(float min, float max, int64_t nan, float min_nonzero_magnitude,
                                     float max_magnitude) {
  static_assert(kCountTables == 2);
  const uint32_t lo_key = bits_key(std::bit_cast<uint32_t>(min_nonzero_magnitude));
  const uint32_t hi_key = bits_key(std::bit_cast<uint32_t>(max_magnitude));
  const bool nonzero = lo_key <= hi_key;
  if (nan || (nonzero && (lo_key < kSmallestNormalKey || hi_key >= kInfinityKey))) return finish_count(min, max);
  uint32_t* const t = tables_.data();
  uint32_t* const other = t + kTableStride;
  auto merge = [&](uint32_t from, uint32_t to) {
    for (uint32_t k = from; k <= to; ++k) {
      t[k] += other[k];
      other[k] = 0;
    }
  };
  merge(0, 0);
  merge(kNegativeKeys, kNegativeKeys);
  // The range's keys stay apart in the two tables: take_buckets adds them as it reads them, and
  // a reader of counts() merges them first (merge_range).
  split_ = true;
  zero_ = t[0] + t[kNegativeKeys];
  nan_ = 0;
  min_ = min, max_ = max;
  // The extreme magnitudes' keys hold an element of one sign or the other: the range is exact.
  lo_ = (nonzero ? lo_key : kSmallestNormalKey) + kKeyToBucket;
  hi_ = (nonzero ? hi_key : kSmallestNormalKey - 1) + kKeyToBucket;
  return true;
}

void Float32KeyCounter::unwant() {
  for (const uint32_t k : wanted_keys_) wanted_[k] = 0;
  wanted_keys_.clear();
}

void Float32KeyCounter::merge_range() {
  if (!split_) return;
  uint32_t* const t = tables_.data();
  uint32_t* const other = t + kTableStride;
  for (const int sign : {0, 1})
    for (uint32_t k = key(sign, lo_); lo_ <= hi_ && k <= key(sign, hi_); ++k) {
      t[k] += other[k];
      other[k] = 0;
    }
  split_ = false;
}

void Float32KeyCounter::clear() {
  uint32_t* const t = tables_.data();
  for (const uint32_t base : {uint32_t{0}, kNegativeKeys}) {
    t[base] = 0;
    // NaNs' keys were counted only where the value held one (the ranged finish_count merges none).
    if (nan_) std::fill(t + base + kInfinityKey + 1, t + std::min(base + kLargestKey + 1, kKeys), 0);
    if (lo_ <= hi_ && !taken_)
      for (uint32_t* table : {t, split_ ? t + kTableStride : nullptr})
        if (table) std::fill(table + key(base != 0, lo_), table + key(base != 0, hi_) + 1, 0);
  }
  nan_ = 0;
  split_ = taken_ = false;
}

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// The left-packing permutation of each 8-bit mask: the lanes whose bit is set, in order.
struct LeftPack {
  alignas(32) int32_t lanes[256][8];
  LeftPack() {
    for (int mask = 0; mask < 256; ++mask) {
      int n = 0;
      for (int lane = 0; lane < 8; ++lane)
        if (mask >> lane & 1) lanes[mask][n++] = lane;
      while (n < 8) lanes[mask][n++] = 0;
    }
  }
};
const LeftPack kLeftPack;

// Keys compared: kCompared broadcast registers, the list padded with its first key.
template <size_t kCompared>
__attribute__((target("avx2"))) int64_t list_avx2(const uint8_t* p, int64_t start, int64_t len, const uint32_t* keys,
                                                  size_t count, int32_t* hits) {
  __m256i wanted[kCompared];
  for (size_t k = 0; k < kCompared; ++k) wanted[k] = _mm256_set1_epi32(static_cast<int32_t>(keys[k < count ? k : 0]));
  const __m256i round = _mm256_set1_epi32(static_cast<int32_t>(Float32KeyCounter::kKeyRound));
  const __m256i eight = _mm256_set1_epi32(8);
  __m256i offsets = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int64_t n = 0, j = 0;
  for (; j + 8 <= len; j += 8) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * (start + j)));
    const __m256i key = _mm256_add_epi32(_mm256_srli_epi32(_mm256_add_epi32(bits, round), Float32KeyCounter::kKeyShift),
                                         _mm256_srli_epi32(bits, 31));  // bits_key, eight at a time
    __m256i hit = _mm256_cmpeq_epi32(key, wanted[0]);
    for (size_t k = 1; k < kCompared; ++k) hit = _mm256_or_si256(hit, _mm256_cmpeq_epi32(key, wanted[k]));
    const int mask = _mm256_movemask_ps(_mm256_castsi256_ps(hit));
    const __m256i pack = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLeftPack.lanes[mask]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(hits + n), _mm256_permutevar8x32_epi32(offsets, pack));
    n += __builtin_popcount(static_cast<unsigned>(mask));
    offsets = _mm256_add_epi32(offsets, eight);
  }
  for (; j < len; ++j) {
    uint32_t b;
    std::memcpy(&b, p + 4 * (start + j), 4);
    hits[n] = static_cast<int32_t>(j);
    n += std::find(keys, keys + count, Float32KeyCounter::bits_key(b)) != keys + count;
  }
  return n;
}

}  // namespace

bool Float32KeyCounter::has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

int64_t Float32KeyCounter::list_wanted_keys(const uint8_t* p, int64_t start, int64_t len, const uint32_t* keys,
                                            size_t count, int32_t* hits) {
  // The fewest compares that hold the list, in steps of four.
  if (count <= 4) return list_avx2<4>(p, start, len, keys, count, hits);
  if (count <= 8) return list_avx2<8>(p, start, len, keys, count, hits);
  return list_avx2<kMaxComparedKeys>(p, start, len, keys, count, hits);
}
#else
bool Float32KeyCounter::has_avx2() { return false; }
int64_t Float32KeyCounter::list_wanted_keys(const uint8_t*, int64_t, int64_t, const uint32_t*, size_t, int32_t*) {
  return 0;
}
#endif

}  // namespace trialdb::distribution_kernel
