// tensor_count(v, op [, x]) and tensor_fraction(v, op [, x]) = count / numel.
// op: = != < <= > >= against the number x (NaN compares unequal, as in numpy), or one of
// nan, inf, finite, zero, nonzero with no x. Strings support = and != against a text x.
// The loops are instantiated per dtype and op: no allocation, no per-element dispatch.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_count(v, 'nan'), tensor_count(v, '>', 0.5), tensor_fraction(v, 'zero')
//      ...>   FROM (SELECT tensor_from_json('[0, 1, 2, NaN, Infinity, 0, -3, 0.25]') AS v);
//   1|3|0.25
//   sqlite> SELECT tensor_count(tensor_from_json('["a", "b", "a"]'), '=', 'a');
//   2
#include <cmath>

#include "sqlext/elementwise_ops.h"
#include "sqlext/json_text.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

enum class Class { Nan, Inf, Finite, Zero, NonZero };

template <class Loader, class Pred>
int64_t count_if(const uint8_t* p, int64_t n, Pred pred) {
  // Four independent counters keep the loop from being one dependency chain.
  int64_t c[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int l = 0; l < 4; ++l) c[l] += pred(Loader::load(p, i + l)) ? 1 : 0;
  for (; i < n; ++i) c[0] += pred(Loader::load(p, i)) ? 1 : 0;
  return (c[0] + c[1]) + (c[2] + c[3]);
}

// The count, or -1 with an error set on ctx (or -2: the answer is SQL NULL).
int64_t do_count(sqlite3_context* ctx, int argc, sqlite3_value** argv, const char* fn, int64_t* numel) {
  TensorArg t;
  ArgStatus st = get_tensor(ctx, argv, 0, fn, &t);
  if (st == kArgNull) return -2;
  if (st == kArgError) return -1;
  const TensorView& v = t.view;
  *numel = v.numel;
  std::string name;
  if (!get_text(ctx, argv, 1, fn, "op", &name)) return -1;
  static constexpr struct {
    const char* name;
    Class c;
  } kClasses[] = {{"nan", Class::Nan},
                  {"inf", Class::Inf},
                  {"finite", Class::Finite},
                  {"zero", Class::Zero},
                  {"nonzero", Class::NonZero}};
  for (const auto& k : kClasses) {
    if (name != k.name) continue;
    if (argc > 2) return result_errorf(ctx, "%s: op '%s' takes no x", fn, name.c_str()), -1;
    if (!require_real(ctx, v, fn, 0)) return -1;
    int64_t r = 0;
    visit_real(v.dtype, [&](auto loader) {
      using L = decltype(loader);
      switch (k.c) {
        case Class::Nan: r = count_if<L>(v.data, v.numel, [](double x) { return x != x; }); break;
        case Class::Inf: r = count_if<L>(v.data, v.numel, [](double x) { return std::isinf(x); }); break;
        case Class::Finite: r = count_if<L>(v.data, v.numel, [](double x) { return std::isfinite(x); }); break;
        case Class::Zero: r = count_if<L>(v.data, v.numel, [](double x) { return x == 0; }); break;
        case Class::NonZero: r = count_if<L>(v.data, v.numel, [](double x) { return x != 0; }); break;
      }
    });
    return r;
  }
  Op op = parse_op(name);
  if (!op_is_comparison(op))
    return result_errorf(ctx,
                         "%s: unknown op '%s' (expected = != < <= > >= with x, or nan, inf, finite, zero, nonzero)", fn,
                         name.c_str()),
           -1;
  if (argc < 3) return result_errorf(ctx, "%s: op '%s' needs an operand x", fn, name.c_str()), -1;
  if (sqlite3_value_type(argv[2]) == SQLITE_NULL) return -2;
  if (v.dtype == DType::String) {
    if (op != Op::Eq && op != Op::Ne) return result_errorf(ctx, "%s: strings support only = and !=", fn), -1;
    std::string x;
    if (!get_text(ctx, argv, 2, fn, "x", &x)) return -1;
    StringCursor c(v);
    int64_t r = 0;
    for (int64_t i = 0; i < v.numel; ++i) r += (c.next() == x) == (op == Op::Eq);
    return r;
  }
  if (!require_real(ctx, v, fn, 0)) return -1;
  double x;
  if (!get_double(ctx, argv, 2, fn, "x", &x)) return -1;
  int64_t r = 0;
  visit_real(v.dtype, [&](auto loader) {
    visit_op(op, [&](auto kop) {
      constexpr Op k = decltype(kop)::value;
      if constexpr (op_is_comparison(k))
        r = count_if<decltype(loader)>(v.data, v.numel, [x](double e) { return apply_op<k>(e, x) != 0; });
    });
  });
  return r;
}

void count_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guarded(ctx, "tensor_count", [&] {
    int64_t numel = 0;
    int64_t r = do_count(ctx, argc, argv, "tensor_count", &numel);
    if (r >= 0) sqlite3_result_int64(ctx, r);
  });
}

void fraction_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  guarded(ctx, "tensor_fraction", [&] {
    int64_t numel = 0;
    int64_t r = do_count(ctx, argc, argv, "tensor_fraction", &numel);
    if (r >= 0 && numel > 0) sqlite3_result_double(ctx, static_cast<double>(r) / static_cast<double>(numel));
  });
}

}  // namespace

int register_count_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  for (int nargs : {2, 3}) {
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, "tensor_count", nargs, kScalarFlags, nullptr, count_fn, nullptr, nullptr,
                                      nullptr);
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, "tensor_fraction", nargs, kScalarFlags, nullptr, fraction_fn, nullptr,
                                      nullptr, nullptr);
  }
  return rc;
}

}  // namespace trialdb::sqlext
