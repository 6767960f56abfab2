// Comparing two tensors:
//   tensor_allclose(a, b [, rtol, atol, equal_nan])  numpy.allclose: every |a - b| <= atol + rtol * |b|
//                                                    (infinities must match; NaN equal only with equal_nan)
//   tensor_diff_norm(a, b)                           sqrt(sum((a - b)^2)), float64
// Shapes must be equal, or one side a single element (broadcast).
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_allclose(tensor_from_json('[1, 2]'), tensor_from_json('[1, 2.00001]')),
//      ...>        tensor_allclose(tensor_from_json('[1, 2]'), tensor_from_json('[1, 2.001]'));
//   1|0
//   sqlite> SELECT tensor_diff_norm(tensor_from_json('[1, 2]'), tensor_from_json('[4, 6]')),
//      ...>        tensor_diff_norm(tensor_from_json('[1, 2, 3]'), tensor_from_json('1'));
//   5.0|2.23606797749979
#include <cmath>

#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

// Decodes both tensors and checks their shapes. stride_a/b: 0 for a broadcast single element.
// Returns false with an error set, or with *null set when either side is NULL.
bool get_pair(sqlite3_context* ctx, sqlite3_value** argv, const char* fn, TensorArg* ta, TensorArg* tb, int64_t* sa,
              int64_t* sb, int64_t* n, bool* null) {
  *null = false;
  ArgStatus s1 = get_tensor(ctx, argv, 0, fn, ta);
  if (s1 == kArgError) return false;
  ArgStatus s2 = get_tensor(ctx, argv, 1, fn, tb);
  if (s2 == kArgError) return false;
  if (s1 == kArgNull || s2 == kArgNull) return *null = true, false;
  const TensorView &a = ta->view, &b = tb->view;
  if (!require_real(ctx, a, fn, 0) || !require_real(ctx, b, fn, 1)) return false;
  *sa = *sb = 1;
  *n = a.numel;
  if (a.ndim == b.ndim && std::equal(a.dims, a.dims + a.ndim, b.dims)) return true;
  if (b.numel == 1) return *sb = 0, true;
  if (a.numel == 1) return *sa = 0, *n = b.numel, true;
  result_errorf(ctx, "%s: shapes %s and %s differ", fn, shape_json(a.dims, a.ndim).c_str(),
                shape_json(b.dims, b.ndim).c_str());
  return false;
}

// numpy.isclose for one pair.
inline bool isclose(double x, double y, double rtol, double atol, bool equal_nan) {
  if (std::isnan(x) || std::isnan(y)) return equal_nan && std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  return std::fabs(x - y) <= atol + rtol * std::fabs(y);
}

void allclose_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_allclose";
  guarded(ctx, fn, [&] {
    TensorArg ta, tb;
    int64_t sa, sb, n;
    bool null;
    if (!get_pair(ctx, argv, fn, &ta, &tb, &sa, &sb, &n, &null)) return;
    double rtol = 1e-5, atol = 1e-8;
    int64_t equal_nan = 0;
    if (argc > 2 && !get_double(ctx, argv, 2, fn, "rtol", &rtol)) return;
    if (argc > 3 && !get_double(ctx, argv, 3, fn, "atol", &atol)) return;
    if (argc > 4 && !get_int(ctx, argv, 4, fn, "equal_nan", &equal_nan)) return;
    const TensorView &a = ta.view, &b = tb.view;
    bool all = true;
    visit_real(a.dtype, [&](auto la) {
      visit_real(b.dtype, [&](auto lb) {
        for (int64_t i = 0; i < n && all; ++i)
          all = isclose(la.load(a.data, i * sa), lb.load(b.data, i * sb), rtol, atol, equal_nan != 0);
      });
    });
    sqlite3_result_int(ctx, all);
  });
}

// An element stride: kFixed when known at compile time (1: the values have the same shape), else
// the one given (0 for a broadcast scalar).
template <int64_t kFixed>
struct Stride {
  Stride() = default;
  explicit Stride(int64_t s) : given(s) {}
  int64_t operator()() const { return kFixed ? kFixed : given; }
  int64_t given = kFixed;
};

// sum((a_i - b_i)^2) in four interleaved accumulators (element i into i % 4, the tail into the
// first), added pairwise at the end: the same numbers whatever the strides, and with unit strides
// a loop the compiler turns into vector instructions (this file is compiled with -O3).
template <class LA, class LB, class SA, class SB>
double squared_distance(const uint8_t* a, const uint8_t* b, int64_t n, SA sa, SB sb) {
  double acc[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) {
      double d = LA::load(a, (i + l) * sa()) - LB::load(b, (i + l) * sb());
      acc[l] += d * d;
    }
  for (; i < n; ++i) {
    double d = LA::load(a, i * sa()) - LB::load(b, i * sb());
    acc[0] += d * d;
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

void diff_norm_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_diff_norm";
  guarded(ctx, fn, [&] {
    TensorArg ta, tb;
    int64_t sa, sb, n;
    bool null;
    if (!get_pair(ctx, argv, fn, &ta, &tb, &sa, &sb, &n, &null)) return;
    const TensorView &a = ta.view, &b = tb.view;
    double ss = 0;
    visit_real(a.dtype, [&](auto la) {
      visit_real(b.dtype, [&](auto lb) {
        using LA = decltype(la);
        using LB = decltype(lb);
        ss = sa == 1 && sb == 1 ? squared_distance<LA, LB>(a.data, b.data, n, Stride<1>(), Stride<1>())
                                : squared_distance<LA, LB>(a.data, b.data, n, Stride<0>(sa), Stride<0>(sb));
      });
    });
    sqlite3_result_double(ctx, std::sqrt(ss));
  });
}

}  // namespace

int register_compare_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  for (int nargs = 2; nargs <= 5; ++nargs)
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, "tensor_allclose", nargs, kScalarFlags, nullptr, allclose_fn, nullptr,
                                      nullptr, nullptr);
  if (rc == SQLITE_OK)
    rc = sqlite3_create_function_v2(db, "tensor_diff_norm", 2, kScalarFlags, nullptr, diff_norm_fn, nullptr, nullptr,
                                    nullptr);
  return rc;
}

}  // namespace trialdb::sqlext
