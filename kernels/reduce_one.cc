#include "kernels/reduce_one.h"

#include <cmath>
#include <limits>

#include "kernels/element_loader.h"
#include "kernels/reduction_lanes.h"

namespace trialdb {

namespace {

namespace lanes = reduction_lanes;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Sum of f(x) in the lane order.
template <class Loader, class F>
double lane_sum(const uint8_t* p, int64_t n, F f) {
  double acc[lanes::kLanes] = {};
  lanes::for_each<Loader>(p, n, [&](int l, double x) { acc[l] += f(x); });
  return lanes::total(acc);
}

// Min or max of f(x); *bad becomes true when an element is NaN or Inf, in which case the caller
// defers to compute_reductions.
template <class Loader, bool kMax, class F>
double lane_extreme(const uint8_t* p, int64_t n, F f, double init, bool* bad) {
  double m[lanes::kLanes] = {init, init, init, init}, chk[lanes::kLanes] = {};
  lanes::for_each<Loader>(p, n, [&](int l, double v) {
    const double x = f(v);
    m[l] = kMax ? (x > m[l] ? x : m[l]) : (x < m[l] ? x : m[l]);
    chk[l] += x - x;  // NaN exactly when x is NaN or infinite
  });
  *bad = (chk[0] + chk[1] + chk[2] + chk[3]) != 0;
  double r = m[0];
  for (int l = 1; l < lanes::kLanes; ++l) r = kMax ? (m[l] > r ? m[l] : r) : (m[l] < r ? m[l] : r);
  // The sequential scan keeps the first element equal to the extreme; that only shows for
  // zeros (0.0 vs -0.0), so take the sign of the first zero.
  if (r == 0)
    for (int64_t j = 0; j < n; ++j) {
      double x = f(Loader::load(p, j));
      if (x == 0) return x;
    }
  return r;
}

template <class Loader>
double kernel(const uint8_t* p, int64_t n, int index, bool* fallback) {
  const double nn = static_cast<double>(n);
  const bool use_abs = index >= kRedCount;
  const int red = use_abs ? index - kRedCount : index;
  auto ident = [](double x) { return x; };
  auto fabs_ = [](double x) { return std::fabs(x); };
  auto square = [](double x) { return x * x; };
  switch (red) {
    case kRedSum:
    case kRedL1: return red == kRedL1 || use_abs ? lane_sum<Loader>(p, n, fabs_) : lane_sum<Loader>(p, n, ident);
    case kRedMean: return (use_abs ? lane_sum<Loader>(p, n, fabs_) : lane_sum<Loader>(p, n, ident)) / nn;
    case kRedL2: return std::sqrt(lane_sum<Loader>(p, n, square));
    case kRedMin:
      return use_abs ? lane_extreme<Loader, false>(p, n, fabs_, kInf, fallback)
                     : lane_extreme<Loader, false>(p, n, ident, kInf, fallback);
    case kRedMax:
      return use_abs ? lane_extreme<Loader, true>(p, n, fabs_, 0.0, fallback)
                     : lane_extreme<Loader, true>(p, n, ident, -kInf, fallback);
    case kRedProd: {
      double prod = 1;
      if (use_abs)
        for (int64_t i = 0; i < n; ++i) prod *= std::fabs(Loader::load(p, i));
      else
        for (int64_t i = 0; i < n; ++i) prod *= Loader::load(p, i);
      return prod;
    }
    case kRedStd:
    case kRedVariance: {
      double shift = Loader::load(p, 0);
      if (use_abs) shift = std::fabs(shift);
      double d[lanes::kLanes] = {}, dd[lanes::kLanes] = {};
      lanes::for_each<Loader>(p, n, [&](int l, double x) {
        const double dx = (use_abs ? std::fabs(x) : x) - shift;
        d[l] += dx;
        dd[l] += dx * dx;
      });
      const double var = lanes::shifted_variance(lanes::total(d), lanes::total(dd), nn);
      return red == kRedStd ? std::sqrt(var) : var;
    }
  }
  *fallback = true;
  return 0;
}

}  // namespace

bool reduce_one(const TensorView& v, int index, double* out) {
  if (!dtype_is_real(v.dtype) || v.numel <= 0 || index < 0 || index >= kAllReductions) return false;
  bool fallback = false;
  double r = 0;
  visit_real(v.dtype, [&](auto loader) { r = kernel<decltype(loader)>(v.data, v.numel, index, &fallback); });
  if (fallback || !std::isfinite(r)) {
    Reductions all;
    if (!compute_reductions(v, &all)) return false;
    r = all.v[index];
  }
  *out = r;
  return true;
}

}  // namespace trialdb
