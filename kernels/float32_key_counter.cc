// Float32KeyCounter's counting pass and its clearing between values (float32_key_counter.h).
#include "kernels/float32_key_counter.h"

#include <bit>
#include <limits>
#include <utility>

#include "kernels/bucket_runs.h"

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
  // The range's keys stay apart in the two tables: take_histogram adds them as it reads them, and
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

namespace {

// The grid's buckets in an octave (bucket_grid.h): a run of the histogram never crosses one.
constexpr int64_t kOctaveBuckets = int64_t{1} << kBucketMantissaBits;
// The magnitude keys take_histogram reads at once: an octave holds whole groups of them, and a
// group that is all empty ends any run (it is more than kMaxRunGap empty buckets), so no run
// holds a position of a group that was not read.
constexpr uint32_t kTakeKeys = 8;
static_assert(kOctaveBuckets % kTakeKeys == 0 && kTakeKeys > kMaxRunGap);

// Adds the kTakeKeys counts at a and at b, zeroes them and writes the sums to out[0, kTakeKeys)
// (reversed when kReversed); returns the mask of the non-zero ones (bit i: out[i]), 0 with
// nothing written when all are 0, as most of a value's range of keys is.
template <bool kReversed>
unsigned take_group(uint32_t* a, uint32_t* b, uint32_t* out) {
#if defined(__SSE2__)
  static_assert(kTakeKeys == 8);
  const __m128i a0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i a1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + 4));
  const __m128i b0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b));
  const __m128i b1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + 4));
  const __m128i zero = _mm_setzero_si128();
  const __m128i any = _mm_or_si128(_mm_or_si128(a0, a1), _mm_or_si128(b0, b1));
  if (_mm_movemask_epi8(_mm_cmpeq_epi32(any, zero)) == 0xFFFF) return 0;
  __m128i s0 = _mm_add_epi32(a0, b0), s1 = _mm_add_epi32(a1, b1);
  if constexpr (kReversed) {
    const __m128i r0 = _mm_shuffle_epi32(s1, _MM_SHUFFLE(0, 1, 2, 3));
    s1 = _mm_shuffle_epi32(s0, _MM_SHUFFLE(0, 1, 2, 3));
    s0 = r0;
  }
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), s0);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 4), s1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(a), zero);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(a + 4), zero);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b), zero);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(b + 4), zero);
  // A byte per sum, 0xFF where it is 0.
  const __m128i empty = _mm_packs_epi16(_mm_packs_epi32(_mm_cmpeq_epi32(s0, zero), _mm_cmpeq_epi32(s1, zero)), zero);
  return ~static_cast<unsigned>(_mm_movemask_epi8(empty)) & ((1u << kTakeKeys) - 1);
#else
  uint32_t any = 0;
  for (uint32_t j = 0; j < kTakeKeys; ++j) any |= a[j] | b[j];
  if (!any) return 0;
  unsigned mask = 0;
  for (uint32_t i = 0; i < kTakeKeys; ++i) {
    const uint32_t j = kReversed ? kTakeKeys - 1 - i : i;
    out[i] = a[j] + b[j];
    mask |= static_cast<unsigned>(out[i] != 0) << i;
  }
  std::memset(a, 0, kTakeKeys * 4);
  std::memset(b, 0, kTakeKeys * 4);
  return mask;
#endif
}

// The non-empty positions of an octave, a bit each, and the runs they make: a run goes from a
// non-empty position to the last one before more than kMaxRunGap empty positions (or the
// octave's end), which is where BucketRunWriter (bucket_runs.h) breaks runs. The runs are found
// a word of positions at a time rather than bucket by bucket.
class OctaveRuns {
 public:
  // The group at positions [p, p + kTakeKeys) (p a multiple of kTakeKeys): take_group's mask.
  void add_group(int64_t p, unsigned mask) { bits_[p / kWordBits] |= uint64_t{mask} << (p % kWordBits); }
  // f(first, end) for each run [first, end) in position order.
  template <class F>
  void for_each_run(F&& f) const {
    const uint64_t empty[kWords] = {~bits_[0], ~bits_[1]};
    // Bit p: positions [p, p + kMaxRunGap] are all empty, those past the octave counting as empty.
    uint64_t gap[kWords] = {empty[0], empty[1]};
    for (int k = 1; k <= kMaxRunGap; ++k) {
      gap[0] &= empty[0] >> k | empty[1] << (kWordBits - k);
      gap[1] &= empty[1] >> k | kAllBits << (kWordBits - k);
    }
    for (int64_t first = first_set(bits_, 0); first < kOctaveBuckets;) {
      const int64_t end = first_set(gap, first);  // first is not empty, end - 1 is not either
      f(first, end);
      first = first_set(bits_, end);
    }
  }

 private:
  static constexpr int kWordBits = 64;
  static constexpr int kWords = kOctaveBuckets / kWordBits;
  static_assert(kWords == 2 && kTakeKeys <= kWordBits && kWordBits % kTakeKeys == 0 && kMaxRunGap < kWordBits);
  static constexpr uint64_t kAllBits = ~uint64_t{0};
  // The first set bit at or after from, kOctaveBuckets if none.
  static int64_t first_set(const uint64_t* w, int64_t from) {
    int64_t i = from / kWordBits;
    if (i == kWords) return kOctaveBuckets;
    uint64_t m = w[i] & kAllBits << (from % kWordBits);
    while (!m) {
      if (++i == kWords) return kOctaveBuckets;
      m = w[i];
    }
    return i * kWordBits + std::countr_zero(m);
  }
  uint64_t bits_[kWords] = {};
};

// An octave's keys are [key0 + 1, key0 + kOctaveBuckets]. Position p of a positive octave is key
// key0 + 1 + p; of a negative one (kReversed), whose buckets go from the largest magnitude down,
// key0 + kOctaveBuckets - p. The position of group g's first count (take_group's out):
constexpr auto kLastGroup = static_cast<uint32_t>(kOctaveBuckets - kTakeKeys + 1);  // from key0
template <bool kReversed>
int64_t group_position(uint32_t key0, uint32_t g) {
  return kReversed ? int64_t{key0} + kLastGroup - g : int64_t{g} - key0 - 1;
}

// Takes the groups [from, to] of an octave (take_group of a and b at each, into counts by
// position) and notes their non-empty positions in runs.
template <bool kReversed>
void take_octave(uint32_t* a, uint32_t* b, uint32_t key0, uint32_t from, uint32_t to, uint32_t* counts,
                 OctaveRuns* runs) {
  for (uint32_t g = from; g <= to; g += kTakeKeys) {
    const int64_t p = group_position<kReversed>(key0, g);
    runs->add_group(p, take_group<kReversed>(a + g, b + g, counts + p));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// take_group of two groups at once (positions [p, p + kPairKeys), the mask 16 bits), in AVX2:
// one test passes over 16 empty keys, as most of a value's range of keys is.
constexpr uint32_t kPairKeys = 2 * kTakeKeys;
template <bool kReversed>
__attribute__((target("avx2"))) unsigned take_pair_avx2(uint32_t* a, uint32_t* b, uint32_t* out) {
  static_assert(kTakeKeys == 8);
  const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 8));
  const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
  const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 8));
  const __m256i any = _mm256_or_si256(_mm256_or_si256(a0, a1), _mm256_or_si256(b0, b1));
  if (_mm256_testz_si256(any, any)) return 0;
  __m256i s0 = _mm256_add_epi32(a0, b0), s1 = _mm256_add_epi32(a1, b1);
  if constexpr (kReversed) {
    const __m256i reverse = _mm256_setr_epi32(7, 6, 5, 4, 3, 2, 1, 0);
    const __m256i r0 = _mm256_permutevar8x32_epi32(s1, reverse);
    s1 = _mm256_permutevar8x32_epi32(s0, reverse);
    s0 = r0;
  }
  const __m256i zero = _mm256_setzero_si256();
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), s0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), s1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(a), zero);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(a + 8), zero);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(b), zero);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(b + 8), zero);
  const auto empty0 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(s0, zero))));
  const auto empty1 = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(s1, zero))));
  return ~(empty0 | empty1 << kTakeKeys) & ((1u << kPairKeys) - 1);
}

// take_octave in pairs of groups that start at a multiple of kPairKeys positions (so that a
// pair's mask stays in one word of OctaveRuns), single groups at the ends.
template <bool kReversed>
__attribute__((target("avx2"))) void take_octave_avx2(uint32_t* a, uint32_t* b, uint32_t key0, uint32_t from,
                                                      uint32_t to, uint32_t* counts, OctaveRuns* runs) {
  static_assert(kOctaveBuckets % kPairKeys == 0);
  uint32_t g = from;
  if ((g - 1) % kPairKeys && g <= to) {
    take_octave<kReversed>(a, b, key0, g, g, counts, runs);
    g += kTakeKeys;
  }
  for (; g + kTakeKeys <= to; g += kPairKeys) {
    const int64_t p = group_position<kReversed>(key0, kReversed ? g + kTakeKeys : g);
    runs->add_group(p, take_pair_avx2<kReversed>(a + g, b + g, counts + p));
  }
  if (g <= to) take_octave<kReversed>(a, b, key0, g, g, counts, runs);
}
#endif

// take_octave in AVX2 where the processor has it (avx2).
template <bool kReversed>
void take_octave(bool avx2, uint32_t* a, uint32_t* b, uint32_t key0, uint32_t from, uint32_t to, uint32_t* counts,
                 OctaveRuns* runs) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (avx2) return take_octave_avx2<kReversed>(a, b, key0, from, to, counts, runs);
#else
  (void)avx2;
#endif
  take_octave<kReversed>(a, b, key0, from, to, counts, runs);
}

}  // namespace

Float32KeyCounter::TakenHistogram Float32KeyCounter::take_histogram(const int64_t* ranks, size_t k,
                                                                    HistogramBlobWriter* blob, ListedBucket* found) {
  constexpr int64_t kNoRank = std::numeric_limits<int64_t>::max();
  int64_t below = 0;  // the elements in the buckets read
  const int64_t* const ranks_end = ranks + k;
  int64_t next_rank = k ? *ranks : kNoRank;
  size_t found_count = 0;
  // The run of counts[0, n) at bucket first (value order) into the blob, and the buckets among
  // them that hold ranks into found (a run rarely holds one: its buckets are then looked at).
  auto add_run = [&](int64_t first, const uint32_t* counts, int64_t n) {
    uint32_t run_or = 0, run_sum = 0;  // a value's count fits (kMaxDistributionElements)
    for (int64_t i = 0; i < n; ++i) {
      run_or |= counts[i];
      run_sum += counts[i];
    }
    int64_t sum = run_sum;
    blob->add_run(first, counts, static_cast<size_t>(n), run_or);
    for (int64_t i = 0; below + sum > next_rank; ++i) {  // the run holds the next rank
      const int64_t before = below;
      below += counts[i];
      sum -= counts[i];
      if (below > next_rank) {
        found[found_count++] = {first + i, counts[i], before};
        while (ranks != ranks_end && *ranks < below) ++ranks;
        next_rank = ranks != ranks_end ? *ranks : kNoRank;
      }
    }
    below += sum;
  };
  uint32_t* const t = tables_.data();
  uint32_t* const other = t + kTableStride;
  // The range's magnitude keys in groups [g, g + kTakeKeys), g = 1 modulo kTakeKeys, as an
  // octave's are [128q + 1, 128q + 128]. The keys a group adds past the range hold nothing: the
  // range holds every non-zero finite element of either sign, and the groups stay within
  // [kSmallestNormalKey, kInfinityKey], where a counted value has nothing else.
  static_assert((kSmallestNormalKey - 1) % kTakeKeys == 0 && kInfinityKey % kTakeKeys == 0);
  static_assert(kKeyToBucket % kOctaveBuckets == 0, "a key's position in its octave is its bucket's");
  const bool nonzero = lo_ <= hi_;
  const auto first_group = static_cast<uint32_t>(lo_ - kKeyToBucket - 1) / kTakeKeys * kTakeKeys + 1;
  const auto last_group = static_cast<uint32_t>(hi_ - kKeyToBucket - 1) / kTakeKeys * kTakeKeys + 1;
  // An octave's groups are read, then its runs written; negative octaves first, from the largest
  // magnitudes down.
  const auto first_octave = static_cast<int64_t>((first_group - 1) / kOctaveBuckets);
  const auto last_octave = static_cast<int64_t>((last_group - 1) / kOctaveBuckets);
  uint32_t counts[kOctaveBuckets];  // by position, written for the non-empty groups only
  const bool avx2 = cpu_has_avx2();
  for (int64_t q = last_octave; nonzero && q >= first_octave; --q) {
    const auto key0 = static_cast<uint32_t>(q * kOctaveBuckets);
    const uint32_t from = std::max(first_group, key0 + 1), to = std::min(last_group, key0 + kLastGroup);
    OctaveRuns runs;
    take_octave<true>(avx2, t + kNegativeKeys, other + kNegativeKeys, key0, from, to, counts, &runs);
    const int64_t base = -(key0 + kOctaveBuckets + kKeyToBucket);  // position p is bucket base + p
    runs.for_each_run([&](int64_t first, int64_t end) { add_run(base + first, counts + first, end - first); });
  }
  const int64_t negative = below;
  if (zero_) {
    const auto zeros = static_cast<uint32_t>(zero_);
    add_run(0, &zeros, 1);
  }
  for (int64_t q = first_octave; nonzero && q <= last_octave; ++q) {
    const auto key0 = static_cast<uint32_t>(q * kOctaveBuckets);
    const uint32_t from = std::max(first_group, key0 + 1), to = std::min(last_group, key0 + kLastGroup);
    OctaveRuns runs;
    take_octave<false>(avx2, t, other, key0, from, to, counts, &runs);
    const int64_t base = key0 + 1 + kKeyToBucket;
    runs.for_each_run([&](int64_t first, int64_t end) { add_run(base + first, counts + first, end - first); });
  }
  taken_ = true;
  return {negative, found_count};
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

// bits_key of the eight float32 at p.
__attribute__((target("avx2"))) inline __m256i eight_keys(const uint8_t* p) {
  const __m256i bits = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i round = _mm256_set1_epi32(static_cast<int32_t>(Float32KeyCounter::kKeyRound));
  return _mm256_add_epi32(_mm256_srli_epi32(_mm256_add_epi32(bits, round), Float32KeyCounter::kKeyShift),
                          _mm256_srli_epi32(bits, 31));
}

// Lists the lanes of a group of eight whose bit of mask is set: their offsets (the group's are in
// *offsets, which moves on to the next group's) appended to hits[*n], left-packed without a branch.
__attribute__((target("avx2"))) inline void list_group(int mask, __m256i* offsets, int32_t* hits, int64_t* n) {
  const __m256i pack = _mm256_load_si256(reinterpret_cast<const __m256i*>(kLeftPack.lanes[mask]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(hits + *n), _mm256_permutevar8x32_epi32(*offsets, pack));
  *n += __builtin_popcount(static_cast<unsigned>(mask));
  *offsets = _mm256_add_epi32(*offsets, _mm256_set1_epi32(8));
}

// Keys compared: kCompared broadcast registers, the list padded with its first key. Two groups of
// eight keys are packed into one register of 16-bit keys, so that a compare covers sixteen
// elements. The packing saturates: the one key past 16 bits (kKeys - 1, a negative NaN's) reads as
// 0xFFFF, another NaN's key, and the wanted keys (finite buckets') are below both.
// The body is inlined into one function per instruction set (list_vector below): AVX2's 16
// registers spill some of twelve or sixteen wanted keys, AVX-512VL's 32 hold them all.
template <size_t kCompared>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) int64_t list_vector_body(const uint8_t* p, int64_t start,
                                                                                       int64_t len,
                                                                                       const uint32_t* keys,
                                                                                       size_t count, int32_t* hits) {
  __m256i wanted[kCompared];
  for (size_t k = 0; k < kCompared; ++k) wanted[k] = _mm256_set1_epi16(static_cast<int16_t>(keys[k < count ? k : 0]));
  // hit: 16-bit lanes of packed keys, 0xFFFF where wanted. _mm256_packus_epi32(a, b) packs within
  // 128-bit halves (a0-3 b0-3 | a4-7 b4-7), so unpacking each half's low (high) words to 32 bits
  // gives a's (b's) lanes in order.
  auto compare = [&wanted](__m256i packed) __attribute__((target("avx2"))) {
    __m256i hit = _mm256_cmpeq_epi16(packed, wanted[0]);
    for (size_t k = 1; k < kCompared; ++k) hit = _mm256_or_si256(hit, _mm256_cmpeq_epi16(packed, wanted[k]));
    return hit;
  };
  auto low_mask = [](__m256i hit) __attribute__((target("avx2"))) {
    return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_unpacklo_epi16(hit, hit)));
  };
  auto high_mask = [](__m256i hit) __attribute__((target("avx2"))) {
    return _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_unpackhi_epi16(hit, hit)));
  };
  __m256i offsets = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  int64_t n = 0, j = 0;
  for (; j + 16 <= len; j += 16) {
    const uint8_t* const at = p + 4 * (start + j);
    const __m256i hit = compare(_mm256_packus_epi32(eight_keys(at), eight_keys(at + 32)));
    list_group(low_mask(hit), &offsets, hits, &n);
    list_group(high_mask(hit), &offsets, hits, &n);
  }
  if (j + 8 <= len) {  // the second group's lanes packed from zeros are not read
    const __m256i hit = compare(_mm256_packus_epi32(eight_keys(p + 4 * (start + j)), _mm256_setzero_si256()));
    list_group(low_mask(hit), &offsets, hits, &n);
    j += 8;
  }
  for (; j < len; ++j) {
    uint32_t b;
    std::memcpy(&b, p + 4 * (start + j), 4);
    hits[n] = static_cast<int32_t>(j);
    n += std::find(keys, keys + count, Float32KeyCounter::bits_key(b)) != keys + count;
  }
  return n;
}

template <size_t kCompared>
__attribute__((target("avx2"))) int64_t list_avx2(const uint8_t* p, int64_t start, int64_t len, const uint32_t* keys,
                                                  size_t count, int32_t* hits) {
  return list_vector_body<kCompared>(p, start, len, keys, count, hits);
}

template <size_t kCompared>
__attribute__((target("avx2,avx512f,avx512vl"))) int64_t list_avx512vl(const uint8_t* p, int64_t start, int64_t len,
                                                                       const uint32_t* keys, size_t count,
                                                                       int32_t* hits) {
  return list_vector_body<kCompared>(p, start, len, keys, count, hits);
}

template <size_t kCompared>
int64_t list_vector(const uint8_t* p, int64_t start, int64_t len, const uint32_t* keys, size_t count, int32_t* hits) {
  return cpu_has_avx512vl() ? list_avx512vl<kCompared>(p, start, len, keys, count, hits)
                            : list_avx2<kCompared>(p, start, len, keys, count, hits);
}

}  // namespace

int64_t Float32KeyCounter::list_wanted_keys(const uint8_t* p, int64_t start, int64_t len, const uint32_t* keys,
                                            size_t count, int32_t* hits) {
  // list_vector compares 16-bit keys: every finite bucket's key is below the one saturated key.
  static_assert(kNegativeKeys + kInfinityKey < 0xFFFF && kKeys - 1 == 0x10000);
  // The fewest compares that hold the list, in steps of four.
  if (count <= 4) return list_vector<4>(p, start, len, keys, count, hits);
  if (count <= 8) return list_vector<8>(p, start, len, keys, count, hits);
  if (count <= 12) return list_vector<12>(p, start, len, keys, count, hits);
  return list_vector<kMaxComparedKeys>(p, start, len, keys, count, hits);
}
#else
int64_t Float32KeyCounter::list_wanted_keys(const uint8_t*, int64_t, int64_t, const uint32_t*, size_t, int32_t*) {
  return 0;
}
#endif

}  // namespace trialdb::distribution_kernel
