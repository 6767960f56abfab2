// BucketCounter's parts that are not templates: the AVX2 slot computation for float32 and
// float64 and the clearing between values (bucket_counter.h).
#include "kernels/bucket_counter.h"

#include <cstring>

#include "kernels/cpu_features.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace trialdb::distribution_kernel {

#if defined(__x86_64__) && defined(__GNUC__)
namespace {

// The end of a block in AVX2: its lanes' zero and NaN counts and bucket extremes (Lane-wide
// integers) added to *st, then the portable loop over the elements [done, len) the vectors left.
template <class Lane, class Element>
__attribute__((target("avx2"))) void finish_block(__m256i zeros, __m256i nans, __m256i lo, __m256i hi, const uint8_t* p,
                                                  int64_t start, int64_t done, int64_t len, int32_t* slots,
                                                  BlockStats* st) {
  constexpr int kLanes = 32 / sizeof(Lane);
  alignas(32) Lane lanes[4][kLanes];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[0]), zeros);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[1]), nans);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[2]), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[3]), hi);
  for (int l = 0; l < kLanes; ++l) {
    st->zero += lanes[0][l];
    st->nan += lanes[1][l];
    st->lo = std::min<int64_t>(st->lo, lanes[2][l]);
    st->hi = std::max<int64_t>(st->hi, lanes[3][l]);
  }
  auto load = [](const uint8_t* q, int64_t i) {
    Element x;
    std::memcpy(&x, q + i * static_cast<int64_t>(sizeof x), sizeof x);
    return x;
  };
  compute_slots(p, start + done, len - done, load, slots + done, st);
}

// Eight elements at a time on the float32 bits: a normal float32's float64 bits are its own
// shifted by 29 with the exponent rebiased by kRebias, so its bucket is
// ((mag32 - 1) >> 16) + 1 + (kRebias << 7). A block holding a subnormal float32 (whose float64
// is normal with another exponent) is declined.
__attribute__((target("avx2"))) bool slots_avx2(const uint8_t* p, int64_t start, int64_t len, int32_t* slots,
                                                BlockStats* st) {
  constexpr int kFloatShift = 23 - kBucketMantissaBits;
  constexpr int32_t kRebias = 1023 - 127;
  constexpr int32_t kFloatInf = 0x7F800000, kSmallestNormal = 0x00800000;
  const __m256i mag_mask = _mm256_set1_epi32(0x7FFFFFFF), inf = _mm256_set1_epi32(kFloatInf);
  const __m256i smallest_normal = _mm256_set1_epi32(kSmallestNormal);
  const __m256i one = _mm256_set1_epi32(1), zero = _mm256_setzero_si256();
  const __m256i bias = _mm256_set1_epi32(1 + (kRebias << kBucketMantissaBits));
  const __m256i inf_slot = _mm256_set1_epi32(static_cast<int32_t>(kInfinitySlot));
  const __m256i no_lo = _mm256_set1_epi32(static_cast<int32_t>(kMaxBucket)), no_hi = one;
  const __m256i junk_slots = _mm256_setr_epi32(kJunkBase, kJunkBase + 1, kJunkBase + 2, kJunkBase + 3, kJunkBase + 4,
                                               kJunkBase + 5, kJunkBase + 6, kJunkBase + 7);
  __m256i zeros = zero, nans = zero, lo = no_lo, hi = no_hi, subnormal = zero;
  int64_t j = 0;
  for (; j + 8 <= len; j += 8) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * (start + j)));
    const __m256i mag = _mm256_and_si256(bits, mag_mask);
    const __m256i is_zero = _mm256_cmpeq_epi32(mag, zero);
    const __m256i is_inf = _mm256_cmpeq_epi32(mag, inf);
    const __m256i is_nan = _mm256_cmpgt_epi32(mag, inf);
    subnormal = _mm256_or_si256(subnormal, _mm256_andnot_si256(is_zero, _mm256_cmpgt_epi32(smallest_normal, mag)));
    const __m256i bucket = _mm256_add_epi32(_mm256_srli_epi32(_mm256_sub_epi32(mag, one), kFloatShift), bias);
    const __m256i junk = _mm256_or_si256(is_zero, is_nan);
    const __m256i unbucketed = _mm256_or_si256(junk, is_inf);
    zeros = _mm256_sub_epi32(zeros, is_zero);
    nans = _mm256_sub_epi32(nans, is_nan);
    lo = _mm256_min_epi32(lo, _mm256_blendv_epi8(bucket, no_lo, unbucketed));
    hi = _mm256_max_epi32(hi, _mm256_blendv_epi8(bucket, no_hi, unbucketed));
    const __m256i s = _mm256_blendv_epi8(bucket, inf_slot, is_inf);
    const __m256i slot = _mm256_or_si256(_mm256_slli_epi32(_mm256_srli_epi32(bits, 31), kSignShift), s);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(slots + j), _mm256_blendv_epi8(slot, junk_slots, junk));
  }
  if (!_mm256_testz_si256(subnormal, subnormal)) return false;
  finish_block<int32_t, float>(zeros, nans, lo, hi, p, start, j, len, slots, st);
  return true;
}

// Four float64 elements at a time, the portable loop's arithmetic on 64-bit lanes (float64 has no
// subnormal to decline: its buckets are computed from the bits alike). AVX2 has no 64-bit min or
// max: a compare and a blend stand in.
__attribute__((target("avx2"))) void slots_float64_avx2(const uint8_t* p, int64_t start, int64_t len, int32_t* slots,
                                                        BlockStats* st) {
  const __m256i mag_mask = _mm256_set1_epi64x(static_cast<int64_t>(kMagnitudeMask));
  const __m256i inf = _mm256_set1_epi64x(static_cast<int64_t>(kInfinityBits));
  const __m256i one = _mm256_set1_epi64x(1), zero = _mm256_setzero_si256();
  const __m256i inf_slot = _mm256_set1_epi64x(kInfinitySlot);
  const __m256i no_lo = _mm256_set1_epi64x(kMaxBucket), no_hi = one;
  const __m256i even_lanes = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);  // a 64-bit lane's low half
  __m256i zeros = zero, nans = zero, lo = no_lo, hi = no_hi;
  int64_t j = 0;
  for (; j + 4 <= len; j += 4) {
    const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 8 * (start + j)));
    const __m256i mag = _mm256_and_si256(bits, mag_mask);
    const __m256i is_zero = _mm256_cmpeq_epi64(mag, zero);
    const __m256i is_inf = _mm256_cmpeq_epi64(mag, inf);
    const __m256i is_nan = _mm256_cmpgt_epi64(mag, inf);
    const __m256i bucket = _mm256_add_epi64(_mm256_srli_epi64(_mm256_sub_epi64(mag, one), kBucketShift), one);
    const __m256i junk = _mm256_or_si256(is_zero, is_nan);
    const __m256i unbucketed = _mm256_or_si256(junk, is_inf);
    zeros = _mm256_sub_epi64(zeros, is_zero);
    nans = _mm256_sub_epi64(nans, is_nan);
    const __m256i for_lo = _mm256_blendv_epi8(bucket, no_lo, unbucketed);
    const __m256i for_hi = _mm256_blendv_epi8(bucket, no_hi, unbucketed);
    lo = _mm256_blendv_epi8(lo, for_lo, _mm256_cmpgt_epi64(lo, for_lo));
    hi = _mm256_blendv_epi8(hi, for_hi, _mm256_cmpgt_epi64(for_hi, hi));
    const __m256i s = _mm256_blendv_epi8(bucket, inf_slot, is_inf);
    const __m256i slot = _mm256_or_si256(_mm256_slli_epi64(_mm256_srli_epi64(bits, 63), kSignShift), s);
    const __m256i junk_slot =
        _mm256_set_epi64x(kJunkBase + ((j + 3) & (kJunkSlots - 1)), kJunkBase + ((j + 2) & (kJunkSlots - 1)),
                          kJunkBase + ((j + 1) & (kJunkSlots - 1)), kJunkBase + (j & (kJunkSlots - 1)));
    const __m256i wide = _mm256_blendv_epi8(slot, junk_slot, junk);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(slots + j),
                     _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(wide, even_lanes)));
  }
  finish_block<int64_t, double>(zeros, nans, lo, hi, p, start, j, len, slots, st);
}

}  // namespace

bool compute_slots_float64_avx2(const uint8_t* p, int64_t start, int64_t len, int32_t* slots, BlockStats* st) {
  if (!cpu_has_avx2()) return false;
  slots_float64_avx2(p, start, len, slots, st);
  return true;
}

bool compute_slots_float32_avx2(const uint8_t* p, int64_t start, int64_t len, int32_t* slots, BlockStats* st) {
  return cpu_has_avx2() && slots_avx2(p, start, len, slots, st);
}
#else
bool compute_slots_float32_avx2(const uint8_t*, int64_t, int64_t, int32_t*, BlockStats*) { return false; }
bool compute_slots_float64_avx2(const uint8_t*, int64_t, int64_t, int32_t*, BlockStats*) { return false; }
#endif

void BucketCounter::unwant() {
  for (const int64_t s : wanted_slots_) wanted_[s] = 0;
  wanted_slots_.clear();
}

void BucketCounter::clear() {
  for (int sign : {0, 1}) {
    const auto base = counts_.begin() + slot(sign, 0);
    if (lo_ <= hi_) std::fill(base + lo_, base + hi_ + 1, 0);
    base[kInfinitySlot] = 0;
  }
  std::fill(counts_.begin() + kJunkBase, counts_.end(), 0);
  lo_ = kMaxBucket, hi_ = 1, zero_ = nan_ = 0;
  slots_kept_ = false;
}

}  // namespace trialdb::distribution_kernel
