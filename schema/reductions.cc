#include "schema/reductions.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace trialdb {

namespace {
constexpr const char* kNames[kRedCount] = {"min", "max", "mean", "prod", "std", "variance", "sum", "l1", "l2"};

// Accumulators for one pass. Four lanes for the sums so the loop is not one long dependency chain.
struct Acc {
  double sum[4] = {}, sabs[4] = {}, ss[4] = {}, d[4] = {}, dd[4] = {}, da[4] = {}, dda[4] = {};
  double mn = std::numeric_limits<double>::infinity(), mx = -std::numeric_limits<double>::infinity();
  double mna = std::numeric_limits<double>::infinity(), mxa = 0;
  double prod = 1, proda = 1;
  int64_t nan = 0;
};

// One element into lane l. The same statements, in the same order, for every element: sqlext's
// single-reduction kernels reproduce these sums bit for bit.
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

template <class Load>
void accumulate(const uint8_t* p, int64_t n, double shift, double shift_abs, Load load, Acc* a) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) add(a, l, load(p, i + l), shift, shift_abs);
  for (; i < n; ++i) add(a, 0, load(p, i), shift, shift_abs);
}

template <class T>
double load_as(const uint8_t* p, int64_t i) {
  T x;
  std::memcpy(&x, p + i * sizeof(T), sizeof(T));
  return static_cast<double>(x);
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
  const int64_t n = v.numel;
  const double shift = element_as_double(v, 0);
  const double shift_abs = std::fabs(shift);
  Acc a;
  switch (v.dtype) {
    case DType::Bool: accumulate(v.data, n, shift, shift_abs, [](const uint8_t* p, int64_t i) { return p[i] ? 1.0 : 0.0; }, &a); break;
    case DType::Int8: accumulate(v.data, n, shift, shift_abs, load_as<int8_t>, &a); break;
    case DType::UInt8: accumulate(v.data, n, shift, shift_abs, load_as<uint8_t>, &a); break;
    case DType::Int16: accumulate(v.data, n, shift, shift_abs, load_as<int16_t>, &a); break;
    case DType::UInt16: accumulate(v.data, n, shift, shift_abs, load_as<uint16_t>, &a); break;
    case DType::Int32: accumulate(v.data, n, shift, shift_abs, load_as<int32_t>, &a); break;
    case DType::UInt32: accumulate(v.data, n, shift, shift_abs, load_as<uint32_t>, &a); break;
    case DType::Int64: accumulate(v.data, n, shift, shift_abs, load_as<int64_t>, &a); break;
    case DType::UInt64: accumulate(v.data, n, shift, shift_abs, load_as<uint64_t>, &a); break;
    case DType::Float32: accumulate(v.data, n, shift, shift_abs, load_as<float>, &a); break;
    case DType::Float64: accumulate(v.data, n, shift, shift_abs, load_as<double>, &a); break;
    case DType::Float16:
      accumulate(v.data, n, shift, shift_abs, [](const uint8_t* p, int64_t i) {
        uint16_t h; std::memcpy(&h, p + 2 * i, 2); return static_cast<double>(half_to_float(h)); }, &a);
      break;
    case DType::BFloat16:
      accumulate(v.data, n, shift, shift_abs, [](const uint8_t* p, int64_t i) {
        uint16_t h; std::memcpy(&h, p + 2 * i, 2); return static_cast<double>(bfloat16_to_float(h)); }, &a);
      break;
    default: return false;
  }
  const double nn = static_cast<double>(n);
  double sum = (a.sum[0] + a.sum[1]) + (a.sum[2] + a.sum[3]);
  double sabs = (a.sabs[0] + a.sabs[1]) + (a.sabs[2] + a.sabs[3]);
  double d = (a.d[0] + a.d[1]) + (a.d[2] + a.d[3]);
  double dd = (a.dd[0] + a.dd[1]) + (a.dd[2] + a.dd[3]);
  double da = (a.da[0] + a.da[1]) + (a.da[2] + a.da[3]);
  double dda = (a.dda[0] + a.dda[1]) + (a.dda[2] + a.dda[3]);
  double var = (dd - d * d / nn) / nn;
  double var_abs = (dda - da * da / nn) / nn;
  if (var < 0) var = 0;
  if (var_abs < 0) var_abs = 0;
  double sumsq = (a.ss[0] + a.ss[1]) + (a.ss[2] + a.ss[3]);
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
  return true;
}

}  // namespace trialdb
