#include "schema/distribution.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "schema/bucket_grid.h"
#include "schema/bucket_runs.h"
#include "schema/percentile.h"

namespace trialdb {

namespace {

// Counting slots: sign << kSignShift | the magnitude's slot, which is its bucket for finite
// non-zero magnitudes and kInfinitySlot for Inf. Zeros and NaNs are counted in registers and
// incremented into rotating junk slots instead: a ReLU output is half zeros, and incrementing one
// slot for each would be a chain of dependent stores.
constexpr int kSignShift = 18;
constexpr int64_t kInfinitySlot = kMaxBucket + 1;
static_assert(kInfinitySlot < (int64_t{1} << kSignShift));
constexpr int64_t kJunkSlots = 8;
constexpr int64_t kJunkBase = int64_t{2} << kSignShift;
constexpr int64_t kBlock = 256;             // elements whose slots are computed before they are counted
// Order statistics selected in one pass over the elements (each wants at most one bucket; a
// bucket's ordinal is a byte).
constexpr size_t kMaxWantedBuckets = 128;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// What computing a block's slots learns besides them.
struct BlockStats {
  int64_t zero = 0, nan = 0;
  int64_t lo = kMaxBucket, hi = 1;   // range of the finite non-zero magnitudes' buckets
};

// The slots of elements [start, start + len) of p into slots[0, len). Branch-free: whether an
// element is zero, NaN or infinite is arithmetic, not a jump (half of a ReLU output is zeros).
template <class Load>
void compute_slots(const uint8_t* p, int64_t start, int64_t len, Load load, int32_t* slots, BlockStats* st) {
  for (int64_t j = 0; j < len; ++j) {
    const uint64_t bits = double_bits(static_cast<double>(load(p, start + j)));
    const uint64_t mag = bits & kMagnitudeMask;
    const int64_t s = static_cast<int64_t>((mag - 1) >> kBucketShift) + 1 + (mag == kInfinityBits);
    const bool junk = mag == 0 || mag > kInfinityBits;
    const bool bucketed = !junk && mag != kInfinityBits;
    st->zero += mag == 0;
    st->nan += mag > kInfinityBits;
    st->lo = std::min(st->lo, bucketed ? s : kMaxBucket);
    st->hi = std::max(st->hi, bucketed ? s : int64_t{1});
    slots[j] = static_cast<int32_t>(junk ? kJunkBase + (j & (kJunkSlots - 1)) : static_cast<int64_t>(bits >> 63) << kSignShift | s);
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// compute_slots for float32, eight elements at a time on the float32 bits: a normal float32's
// float64 bits are its own shifted by 29 with the exponent rebiased by kRebias, so its bucket is
// ((mag32 - 1) >> 16) + 1 + (kRebias << 7). A block holding a subnormal float32 (whose float64 is
// normal with another exponent) goes through the portable loop.
__attribute__((target("avx2"))) bool compute_slots_avx2_f32(const uint8_t* p, int64_t start, int64_t len,
                                                            int32_t* slots, BlockStats* st) {
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
  alignas(32) int32_t lanes[4][8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[0]), zeros);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[1]), nans);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[2]), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes[3]), hi);
  for (int l = 0; l < 8; ++l) {
    st->zero += lanes[0][l];
    st->nan += lanes[1][l];
    st->lo = std::min<int64_t>(st->lo, lanes[2][l]);
    st->hi = std::max<int64_t>(st->hi, lanes[3][l]);
  }
  auto load = [](const uint8_t* q, int64_t i) { float x; std::memcpy(&x, q + i * 4, 4); return x; };
  compute_slots(p, start + j, len - j, load, slots + j, st);
  return true;
}

bool has_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#else
bool compute_slots_avx2_f32(const uint8_t*, int64_t, int64_t, int32_t*, BlockStats*) { return false; }
bool has_avx2() { return false; }
#endif

// compute_slots through the AVX2 loop for float32 where the CPU has it.
template <class Load>
void block_slots(const TensorView& v, int64_t start, int64_t len, Load load, int32_t* slots, BlockStats* st) {
  if (v.dtype == DType::Float32 && has_avx2() && compute_slots_avx2_f32(v.data, start, len, slots, st)) return;
  compute_slots(v.data, start, len, load, slots, st);
}

// Calls f with an element loader of v's dtype. The loader returns float for dtypes a float holds
// exactly (so gathered elements take no more room than the value) and double otherwise.
template <class F>
bool with_loader(const TensorView& v, F&& f) {
  auto as = [](auto t) {
    using T = decltype(t);
    return [](const uint8_t* p, int64_t i) {
      T x;
      std::memcpy(&x, p + i * sizeof(T), sizeof(T));
      if constexpr (sizeof(T) <= 2 || std::is_same_v<T, float>) return static_cast<float>(x);
      else return static_cast<double>(x);
    };
  };
  switch (v.dtype) {
    case DType::Bool: f([](const uint8_t* p, int64_t i) { return p[i] ? 1.0f : 0.0f; }); return true;
    case DType::Int8: f(as(int8_t{})); return true;
    case DType::UInt8: f(as(uint8_t{})); return true;
    case DType::Int16: f(as(int16_t{})); return true;
    case DType::UInt16: f(as(uint16_t{})); return true;
    case DType::Int32: f(as(int32_t{})); return true;
    case DType::UInt32: f(as(uint32_t{})); return true;
    case DType::Int64: f(as(int64_t{})); return true;
    case DType::UInt64: f(as(uint64_t{})); return true;
    case DType::Float32: f(as(float{})); return true;
    case DType::Float64: f(as(double{})); return true;
    case DType::Float16:
      f([](const uint8_t* p, int64_t i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return half_to_float(h); });
      return true;
    case DType::BFloat16:
      f([](const uint8_t* p, int64_t i) { uint16_t h; std::memcpy(&h, p + 2 * i, 2); return bfloat16_to_float(h); });
      return true;
    default: return false;
  }
}

// Selects the elements at `positions` (ascending, distinct) of [first, last) into place.
template <class It>
void multi_select(It first, It last, It base, const int64_t* positions, size_t count) {
  if (count == 0 || first == last) return;
  const size_t mid = count / 2;
  const It nth = base + positions[mid];
  std::nth_element(first, nth, last);
  multi_select(first, nth, base, positions, mid);
  multi_select(nth + 1, last, base, positions + mid + 1, count - mid - 1);
}

// Appends the elements [start, start + len) of v whose slot is wanted to their bucket's range of
// buffer: wanted[slots[j]] is the bucket's ordinal (0: not wanted). Two ways, each the faster
// where it is used (bench/README.md): eight lookups OR-ed before one branch, as hits are rare...
template <class Slot, class Load, class Elem>
void gather_wanted_branching(const TensorView& v, int64_t start, int64_t len, const Slot* slots, const uint8_t* wanted,
                             Load load, int64_t* cursor, Elem* buffer) {
  int64_t j = 0;
  for (; j + 8 <= len; j += 8) {
    uint8_t any = 0;
    for (int q = 0; q < 8; ++q) any |= wanted[slots[j + q]];
    if (any)
      for (int q = 0; q < 8; ++q)
        if (const uint8_t b = wanted[slots[j + q]]) buffer[cursor[b]++] = load(v.data, start + j + q);
  }
  for (; j < len; ++j)
    if (const uint8_t b = wanted[slots[j]]) buffer[cursor[b]++] = load(v.data, start + j);
}

// ...or the block's hits listed without a branch first, then appended: in a large value many
// groups of eight hold a hit, and that branch is not predicted.
template <class Slot, class Load, class Elem>
void gather_wanted_listing(const TensorView& v, int64_t start, int64_t len, const Slot* slots, const uint8_t* wanted,
                           Load load, int64_t* cursor, Elem* buffer) {
  int32_t hits[kBlock];
  int64_t n = 0;
  for (int64_t j = 0; j < len; ++j) {
    hits[n] = static_cast<int32_t>(j);
    n += wanted[slots[j]] != 0;
  }
  for (int64_t h = 0; h < n; ++h) buffer[cursor[wanted[slots[hits[h]]]]++] = load(v.data, start + hits[h]);
}

// The counting pass and the gathering of wanted buckets' elements for any dtype, on slots (the
// bucket with its sign), with its counts kept between values of one thread (only the slots a
// value touched are cleared after it).
class BucketCounter {
 public:
  BucketCounter() : counts_(kJunkBase + kJunkSlots, 0), wanted_(kJunkBase + kJunkSlots, 0) {}

  template <class Load>
  void count(const TensorView& v, Load load) {
    uint32_t* const counts = counts_.data();
    int32_t slots[kBlock];
    BlockStats st;
    for (int64_t start = 0; start < v.numel; start += kBlock) {
      const int64_t len = std::min(kBlock, v.numel - start);
      block_slots(v, start, len, load, slots, &st);
      for (int64_t j = 0; j < len; ++j) ++counts[slots[j]];
    }
    lo_ = st.lo, hi_ = st.hi, zero_ = st.zero, nan_ = st.nan;
  }

  int64_t zero() const { return zero_; }
  int64_t nan() const { return nan_; }
  int64_t inf(int sign) const { return counts_[slot(sign, kInfinitySlot)]; }
  // Finite non-zero buckets are in [lo(), hi()] for either sign (empty when lo() > hi()).
  int64_t lo() const { return lo_; }
  int64_t hi() const { return hi_; }
  int64_t at(int sign, int64_t s) const { return counts_[slot(sign, s)]; }

  // Marks the bucket (sign, s) wanted as the ordinal-th; gather() appends its elements.
  void want(int sign, int64_t s, uint8_t ordinal) {
    wanted_[slot(sign, s)] = ordinal;
    wanted_slots_.push_back(slot(sign, s));
  }
  template <class Load, class Elem>
  void gather(const TensorView& v, Load load, int64_t* cursor, Elem* buffer) {
    int32_t slots[kBlock];
    BlockStats st;
    for (int64_t start = 0; start < v.numel; start += kBlock) {
      const int64_t len = std::min(kBlock, v.numel - start);
      block_slots(v, start, len, load, slots, &st);
      gather_wanted_branching(v, start, len, slots, wanted_.data(), load, cursor, buffer);
    }
  }
  void unwant() {
    for (const int64_t s : wanted_slots_) wanted_[s] = 0;
    wanted_slots_.clear();
  }

  // Clears what the last value touched.
  void clear() {
    for (int sign : {0, 1}) {
      const auto base = counts_.begin() + slot(sign, 0);
      if (lo_ <= hi_) std::fill(base + lo_, base + hi_ + 1, 0);
      base[kInfinitySlot] = 0;
    }
    std::fill(counts_.begin() + kJunkBase, counts_.end(), 0);
    lo_ = kMaxBucket, hi_ = 1, zero_ = nan_ = 0;
  }

 private:
  static int64_t slot(int sign, int64_t s) { return static_cast<int64_t>(sign) << kSignShift | s; }

  std::vector<uint32_t> counts_;
  std::vector<uint8_t> wanted_;          // the ordinal of the wanted bucket of a slot, 0 for none
  std::vector<int64_t> wanted_slots_;    // which they are
  int64_t lo_ = kMaxBucket, hi_ = 1, zero_ = 0, nan_ = 0;
};

// The same for a large float32 value, on keys that cost four integer operations per element:
// the float32 bits rounded up to their top 16 bits, which for a normal number is its bucket
// (sign, exponent, top 7 mantissa bits; rounded up because a bucket holds its upper edge) less a
// constant, plus a sign offset that keeps -0.0 apart from the largest NaN payloads. The counting
// pass is a plain histogram of keys in kCountTables interleaved tables (a ReLU output's zeros
// would otherwise be a chain of dependent increments of one counter); the classes of elements
// are read off the keys afterwards. Keys that hold a float32 subnormal, an infinity or a finite
// value in the infinity's key cannot tell those apart: a value with any is declined and counted
// by BucketCounter instead.
class Float32KeyCounter {
 public:
  // Below this many elements, clearing and merging the key tables costs more than it saves.
  static constexpr int64_t kMinElements = int64_t{1} << 19;

  Float32KeyCounter() : tables_(kCountTables * kTableStride, 0), wanted_(kKeys, 0) {}

  // Counts v (float32). False (and nothing kept) when v holds an element of an ambiguous key.
  bool count(const TensorView& v) {
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
  void unwant() {
    for (const uint32_t k : wanted_keys_) wanted_[k] = 0;
    wanted_keys_.clear();
  }

  // Clears the keys a counted value can have touched: zeros, NaNs and its range of buckets.
  void clear() {
    uint32_t* const t = tables_.data();
    for (const uint32_t base : {uint32_t{0}, kNegativeKeys}) {
      t[base] = 0;
      std::fill(t + base + kInfinityKey + 1, t + std::min(base + kLargestKey + 1, kKeys), 0);
      if (lo_ <= hi_) std::fill(t + key(base != 0, lo_), t + key(base != 0, hi_) + 1, 0);
    }
  }

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

// Every bucket of the counted value in value order: f(bucket, count) for the non-empty ones.
template <class Counter, class F>
void for_each_bucket(const Counter& c, F&& f) {
  for (int64_t s = c.hi(); s >= c.lo(); --s)
    if (const int64_t n = c.at(1, s)) f(-s, n);
  if (c.zero()) f(int64_t{0}, c.zero());
  for (int64_t s = c.lo(); s <= c.hi(); ++s)
    if (const int64_t n = c.at(0, s)) f(s, n);
}

// values[i] = the element of order ranks[i] among the counted value's non-NaN ones (ranks
// ascending, distinct, at most kMaxWantedBuckets). The elements of each bucket holding a wanted
// rank are gathered into a range of their own (their counts are known), and each rank is
// selected within its bucket's range.
template <class Counter, class Load>
void select_ranks(Counter& c, const TensorView& v, Load load, const int64_t* ranks, size_t k, double* values) {
  struct Wanted {
    int64_t begin, end;        // its range of the gathered elements
    size_t first_rank, ranks;  // which of ranks[] fall in it
  };
  std::vector<Wanted> buckets(1);   // ordinal 0: not wanted
  std::vector<int64_t> positions(k);
  int64_t below = 0, gathered = 0;
  size_t i = 0;
  auto exact = [&](int64_t n, double value) {   // a region whose elements are all `value`
    for (; i < k && ranks[i] < below + n; ++i) values[i] = value;
    below += n;
  };
  auto bucket = [&](int sign, int64_t s) {
    const int64_t n = c.at(sign, s);
    if (i < k && ranks[i] < below + n) {
      c.want(sign, s, static_cast<uint8_t>(buckets.size()));
      Wanted w{gathered, gathered + n, i, 0};
      for (; i < k && ranks[i] < below + n; ++i, ++w.ranks) positions[i] = gathered + ranks[i] - below;
      buckets.push_back(w);
      gathered += n;
    }
    below += n;
  };
  exact(c.inf(1), -kInf);
  for (int64_t s = c.hi(); s >= c.lo(); --s) bucket(1, s);
  exact(c.zero(), 0.0);
  for (int64_t s = c.lo(); s <= c.hi(); ++s) bucket(0, s);
  exact(c.inf(0), kInf);
  if (!gathered) return;
  using Elem = decltype(load(v.data, 0));
  std::unique_ptr<Elem[]> buffer(new Elem[static_cast<size_t>(gathered)]);
  int64_t cursor[kMaxWantedBuckets + 1];
  for (size_t b = 1; b < buckets.size(); ++b) cursor[b] = buckets[b].begin;
  c.gather(v, load, cursor, buffer.get());
  c.unwant();
  Elem* const first = buffer.get();
  for (size_t b = 1; b < buckets.size(); ++b) {
    const Wanted& w = buckets[b];
    multi_select(first + w.begin, first + w.end, first, positions.data() + w.first_rank, w.ranks);
    for (size_t r = w.first_rank; r < w.first_rank + w.ranks; ++r) values[r] = static_cast<double>(first[positions[r]]);
  }
}

// The percentiles ps[0, count) of the counted value: out[i].
template <class Counter, class Load>
void percentiles_of(Counter& c, const TensorView& v, Load load, const double* ps, size_t count, double* out) {
  const int64_t m = v.numel - c.nan();
  if (m == 0) {
    std::fill(out, out + count, kNaN);
    return;
  }
  std::vector<PercentilePosition> at(count);
  std::vector<int64_t> ranks;
  for (size_t i = 0; i < count; ++i) {
    at[i] = percentile_position(m, ps[i]);
    ranks.push_back(at[i].lower);
    ranks.push_back(at[i].upper);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  std::vector<double> values(ranks.size());
  for (size_t from = 0; from < ranks.size(); from += kMaxWantedBuckets)
    select_ranks(c, v, load, ranks.data() + from, std::min(kMaxWantedBuckets, ranks.size() - from), values.data() + from);
  auto value = [&](int64_t rank) { return values[std::lower_bound(ranks.begin(), ranks.end(), rank) - ranks.begin()]; };
  for (size_t i = 0; i < count; ++i) out[i] = percentile_blend(value(at[i].lower), value(at[i].upper), at[i].gamma);
}

// Each thread's counters, kept between values (a thread allocates the key tables when it first
// meets a large float32 value).
BucketCounter& thread_bucket_counter() {
  thread_local BucketCounter counter;
  return counter;
}
Float32KeyCounter& thread_key_counter() {
  thread_local Float32KeyCounter counter;
  return counter;
}

// Counts v with the counter that suits it and calls f(counter, load), then clears the counter.
// False for dtypes without an order and values over kMaxDistributionElements.
template <class F>
bool with_counted(const TensorView& v, F&& f) {
  if (!dtype_is_real(v.dtype) || v.numel > kMaxDistributionElements) return false;
  return with_loader(v, [&](auto load) {
    if (v.dtype == DType::Float32 && v.numel >= Float32KeyCounter::kMinElements) {
      Float32KeyCounter& keys = thread_key_counter();
      if (keys.count(v)) {
        f(keys, load);
        keys.clear();
        return;
      }
    }
    BucketCounter& buckets = thread_bucket_counter();
    buckets.count(v, load);
    f(buckets, load);
    buckets.clear();
  });
}

}  // namespace

bool compute_distribution(const TensorView& v, Distribution* out) {
  return with_counted(v, [&](auto& c, auto load) {
    out->nan = c.nan();
    out->zero = c.zero();
    out->pos_inf = c.inf(0);
    out->neg_inf = c.inf(1);
    out->negative = out->positive = 0;
    BucketRunWriter runs;
    for_each_bucket(c, [&](int64_t bucket, int64_t count) {
      if (bucket < 0) out->negative += count;
      if (bucket > 0) out->positive += count;
      runs.add(bucket, static_cast<uint64_t>(count));
    });
    out->histogram = runs.finish();
    percentiles_of(c, v, load, kDistributionPercents, kDistributionPercentiles, out->percentile);
  });
}

int64_t compute_percentiles(const TensorView& v, const double* ps, size_t count, double* out) {
  int64_t nan = -1;
  if (!with_counted(v, [&](auto& c, auto load) {
        nan = c.nan();
        percentiles_of(c, v, load, ps, count, out);
      }))
    return -1;
  return nan;
}

}  // namespace trialdb
