// Histogram functions with numpy's exact semantics (the percentiles are in fn_distribution.cc):
//   tensor_histogram(v, bins [, lo, hi]) numpy.histogram(v, bins, range=(lo, hi)) as JSON
//   tensor_bincount(v)                   numpy.bincount(v.ravel()) as an int64 blob
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_histogram(tensor_from_json('[1, 2, 2, 3, 4]'), 3);
//   {"edges":[1,2,3,4],"counts":[1,2,2]}
//   sqlite> SELECT tensor_histogram(tensor_from_json('[1, 2, 2, 3, 4, 9]'), 2, 0, 4);
//   {"edges":[0,2,4],"counts":[1,4]}
//   sqlite> SELECT tensor_json(tensor_bincount(tensor_from_json('[0, 1, 1, 3, 1]', 'uint8')));
//   [1,3,0,1]
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/histogram_bins.h"
#include "sqlext/json_text.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

// The arithmetic numpy bins in: the values' own dtype for float32 and float16 (the edges are
// cast to it; the subtraction from the first edge and the scaling to a bin number are rounded
// there), float64 for everything else. Each operation is done in float64 and rounded once to the
// dtype, which gives the dtype's own correctly rounded result (float64 has more than twice the
// precision).
class BinArithmetic {
 public:
  enum Kind { kFloat64, kFloat32, kFloat16 };
  explicit BinArithmetic(Kind kind) : kind_(kind) {}
  double operator()(double x) const {
    if (kind_ == kFloat16) return static_cast<double>(half_to_float(double_to_half(x)));
    return kind_ == kFloat32 ? static_cast<double>(static_cast<float>(x)) : x;
  }
  bool narrow() const { return kind_ != kFloat64; }
  // The arithmetic of an array in this one with a float64 scalar, by numpy's value-based casting:
  // float16 widens to float32 when the scalar is past float16's range (a norm above 65504).
  BinArithmetic with_scalar(double scalar) const {
    constexpr double kHalfMax = 65504;
    return kind_ == kFloat16 && !(std::fabs(scalar) <= kHalfMax) ? BinArithmetic(kFloat32) : *this;
  }

 private:
  Kind kind_;
};

// Which of the bins holds x, as numpy.histogram finds it for equal bins: the bin estimated as
// (x - first) * norm, truncated (x = last in the last bin), then moved down once when x is below
// its lower edge and up once when x is on or past its upper edge (except from the last bin).
// numpy corrects once, not until x is inside: on values a few ulps apart, where neighbouring edges
// round to the same number, the once-corrected bin is numpy's answer. -1 outside [lo, hi] or
// NaN. A range wider than a double holds has no finite norm (numpy's edges are NaN there): its
// bin is estimated by range_fraction and corrected to the edges.
class Binner {
 public:
  // first and last: the range as numpy holds it (before rounding to the dtype); edges: in the
  // dtype; width: last - first as numpy computes it for its norm.
  Binner(const std::vector<double>& edges, double first, double width, BinArithmetic round)
      : e_(edges.data()),
        bins_(static_cast<int64_t>(edges.size()) - 1),
        subtract_(round.with_scalar(first)),
        lo_(subtract_(first)),
        hi_(edges.back()),
        norm_(static_cast<double>(bins_) / width),
        scale_(subtract_.with_scalar(norm_)),
        finite_width_(std::isfinite(width) && std::isfinite(norm_) && width > 0) {}

  int64_t bin(double x) const {
    if (!(x >= lo_ && x <= hi_)) return -1;
    if (!finite_width_) return corrected(x, clamped_bin(range_fraction(x, lo_, hi_), bins_).value_or(0));
    const double b = scale_(subtract_(x - lo_) * scale_(norm_));
    int64_t k = !(b > 0) ? 0 : b >= static_cast<double>(bins_) ? bins_ - 1 : static_cast<int64_t>(b);
    if (k > 0 && x < e_[k]) --k;
    if (k < bins_ - 1 && x >= e_[k + 1]) ++k;
    return k;
  }
  double lo() const { return lo_; }
  double hi() const { return hi_; }

 private:
  int64_t corrected(double x, int64_t k) const {
    while (k > 0 && x < e_[k]) --k;
    while (k < bins_ - 1 && x >= e_[k + 1]) ++k;
    return k;
  }
  const double* e_;
  int64_t bins_;
  BinArithmetic subtract_;  // x - first
  double lo_, hi_, norm_;
  BinArithmetic scale_;  // (x - first) * norm
  bool finite_width_;
};

// float32 binning at memory speed: a float32's top 16 bits (sign, exponent, 7 mantissa bits)
// name a contiguous range of float32 values, and nearly every such range lies in one bin (or
// wholly outside [lo, hi]). A table of the 65536 prefixes gives the bin of each that does; only
// elements whose prefix straddles an edge are binned one by one.
constexpr int64_t kPrefixTableMinElements = 1 << 17;  // below this the table costs more than it saves
constexpr int kPrefixShift = 16;
constexpr int16_t kStraddles = -2;
constexpr int64_t kPrefixTableMaxBins = INT16_MAX;  // bins fit the table's int16 entries

void count_float32_by_prefix(const Binner& binner, const TensorView& v, int64_t* counts) {
  std::vector<int16_t> table(size_t{1} << (32 - kPrefixShift));
  for (uint32_t prefix = 0; prefix < table.size(); ++prefix) {
    const uint32_t first_bits = prefix << kPrefixShift, last_bits = first_bits | ((1u << kPrefixShift) - 1);
    float first, last;
    std::memcpy(&first, &first_bits, 4);
    std::memcpy(&last, &last_bits, 4);
    // The range is an interval of values between first and last: when both ends are in one bin,
    // so is all of it; when both are outside [lo, hi] on the same side (or are Inf and NaN), all
    // of it is outside.
    const int64_t a = binner.bin(first), b = binner.bin(last);
    const bool outside = std::isnan(first) || std::isnan(last) || std::max(first, last) < binner.lo() ||
                         std::min(first, last) > binner.hi();
    table[prefix] = a == b && (a >= 0 || outside) ? static_cast<int16_t>(a) : kStraddles;
  }
  const int16_t* const t = table.data();
  for (int64_t i = 0; i < v.numel; ++i) {
    uint32_t bits;
    std::memcpy(&bits, v.data + 4 * i, 4);
    int64_t k = t[bits >> kPrefixShift];
    if (k == kStraddles) {
      float x;
      std::memcpy(&x, &bits, 4);
      k = binner.bin(x);
    }
    if (k >= 0) ++counts[k];
  }
}

void histogram_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_histogram";
  guarded(ctx, fn, [&] {
    if (argc == 3) return result_errorf(ctx, "%s: give both lo and hi, or neither", fn);
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    if (!require_real(ctx, v, fn, 0)) return;
    int64_t bins;
    if (!get_int(ctx, argv, 1, fn, "bins", &bins)) return;
    if (bins < 1) return result_errorf(ctx, "%s: bins must be >= 1, got %lld", fn, static_cast<long long>(bins));
    if (bins > length_limit(ctx) / 4) return sqlite3_result_error_toobig(ctx);
    // numpy computes the edges in the values' own dtype for float32 and float16 and compares
    // there; in float64 for everything else.
    const bool f32 = v.dtype == DType::Float32, f16 = v.dtype == DType::Float16;
    const BinArithmetic round(f32 ? BinArithmetic::kFloat32 : f16 ? BinArithmetic::kFloat16 : BinArithmetic::kFloat64);
    // The range as numpy holds it: given, Python floats (float64); else the values' minimum and
    // maximum, scalars of their dtype, so that widening an empty range by 0.5 rounds there.
    double lo, hi;
    const bool given = argc == 4;
    if (given) {
      if (!get_double(ctx, argv, 2, fn, "lo", &lo) || !get_double(ctx, argv, 3, fn, "hi", &hi)) return;
      if (lo > hi) return result_errorf(ctx, "%s: lo (%g) must not exceed hi (%g)", fn, lo, hi);
      if (!std::isfinite(lo) || !std::isfinite(hi))
        return result_errorf(ctx, "%s: the range [%g, %g] is not finite", fn, lo, hi);
    } else if (v.numel == 0) {
      lo = 0, hi = 1;
    } else {
      lo = std::numeric_limits<double>::infinity(), hi = -lo;
      bool nan = false;
      visit_real(v.dtype, [&](auto loader) {
        for (int64_t i = 0; i < v.numel; ++i) {
          double x = loader.load(v.data, i);
          nan |= x != x;
          lo = std::min(lo, x);
          hi = std::max(hi, x);
        }
      });
      if (nan || !std::isfinite(lo) || !std::isfinite(hi))
        return result_errorf(ctx, "%s: the value range is not finite (NaN or Inf elements); give lo and hi", fn);
    }
    // numpy.linspace(lo, hi, bins + 1) in float64, the last edge exactly hi, then cast to the
    // dtype: i * step + lo, or i / bins * width when the step underflows to 0. A range wider than
    // a double holds (hi - lo overflows) has no such step: its edges are interpolated. An empty
    // range is widened by 0.5 each way, in float64 too.
    const bool widened = lo == hi;
    if (widened) lo -= 0.5, hi += 0.5;
    const double width = hi - lo;
    const double step = width / static_cast<double>(bins);
    std::vector<double> edges(static_cast<size_t>(bins) + 1);
    for (int64_t i = 0; i < bins; ++i) {
      const double at = static_cast<double>(i);
      double e;
      if (!std::isfinite(width)) e = bin_edge(lo, hi, i, bins);
      else if (step == 0) e = at / static_cast<double>(bins) * width + lo;
      else e = at * step + lo;
      edges[i] = round(e);
    }
    edges[bins] = round(hi);
    std::vector<int64_t> counts(static_cast<size_t>(bins), 0);
    // numpy's norm: bins over the width of its range, subtracted in the values' dtype when the
    // range is their minimum and maximum (scalars of that dtype), else in float64.
    const Binner binner(edges, lo, given || widened ? width : round(hi - lo), round);
    if (v.dtype == DType::Float32 && v.numel >= kPrefixTableMinElements && bins <= kPrefixTableMaxBins) {
      count_float32_by_prefix(binner, v, counts.data());
    } else {
      visit_real(v.dtype, [&](auto loader) {
        for (int64_t i = 0; i < v.numel; ++i)
          if (const int64_t k = binner.bin(loader.load(v.data, i)); k >= 0) ++counts[k];
      });
    }
    std::string out = "{\"edges\":[";
    for (int64_t i = 0; i <= bins; ++i) {
      if (i) out.push_back(',');
      if (round.narrow()) append_json_float(&out, static_cast<float>(edges[i]));
      else append_json_double(&out, edges[i]);
    }
    out += "],\"counts\":[";
    for (int64_t i = 0; i < bins; ++i) {
      if (i) out.push_back(',');
      out += std::to_string(counts[i]);
    }
    out += "]}";
    result_text(ctx, out);
  });
}

void bincount_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_bincount";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    if (!require_real(ctx, v, fn, 0)) return;
    // Integers, or floats holding non-negative integers (numpy insists on an integer dtype).
    int64_t max = -1;
    const char* bad = nullptr;
    double bad_value = 0;
    visit_real(v.dtype, [&](auto loader) {
      for (int64_t i = 0; i < v.numel && !bad; ++i) {
        double x = loader.load(v.data, i);
        if (!(x >= 0)) bad = "is negative or NaN", bad_value = x;
        else if (x != std::floor(x)) bad = "is not an integer", bad_value = x;
        else if (x >= 9.0e18) bad = "is too large", bad_value = x;
        else max = std::max(max, static_cast<int64_t>(x));
      }
    });
    if (bad) return result_errorf(ctx, "%s: element %g %s", fn, bad_value, bad);
    int64_t n = max + 1;
    if (n > length_limit(ctx) / 8) return sqlite3_result_error_toobig(ctx);
    int64_t dims[1] = {n};
    ResultBlob out(ctx, DType::Int64, dims, 1, static_cast<size_t>(n) * 8);
    if (!out.ok()) return;
    // Count straight into the result (int64 slots; memcpy because the blob is unaligned).
    uint8_t* counts = out.data();
    std::memset(counts, 0, static_cast<size_t>(n) * 8);
    visit_real(v.dtype, [&](auto loader) {
      for (int64_t i = 0; i < v.numel; ++i) {
        int64_t k = static_cast<int64_t>(loader.load(v.data, i)), c;
        std::memcpy(&c, counts + 8 * k, 8);
        ++c;
        std::memcpy(counts + 8 * k, &c, 8);
      }
    });
    out.finish();
  });
}

}  // namespace

int register_stats_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  auto add = [&](const char* name, int nargs, void (*f)(sqlite3_context*, int, sqlite3_value**)) {
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, name, nargs, kScalarFlags, nullptr, f, nullptr, nullptr, nullptr);
  };
  add("tensor_histogram", 2, histogram_fn);
  add("tensor_histogram", 3, histogram_fn);
  add("tensor_histogram", 4, histogram_fn);
  add("tensor_bincount", 1, bincount_fn);
  return rc;
}

}  // namespace trialdb::sqlext
