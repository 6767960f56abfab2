// The single-reduction kernel behind tensor_reduce (reduce_kernel.h): one pass computing only the
// reduction asked for, with compute_reductions' four-lane accumulation order, so its finite
// answers are bit-identical to the `reductions` view's; non-finite ones are recomputed by
// compute_reductions itself.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_reduce(v, 'sum'), tensor_reduce(v, 'max', 1), tensor_reduce(v, 'variance')
//      ...>   FROM (SELECT tensor_from_json('[1, -5, 3, 2, 4]', 'float32') AS v);
//   5.0|5.0|10.0
//   sqlite> SELECT tensor_reduce(tensor_from_json('[1, NaN]'), 'max') IS NULL,
//      ...>        tensor_reduce(tensor_from_json('[1, Infinity]'), 'max');
//   1|Inf
#include "sqlext/reduce_kernel.h"

#include <cmath>
#include <limits>

#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Lane-parallel sum of f(x) in compute_reductions' order: lane l takes elements 4k + l of the
// whole blocks, lane 0 takes the tail, then (l0 + l1) + (l2 + l3).
template <class Loader, class F>
double lane_sum(const uint8_t* p, int64_t n, F f) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) acc[l] += f(Loader::load(p, i + l));
  for (; i < n; ++i) acc[0] += f(Loader::load(p, i));
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// Min or max of f(x); *bad becomes non-zero (NaN) when an element is NaN or Inf, in which case
// the caller defers to compute_reductions.
template <class Loader, bool kMax, class F>
double lane_extreme(const uint8_t* p, int64_t n, F f, double init, bool* bad) {
  double m[4] = {init, init, init, init}, chk[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) {
      double x = f(Loader::load(p, i + l));
      m[l] = kMax ? (x > m[l] ? x : m[l]) : (x < m[l] ? x : m[l]);
      chk[l] += x - x;  // NaN exactly when x is NaN or infinite
    }
  for (; i < n; ++i) {
    double x = f(Loader::load(p, i));
    m[0] = kMax ? (x > m[0] ? x : m[0]) : (x < m[0] ? x : m[0]);
    chk[0] += x - x;
  }
  *bad = (chk[0] + chk[1] + chk[2] + chk[3]) != 0;
  double r = m[0];
  for (int l = 1; l < 4; ++l) r = kMax ? (m[l] > r ? m[l] : r) : (m[l] < r ? m[l] : r);
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
    case kRedL1:
      return red == kRedL1 || use_abs ? lane_sum<Loader>(p, n, fabs_) : lane_sum<Loader>(p, n, ident);
    case kRedMean:
      return (use_abs ? lane_sum<Loader>(p, n, fabs_) : lane_sum<Loader>(p, n, ident)) / nn;
    case kRedL2:
      return std::sqrt(lane_sum<Loader>(p, n, square));
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
      double d[4] = {0, 0, 0, 0}, dd[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= n; i += 4)
        for (int l = 0; l < 4; ++l) {
          double x = Loader::load(p, i + l);
          double dx = (use_abs ? std::fabs(x) : x) - shift;
          d[l] += dx;
          dd[l] += dx * dx;
        }
      for (; i < n; ++i) {
        double x = Loader::load(p, i);
        double dx = (use_abs ? std::fabs(x) : x) - shift;
        d[0] += dx;
        dd[0] += dx * dx;
      }
      double ds = (d[0] + d[1]) + (d[2] + d[3]);
      double dds = (dd[0] + dd[1]) + (dd[2] + dd[3]);
      double var = (dds - ds * ds / nn) / nn;
      if (var < 0) var = 0;
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

}  // namespace trialdb::sqlext
