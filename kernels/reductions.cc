#include "kernels/reductions.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/cpu_features.h"
#include "kernels/element_loader.h"
#include "kernels/float32_key_counter.h"
#include "kernels/float32_widening.h"
#include "kernels/reduction_lanes.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace trialdb {

namespace {
namespace lanes = reduction_lanes;
constexpr const char* kNames[kRedCount] = {"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"};

// Accumulators for one pass, the sums in the lanes of reduction_lanes.h.
struct Acc {
  double sum[lanes::kLanes] = {}, sabs[lanes::kLanes] = {}, ss[lanes::kLanes] = {}, d[lanes::kLanes] = {},
         dd[lanes::kLanes] = {}, da[lanes::kLanes] = {}, dda[lanes::kLanes] = {};
  double mn = std::numeric_limits<double>::infinity(), mx = -std::numeric_limits<double>::infinity();
  double mna = std::numeric_limits<double>::infinity(), mxa = 0;
  double prod = 1, proda = 1;
  int64_t nan = 0;
  // The smallest non-zero |x|, kept by the pass that counts keys only (their range, for
  // Float32KeyCounter::finish_count).
  double min_nonzero_abs = std::numeric_limits<double>::infinity();
};

// One element into lane l. The same statements, in the same order, for every element: reduce_one
// (reduce_one.h), adding in the same lanes, reproduces these sums bit for bit.
inline void add(Acc* a, int l, double x, double shift, double shift_abs) {
  double ax = std::fabs(x);
  a->sum[l] += x;
  a->sabs[l] += ax;
  a->ss[l] += x * x;
  double dx = x - shift, dax = ax - shift_abs;
  a->d[l] += dx;
  a->dd[l] += dx * dx;
  a->da[l] += dax;
  a->dda[l] += dax * dax;
  a->mn = x < a->mn ? x : a->mn;
  a->mx = x > a->mx ? x : a->mx;
  a->mna = ax < a->mna ? ax : a->mna;
  a->mxa = ax > a->mxa ? ax : a->mxa;
  a->prod *= x;
  a->proda *= ax;
  a->nan += (x != x);
}

// Elements [start, n), read by a loader of element_loader.h: start is where a vector loop left
// off (0 without one).
template <class Loader>
void accumulate(const uint8_t* p, int64_t n, double shift, double shift_abs, Acc* a, int64_t start = 0) {
  lanes::for_each<Loader>(
      p, n, [&](int l, double x) { add(a, l, x, shift, shift_abs); }, start);
}

#if defined(__x86_64__) && defined(__GNUC__)
// The first zero (0.0 or -0.0) of elements [0, n), or 0.0 when there is none.
template <class T>
double first_zero_of(const uint8_t* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (const double x = LoadAs<T>::load(p, i); x == 0) return x;
  return 0;
}

// AVX2 form of accumulate's 4-element loop for float32 and float64, the ingest's hot loop: the
// portable loop compiles to scalar SSE2 code (bench/README.md). Every result is bit for bit the
// portable loop's (no FMA: the kernels compile with -ffp-contract=off, kernels/CMakeLists.txt):
// - each of the seven lane sums is one register whose lane l takes elements 4k + l, as add() does;
// - min and max are per lane too. x < m ? x : m is exactly _mm256_min_pd(x, m), and equal values
//   have equal bits except 0.0 and -0.0, so only a zero result needs the order: the sequential
//   scan keeps the first zero, which first_zero_of() finds;
// - the products are sequential (one element at a time) until they saturate, which for most
//   tensors happens within a few hundred elements: once |prod| is 0 it stays 0 for finite
//   elements, once it is Inf it stays Inf for non-zero finite ones, and only the sign still
//   changes, by the XOR of the elements' sign bits (a NaN product stays NaN, and its sign does
//   not matter). A block of four that breaks this (an Inf after 0, a zero after Inf, a NaN) goes
//   through the sequential products again.
// With a key counter (float32 only), each element's key is also counted into it (the
// distribution's counting pass, float32_key_counter.h), so that one read of the value serves both.
// Returns where the tail starts. The body is inlined into one function per instruction set
// (accumulate_vector below): with AVX-512VL's 32 registers its fifteen accumulators and constants
// stay in registers, where AVX2's 16 spill a dozen of them to the stack in the loop.
template <class T, bool kCountKeys>
[[gnu::always_inline]] inline __attribute__((target("avx2"))) int64_t accumulate_vector_body(
    const uint8_t* p, int64_t n, double shift, double shift_abs, Acc* a, distribution_kernel::Float32KeyCounter* keys) {
  using distribution_kernel::Float32KeyCounter;
  static_assert(!kCountKeys || (sizeof(T) == 4 && Float32KeyCounter::kCountTables == 2));
  uint32_t* const even = kCountKeys ? keys->count_table(0) : nullptr;
  uint32_t* const odd = kCountKeys ? keys->count_table(1) : nullptr;
  const __m128i key_round = _mm_set1_epi32(static_cast<int32_t>(Float32KeyCounter::kKeyRound));
  const __m256d vshift = _mm256_set1_pd(shift), vshift_abs = _mm256_set1_pd(shift_abs);
  const __m256d sign = _mm256_set1_pd(-0.0), inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  __m256d sum = _mm256_setzero_pd(), sabs = sum, ss = sum, d = sum, dd = sum, da = sum, dda = sum;
  __m256i nan = _mm256_setzero_si256();
  __m256d mn = _mm256_set1_pd(a->mn), mx = _mm256_set1_pd(a->mx), mna = _mm256_set1_pd(a->mna),
          mxa = _mm256_set1_pd(a->mxa), mnza = _mm256_set1_pd(a->min_nonzero_abs);
  double prod = a->prod, proda = a->proda;
  // While saturated: signs XORs the skipped elements' bits, and a block may skip the products
  // when every |x| is in (floor, Inf): floor -1 once |prod| is 0, 0 once it is Inf.
  bool saturated = false;
  __m256d floor = _mm256_setzero_pd(), signs = _mm256_setzero_pd();
  const int64_t end = n & ~int64_t{3};
  for (int64_t i = 0; i < end; i += 4) {
    __m256d x;
    if constexpr (sizeof(T) == 4) {
      const __m128 xf = _mm_loadu_ps(reinterpret_cast<const float*>(p) + i);
      if constexpr (kCountKeys) {  // Float32KeyCounter::bits_key, four at a time
        const __m128i bits = _mm_castps_si128(xf);
        alignas(16) uint32_t k[4];
        _mm_store_si128(reinterpret_cast<__m128i*>(k),
                        _mm_add_epi32(_mm_srli_epi32(_mm_add_epi32(bits, key_round), Float32KeyCounter::kKeyShift),
                                      _mm_srli_epi32(bits, 31)));
        ++even[k[0]], ++odd[k[1]], ++even[k[2]], ++odd[k[3]];
      }
      x = _mm256_cvtps_pd(xf);
    } else {
      x = _mm256_loadu_pd(reinterpret_cast<const double*>(p) + i);
    }
    const __m256d ax = _mm256_andnot_pd(sign, x);
    sum = _mm256_add_pd(sum, x);
    sabs = _mm256_add_pd(sabs, ax);
    ss = _mm256_add_pd(ss, _mm256_mul_pd(x, x));
    const __m256d dx = _mm256_sub_pd(x, vshift), dax = _mm256_sub_pd(ax, vshift_abs);
    d = _mm256_add_pd(d, dx);
    dd = _mm256_add_pd(dd, _mm256_mul_pd(dx, dx));
    da = _mm256_add_pd(da, dax);
    dda = _mm256_add_pd(dda, _mm256_mul_pd(dax, dax));
    nan = _mm256_sub_epi64(nan, _mm256_castpd_si256(_mm256_cmp_pd(x, x, _CMP_UNORD_Q)));  // -1 per NaN
    mn = _mm256_min_pd(x, mn);
    mx = _mm256_max_pd(x, mx);
    mna = _mm256_min_pd(ax, mna);
    mxa = _mm256_max_pd(ax, mxa);
    if constexpr (kCountKeys)  // a zero counts as +Inf; a NaN is passed over as by the others
      mnza = _mm256_min_pd(_mm256_blendv_pd(ax, inf, _mm256_cmp_pd(ax, _mm256_setzero_pd(), _CMP_EQ_OQ)), mnza);
    if (saturated) {
      const __m256d keeps = _mm256_and_pd(_mm256_cmp_pd(ax, floor, _CMP_GT_OQ), _mm256_cmp_pd(ax, inf, _CMP_LT_OQ));
      if (_mm256_movemask_pd(keeps) == 0xF) {
        signs = _mm256_xor_pd(signs, x);
        continue;
      }
      if (__builtin_popcount(_mm256_movemask_pd(signs)) & 1) prod = -prod;
      signs = _mm256_setzero_pd();
    }
    alignas(32) double e[4];
    _mm256_store_pd(e, x);
    for (int l = 0; l < 4; ++l) {
      prod *= e[l];
      proda *= std::fabs(e[l]);
    }
    saturated = !(proda > 0 && proda < std::numeric_limits<double>::infinity());  // 0, Inf or NaN
    floor = _mm256_set1_pd(std::isinf(proda) ? 0.0 : -1.0);
  }
  if (__builtin_popcount(_mm256_movemask_pd(signs)) & 1) prod = -prod;
  _mm256_storeu_pd(a->sum, sum);
  _mm256_storeu_pd(a->sabs, sabs);
  _mm256_storeu_pd(a->ss, ss);
  _mm256_storeu_pd(a->d, d);
  _mm256_storeu_pd(a->dd, dd);
  _mm256_storeu_pd(a->da, da);
  _mm256_storeu_pd(a->dda, dda);
  alignas(32) int64_t nans[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(nans), nan);
  a->nan = nans[0] + nans[1] + nans[2] + nans[3];
  alignas(32) double lanes[5][4];
  _mm256_store_pd(lanes[0], mn);
  _mm256_store_pd(lanes[1], mx);
  _mm256_store_pd(lanes[2], mna);
  _mm256_store_pd(lanes[3], mxa);
  _mm256_store_pd(lanes[4], mnza);
  for (int l = 0; l < 4; ++l) {
    a->mn = lanes[0][l] < a->mn ? lanes[0][l] : a->mn;
    a->mx = lanes[1][l] > a->mx ? lanes[1][l] : a->mx;
    a->mna = lanes[2][l] < a->mna ? lanes[2][l] : a->mna;
    a->mxa = lanes[3][l] > a->mxa ? lanes[3][l] : a->mxa;
    a->min_nonzero_abs = std::min(a->min_nonzero_abs, lanes[4][l]);
  }
  if (a->mn == 0 || a->mx == 0) {  // the first zero, as the sequential scan would keep it
    const double first_zero = first_zero_of<T>(p, end);
    if (a->mn == 0) a->mn = first_zero;
    if (a->mx == 0) a->mx = first_zero;
  }
  a->prod = prod, a->proda = proda;
  return end;
}

template <class T, bool kCountKeys>
__attribute__((target("avx2"))) int64_t accumulate_avx2(const uint8_t* p, int64_t n, double shift, double shift_abs,
                                                        Acc* a, distribution_kernel::Float32KeyCounter* keys) {
  return accumulate_vector_body<T, kCountKeys>(p, n, shift, shift_abs, a, keys);
}

template <class T, bool kCountKeys>
__attribute__((target("avx2,avx512f,avx512vl"))) int64_t accumulate_avx512vl(
    const uint8_t* p, int64_t n, double shift, double shift_abs, Acc* a, distribution_kernel::Float32KeyCounter* keys) {
  return accumulate_vector_body<T, kCountKeys>(p, n, shift, shift_abs, a, keys);
}
#endif

// The vector loop of the widest instruction set the kernels use (cpu_features.h); 0 (the
// portable loop does every element) without one.
template <class T, bool kCountKeys = false>
int64_t accumulate_vector(const uint8_t* p, int64_t n, double shift, double shift_abs, Acc* a,
                          distribution_kernel::Float32KeyCounter* keys = nullptr) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpu_has_avx512vl()) return accumulate_avx512vl<T, kCountKeys>(p, n, shift, shift_abs, a, keys);
  if (cpu_has_avx2()) return accumulate_avx2<T, kCountKeys>(p, n, shift, shift_abs, a, keys);
#endif
  return 0;
}

// float32 / float64: the vector loop where the CPU has one, then the portable loop for the rest.
template <class T>
void accumulate_real(const uint8_t* p, int64_t n, double shift, double shift_abs, Acc* a) {
  const int64_t start = accumulate_vector<T>(p, n, shift, shift_abs, a);
  accumulate<LoadAs<T>>(p, n, shift, shift_abs, a, start);
}

// The 18 reductions from the accumulated sums of n elements.
void finish(const Acc& a, int64_t n, Reductions* out) {
  const double nn = static_cast<double>(n);
  const double sum = lanes::total(a.sum);
  const double sabs = lanes::total(a.sabs);
  const double var = lanes::shifted_variance(lanes::total(a.d), lanes::total(a.dd), nn);
  const double var_abs = lanes::shifted_variance(lanes::total(a.da), lanes::total(a.dda), nn);
  const double sumsq = lanes::total(a.ss);
  double* r = out->v;
  r[kRedMin] = a.mn;
  r[kRedMax] = a.mx;
  r[kRedMean] = sum / nn;
  r[kRedProd] = a.prod;
  r[kRedStd] = std::sqrt(var);
  r[kRedVariance] = var;
  r[kRedSum] = sum;
  r[kRedL1] = sabs;
  r[kRedL2] = std::sqrt(sumsq);
  r[kRedCount + kRedMin] = a.mna;
  r[kRedCount + kRedMax] = a.mxa;
  r[kRedCount + kRedMean] = sabs / nn;
  r[kRedCount + kRedProd] = a.proda;
  r[kRedCount + kRedStd] = std::sqrt(var_abs);
  r[kRedCount + kRedVariance] = var_abs;
  r[kRedCount + kRedSum] = sabs;
  r[kRedCount + kRedL1] = sabs;
  r[kRedCount + kRedL2] = std::sqrt(sumsq);
  if (a.nan) {
    for (double& x : out->v) x = std::numeric_limits<double>::quiet_NaN();
  } else if (std::isinf(sum) || std::isinf(sabs)) {
    // Infinite elements: the shifted variance is NaN (inf - inf), as numpy's is.
    if (!std::isfinite(var)) r[kRedStd] = r[kRedVariance] = std::numeric_limits<double>::quiet_NaN();
  }
}

}  // namespace

int reduction_index(std::string_view name) {
  for (int i = 0; i < kRedCount; ++i)
    if (name == kNames[i]) return i;
  return -1;
}

const char* reduction_name(int index) { return index >= 0 && index < kRedCount ? kNames[index] : "?"; }

bool compute_reductions(const TensorView& v, Reductions* out) {
  if (!dtype_is_real(v.dtype) || v.numel <= 0) return false;
  if (TensorView wide; cpu_has_avx2() && widen_to_float32(v, &wide)) return compute_reductions(wide, out);
  const int64_t n = v.numel;
  const double shift = element_as_double(v, 0);
  const double shift_abs = std::fabs(shift);
  Acc a;
  const bool real = visit_real(v.dtype, [&](auto loader) {
    using Loader = decltype(loader);
    if constexpr (std::is_same_v<Loader, LoadAs<float>>) accumulate_real<float>(v.data, n, shift, shift_abs, &a);
    else if constexpr (std::is_same_v<Loader, LoadAs<double>>) accumulate_real<double>(v.data, n, shift, shift_abs, &a);
    else accumulate<Loader>(v.data, n, shift, shift_abs, &a);
  });
  if (!real) return false;
  finish(a, n, out);
  return true;
}

bool count_keys_with_reductions(const TensorView& v, Reductions* out, distribution_kernel::Float32KeyCounter* keys) {
  if (!cpu_has_avx2()) {
    compute_reductions(v, out);
    return keys->count(v);
  }
  const int64_t n = v.numel;
  const double shift = element_as_double(v, 0);
  Acc a;
  const int64_t tail = accumulate_vector<float, true>(v.data, n, shift, std::fabs(shift), &a, keys);
  accumulate<LoadAs<float>>(v.data, n, shift, std::fabs(shift), &a, tail);
  uint32_t* const t = keys->count_table(0);
  for (int64_t i = tail; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, v.data + 4 * i, 4);
    ++t[distribution_kernel::Float32KeyCounter::bits_key(bits)];
    const double ax = std::fabs(static_cast<double>(std::bit_cast<float>(bits)));
    if (ax != 0 && ax < a.min_nonzero_abs) a.min_nonzero_abs = ax;
  }
  // The accumulated extremes pass NaNs over (x < m is false for them), as the counter's do.
  const bool counted = keys->finish_count(static_cast<float>(a.mn), static_cast<float>(a.mx), a.nan,
                                          static_cast<float>(a.min_nonzero_abs), static_cast<float>(a.mxa));
  finish(a, n, out);
  return counted;
}

}  // namespace trialdb
