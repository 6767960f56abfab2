// The single-reduction kernel (kernels/reduce_one.h) must give exactly what
// kernels/reductions.h compute_reductions gives, for every dtype, size and reduction,
// including NaN, Inf and signed zeros; and compute_reductions' min, max and products must be
// exactly the sequential scan's, which its vector loop reaches by other means.
#include <cmath>
#include <cstring>
#include <random>

#include "gtest/gtest.h"
#include "kernels/reductions.h"
#include "kernels/reduce_one.h"

namespace trialdb::test {
namespace {

// Finite doubles to integer through int64, whose conversion to narrower types wraps.
int64_t wrap(double x) { return static_cast<int64_t>(x); }

// Random raw bytes for n elements of a dtype, with special values sprinkled in by mode.
std::vector<uint8_t> make_data(DType t, int64_t n, std::mt19937_64& rng, int mode) {
  size_t item = dtype_size(t);
  std::vector<uint8_t> out(n * item);
  std::normal_distribution<double> g(mode == 3 ? 1e3 : 0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    double x = g(rng) * 10;
    if (mode == 1 && rng() % 7 == 0) x = 0.0 * ((rng() & 1) ? -1 : 1);
    if (mode == 2 && rng() % 11 == 0) x = (rng() & 1) ? INFINITY : NAN;
    uint8_t* p = out.data() + i * item;
    switch (t) {
      case DType::Bool: p[0] = x > 0; break;
      case DType::Int8: {
        int8_t v = static_cast<int8_t>(wrap(std::isfinite(x) ? x : 3));
        std::memcpy(p, &v, 1);
        break;
      }
      case DType::UInt8: {
        uint8_t v = static_cast<uint8_t>(wrap(std::isfinite(x) ? std::fabs(x) : 3));
        std::memcpy(p, &v, 1);
        break;
      }
      case DType::Int16: {
        int16_t v = static_cast<int16_t>(wrap(std::isfinite(x) ? x * 100 : 3));
        std::memcpy(p, &v, 2);
        break;
      }
      case DType::UInt16: {
        uint16_t v = static_cast<uint16_t>(wrap(std::isfinite(x) ? std::fabs(x) * 100 : 3));
        std::memcpy(p, &v, 2);
        break;
      }
      case DType::Int32: {
        int32_t v = static_cast<int32_t>(wrap(std::isfinite(x) ? x * 1e6 : 3));
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::UInt32: {
        uint32_t v = static_cast<uint32_t>(wrap(std::isfinite(x) ? std::fabs(x) * 1e6 : 3));
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::Int64: {
        int64_t v = static_cast<int64_t>(std::isfinite(x) ? x * 1e12 : 3);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::UInt64: {
        uint64_t v = static_cast<uint64_t>(std::isfinite(x) ? std::fabs(x) * 1e12 : 3);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::Float16:
      case DType::BFloat16: {
        uint16_t v = static_cast<uint16_t>(rng());
        std::memcpy(p, &v, 2);
        break;
      }
      case DType::Float32: {
        float v = static_cast<float>(x);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::Float64: std::memcpy(p, &x, 8); break;
      default: break;
    }
  }
  return out;
}

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

TEST(ReduceKernel, BitIdenticalToComputeReductions) {
  std::mt19937_64 rng(42);
  const DType types[] = {DType::Bool,     DType::Int8,    DType::UInt8,  DType::Int16,  DType::UInt16,
                         DType::Int32,    DType::UInt32,  DType::Int64,  DType::UInt64, DType::Float16,
                         DType::BFloat16, DType::Float32, DType::Float64};
  const int64_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 31, 1000, 4099};
  int checked = 0;
  for (DType t : types)
    for (int64_t n : sizes)
      for (int mode = 0; mode < 4; ++mode) {
        std::vector<uint8_t> data = make_data(t, n, rng, mode);
        TensorView v;
        v.dtype = t;
        v.ndim = 1;
        v.dims[0] = n;
        v.numel = n;
        v.data = data.data();
        v.data_bytes = data.size();
        Reductions all;
        ASSERT_TRUE(compute_reductions(v, &all));
        for (int r = 0; r < kAllReductions; ++r) {
          double got;
          ASSERT_TRUE(reduce_one(v, r, &got));
          EXPECT_TRUE(same(got, all.v[r]))
              << dtype_name(t) << " n=" << n << " mode=" << mode << " reduction " << reduction_name(r % kRedCount)
              << (r >= kRedCount ? " abs" : "") << ": " << got << " vs " << all.v[r];
          ++checked;
        }
      }
  EXPECT_EQ(checked, 13 * 11 * 4 * 18);
}

// The sequential definitions: x < m ? x : m over the elements in order (so the first of equal
// extremes, which shows only for 0.0 / -0.0), products one element at a time.
struct Sequential {
  double mn = INFINITY, mx = -INFINITY, mna = INFINITY, mxa = 0, prod = 1, proda = 1;
  void add(double x) {
    double ax = std::fabs(x);
    mn = x < mn ? x : mn;
    mx = x > mx ? x : mx;
    mna = ax < mna ? ax : mna;
    mxa = ax > mxa ? ax : mxa;
    prod *= x;
    proda *= ax;
  }
};

// Values whose products saturate (to 0 or to Inf) early and then meet what ends the saturation
// (an Inf after 0, a zero after Inf, a NaN), and signed zeros that decide min, max and the sign
// of a zero product.
template <class T>
std::vector<T> saturating_data(int64_t n, std::mt19937_64& rng, int mode) {
  std::vector<T> out(n);
  std::normal_distribution<double> g(0.0, 1.0);
  const int64_t breaker = n > 8 ? 8 + static_cast<int64_t>(rng() % (n - 8)) : n;  // after saturation
  for (int64_t i = 0; i < n; ++i) {
    double x = g(rng);
    switch (mode) {
      case 0: x *= 1e-3; break;                       // -> 0, sign flips throughout
      case 1: x = 0.01 + std::fabs(x) * 1e-3; break;  // -> +0, positive
      case 2: x *= 1e3; break;                        // -> Inf
      case 3:
        x *= 1e-3;
        if (i == breaker) x = INFINITY;
        break;  // 0 then Inf: NaN
      case 4:
        x *= 1e3;
        if (i == breaker) x = (rng() & 1) ? 0.0 : -0.0;
        break;  // Inf then 0: NaN
      case 5:
        x = std::fabs(x);
        if (rng() % 5 == 0) x = (rng() & 1) ? 0.0 : -0.0;
        break;  // min is a zero
      case 6:
        x = -std::fabs(x);
        if (rng() % 5 == 0) x = (rng() & 1) ? 0.0 : -0.0;
        break;  // max is a zero
      case 7:
        x = (rng() & 1) ? 0.0 : -0.0;
        if (i == breaker) x = -INFINITY;
        break;  // zeros, then -Inf
      case 8:
        x *= 1e3;
        if (i == breaker) x = NAN;
        break;  // a NaN: everything NaN
    }
    out[i] = static_cast<T>(x);
  }
  return out;
}

template <class T>
void check_sequential(DType t) {
  std::mt19937_64 rng(7);
  const int64_t sizes[] = {1, 3, 4, 5, 8, 13, 64, 999, 1000, 4099, 70001};
  int checked = 0;
  for (int64_t n : sizes)
    for (int mode = 0; mode < 9; ++mode) {
      std::vector<T> data = saturating_data<T>(n, rng, mode);
      TensorView v;
      v.dtype = t;
      v.ndim = 1;
      v.dims[0] = n;
      v.numel = n;
      v.data = reinterpret_cast<const uint8_t*>(data.data());
      v.data_bytes = data.size() * sizeof(T);
      Reductions got;
      ASSERT_TRUE(compute_reductions(v, &got));
      Sequential want;
      bool any_nan = false;
      for (T x : data) {
        want.add(static_cast<double>(x));
        any_nan |= x != x;
      }
      const std::pair<int, double> expect[] = {{kRedMin, want.mn},
                                               {kRedMax, want.mx},
                                               {kRedProd, want.prod},
                                               {kRedCount + kRedMin, want.mna},
                                               {kRedCount + kRedMax, want.mxa},
                                               {kRedCount + kRedProd, want.proda}};
      for (auto [r, w] : expect) {
        if (any_nan) w = NAN;  // compute_reductions: a NaN element makes every reduction NaN
        EXPECT_TRUE(same(got.v[r], w)) << dtype_name(t) << " n=" << n << " mode=" << mode << " reduction "
                                       << reduction_name(r % kRedCount) << (r >= kRedCount ? " abs" : "") << ": "
                                       << got.v[r] << " vs sequential " << w;
        ++checked;
      }
    }
  EXPECT_EQ(checked, 11 * 9 * 6);
}

TEST(ComputeReductions, ExtremesAndProductsAreTheSequentialScans) {
  check_sequential<float>(DType::Float32);
  check_sequential<double>(DType::Float64);
}

TEST(ReduceKernel, NoReductionsForStringsComplexEmpty) {
  TensorView v;
  double r;
  v.dtype = DType::Float32;
  v.numel = 0;
  EXPECT_FALSE(reduce_one(v, kRedSum, &r));
  v.dtype = DType::String;
  v.numel = 1;
  EXPECT_FALSE(reduce_one(v, kRedSum, &r));
  v.dtype = DType::Complex64;
  EXPECT_FALSE(reduce_one(v, kRedSum, &r));
}

}  // namespace
}  // namespace trialdb::test
