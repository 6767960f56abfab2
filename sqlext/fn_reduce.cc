// Reductions: tensor_reduce(v, name [, abs]) over all elements, tensor_reduce_axis(v, name, axis)
// along one axis (a float64 blob), and tensor_argmax(v [, axis]).
//
// tensor_reduce answers exactly what kernels/reductions.h (and so the `reductions` view) gives
// for the same value, through the single-reduction kernel in kernels/reduce_one.h.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_reduce(v, 'mean'), tensor_reduce(v, 'l2'), tensor_reduce(v, 'min', 1)
//      ...>   FROM (SELECT tensor_from_json('[[1, -2], [3, -4]]') AS v);
//   -0.5|5.47722557505166|1.0
//   sqlite> SELECT tensor_json(tensor_reduce_axis(v, 'sum', 0)), tensor_argmax(v),
//      ...>        tensor_json(tensor_argmax(v, 1))
//      ...>   FROM (SELECT tensor_from_json('[[1, 5, 2], [7, 0, 1]]') AS v);
//   [8,5,3]|3|[1,0]
//   sqlite> SELECT count(*), sum(tensor_reduce(v.value, 'l2') = r.value)
//      ...>   FROM tensor_values v JOIN reductions r USING (trial, tensor, step, worker)
//      ...>  WHERE v.tensor GLOB 'gradient/*' AND r.reduction = 'l2' AND NOT r.abs;
//   120|120
#include <cmath>
#include <limits>

#include "kernels/reductions.h"
#include "kernels/reduce_one.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

constexpr const char* kReductionList = "min, max, mean, prod, std, variance, sum, l1, l2";

bool get_reduction(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, int* index) {
  std::string name;
  if (!get_text(ctx, argv, argno, fn, "the reduction name", &name)) return false;
  *index = reduction_index(name);
  if (*index < 0) {
    result_errorf(ctx, "%s: unknown reduction '%s' (expected one of %s)", fn, name.c_str(), kReductionList);
    return false;
  }
  return true;
}

// Normalises a possibly negative axis; false (error set) when out of range.
bool get_axis(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, const TensorView& v, int* axis) {
  int64_t a;
  if (!get_int(ctx, argv, argno, fn, "axis", &a)) return false;
  if (a < -v.ndim || a >= v.ndim) {
    result_errorf(ctx, "%s: axis %lld is out of range for a %d-d tensor", fn, static_cast<long long>(a), v.ndim);
    return false;
  }
  *axis = static_cast<int>(a < 0 ? a + v.ndim : a);
  return true;
}

void reduce_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_reduce";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    int index;
    if (!get_reduction(ctx, argv, 1, fn, &index)) return;
    if (argc > 2) {
      int64_t use_abs;
      if (!get_int(ctx, argv, 2, fn, "abs", &use_abs)) return;
      if (use_abs) index += kRedCount;
    }
    double r;
    if (!reduce_one(t.view, index, &r)) return;  // strings, complex, empty: NULL
    sqlite3_result_double(ctx, r);               // NaN becomes NULL in SQLite
  });
}

// Splits a shape at axis into (outer, len, inner) so element (o, k, i) is at (o * len + k) * inner + i.
struct AxisSplit {
  int64_t outer = 1, len = 1, inner = 1;
  int64_t out_dims[kMaxDims];
  int out_ndim = 0;
};
AxisSplit split_at(const TensorView& v, int axis) {
  AxisSplit s;
  for (int d = 0; d < v.ndim; ++d) {
    // With numel > 0 these products are bounded by numel; an empty tensor may have huge other
    // dims, but then the result is empty too.
    if (v.numel > 0 && d < axis) s.outer *= v.dims[d];
    if (v.numel > 0 && d > axis) s.inner *= v.dims[d];
    if (d != axis) s.out_dims[s.out_ndim++] = v.dims[d];
  }
  s.len = v.dims[axis];
  if (v.numel == 0) s.outer = s.inner = 0;
  return s;
}

void reduce_axis_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_reduce_axis";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    int index, axis;
    if (!get_reduction(ctx, argv, 1, fn, &index) || !require_real(ctx, v, fn, 0) ||
        !get_axis(ctx, argv, 2, fn, v, &axis))
      return;
    AxisSplit s = split_at(v, axis);
    if (s.len == 0) return result_errorf(ctx, "%s: axis %d has length 0; there is nothing to reduce", fn, axis);
    int64_t out_n = s.outer * s.inner;
    ResultBlob out(ctx, DType::Float64, s.out_dims, s.out_ndim, static_cast<size_t>(out_n) * 8);
    if (!out.ok()) return;
    // Each slice along the axis is gathered into a float64 buffer and reduced with the same
    // kernel as tensor_reduce, so a 1-d slice gives what tensor_reduce gives.
    std::vector<double> slice(out_n ? static_cast<size_t>(s.len) : 0);
    TensorView sv;
    sv.dtype = DType::Float64;
    sv.ndim = 1;
    sv.dims[0] = s.len;
    sv.numel = s.len;
    sv.data = reinterpret_cast<const uint8_t*>(slice.data());
    sv.data_bytes = slice.size() * 8;
    uint8_t* dst = out.data();
    visit_real(v.dtype, [&](auto loader) {
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          for (int64_t k = 0; k < s.len; ++k) slice[k] = loader.load(v.data, (o * s.len + k) * s.inner + i);
          double r = 0;
          reduce_one(sv, index, &r);
          std::memcpy(dst + 8 * (o * s.inner + i), &r, 8);
        }
    });
    out.finish();
  });
}

// numpy.argmax: the first maximum; a NaN counts as the maximum (the first NaN wins).
template <class Loader>
int64_t argmax_strided(const uint8_t* p, int64_t start, int64_t len, int64_t stride) {
  int64_t best = 0;
  double bv = Loader::load(p, start);
  if (bv != bv) return 0;
  for (int64_t k = 1; k < len; ++k) {
    double x = Loader::load(p, start + k * stride);
    if (x != x) return k;
    if (x > bv) {
      bv = x;
      best = k;
    }
  }
  return best;
}

void argmax_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_argmax";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    if (!require_real(ctx, v, fn, 0)) return;
    if (argc == 1) {
      if (v.numel == 0) return result_errorf(ctx, "%s: argmax of an empty tensor", fn);
      int64_t r = 0;
      visit_real(v.dtype, [&](auto loader) { r = argmax_strided<decltype(loader)>(v.data, 0, v.numel, 1); });
      return sqlite3_result_int64(ctx, r);
    }
    int axis;
    if (!get_axis(ctx, argv, 1, fn, v, &axis)) return;
    AxisSplit s = split_at(v, axis);
    if (s.len == 0) return result_errorf(ctx, "%s: axis %d has length 0", fn, axis);
    int64_t out_n = s.outer * s.inner;
    ResultBlob out(ctx, DType::Int64, s.out_dims, s.out_ndim, static_cast<size_t>(out_n) * 8);
    if (!out.ok()) return;
    uint8_t* dst = out.data();
    visit_real(v.dtype, [&](auto loader) {
      for (int64_t o = 0; o < s.outer; ++o)
        for (int64_t i = 0; i < s.inner; ++i) {
          int64_t r = argmax_strided<decltype(loader)>(v.data, o * s.len * s.inner + i, s.len, s.inner);
          std::memcpy(dst + 8 * (o * s.inner + i), &r, 8);
        }
    });
    out.finish();
  });
}

}  // namespace

int register_reduce_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  auto add = [&](const char* name, int nargs, void (*f)(sqlite3_context*, int, sqlite3_value**)) {
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, name, nargs, kScalarFlags, nullptr, f, nullptr, nullptr, nullptr);
  };
  add("tensor_reduce", 2, reduce_fn);
  add("tensor_reduce", 3, reduce_fn);
  add("tensor_reduce_axis", 3, reduce_axis_fn);
  add("tensor_argmax", 1, argmax_fn);
  add("tensor_argmax", 2, argmax_fn);
  return rc;
}

}  // namespace trialdb::sqlext
