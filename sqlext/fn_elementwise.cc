// Elementwise operations returning blobs, so they compose with every other function:
//   tensor_map(v, op [, x])    unary ops, or v op x with a scalar x
//   tensor_binop(a, op, b)     a op b for equal shapes (or one side a single element)
// Arithmetic results are float64 whatever the input dtype (exact for every input but int64
// beyond 2^53); comparisons and isnan/isinf/isfinite give bool (0/1) blobs.
//
// Examples (tests/sqlext/test_doc_examples.py runs them on the fixture trial pt_bad_init):
//   sqlite> SELECT tensor_json(tensor_map(v, 'abs')), tensor_json(tensor_map(v, '*', 1.5)),
//      ...>        tensor_json(tensor_map(v, '>=', 0))
//      ...>   FROM (SELECT tensor_from_json('[-2, 0, 3]', 'int16') AS v);
//   [2,0,3]|[-3,0,4.5]|[false,true,true]
//   sqlite> SELECT tensor_json(tensor_binop(tensor_from_json('[[1, 2], [3, 4]]'), '-', tensor_from_json('1')));
//   [[0,1],[2,3]]
#include "sqlext/elementwise_ops.h"
#include "sqlext/tensor_arg.h"

namespace trialdb::sqlext {

namespace {

constexpr const char* kMapOps =
    "abs, neg, sign, sqrt, square, exp, log, isnan, isinf, isfinite, "
    "+, -, *, /, pow, min, max, =, !=, <, <=, >, >=";
constexpr const char* kBinOps = "+, -, *, /, pow, min, max, =, !=, <, <=, >, >=";

bool get_op(sqlite3_context* ctx, sqlite3_value** argv, int argno, const char* fn, Op* op) {
  std::string name;
  if (!get_text(ctx, argv, argno, fn, "op", &name)) return false;
  *op = parse_op(name);
  if (*op == Op::Invalid) {
    result_errorf(ctx, "%s: unknown op '%s' (expected one of %s)", fn, name.c_str(),
                  std::string_view(fn) == "tensor_map" ? kMapOps : kBinOps);
    return false;
  }
  return true;
}

// out[i] = op(a[i * sa], b[i * sb]); sa/sb are 0 for a broadcast single element. Writes bool
// bytes or float64 depending on the op.
template <Op kOp, class LA, class LB>
void apply(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, int64_t n, double scalar, bool use_scalar,
           uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) {
    double x = LA::load(a, i * sa);
    double y = use_scalar ? scalar : LB::load(b, i * sb);
    double r = apply_op<kOp>(x, y);
    if constexpr (op_gives_bool(kOp)) {
      out[i] = r != 0;
    } else {
      std::memcpy(out + 8 * i, &r, 8);
    }
  }
}

void map_fn(sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  const char* fn = "tensor_map";
  guarded(ctx, fn, [&] {
    TensorArg t;
    if (get_tensor(ctx, argv, 0, fn, &t) != kArgOk) return;
    const TensorView& v = t.view;
    Op op;
    if (!require_real(ctx, v, fn, 0) || !get_op(ctx, argv, 1, fn, &op)) return;
    double x = 0;
    if (op_is_unary(op)) {
      if (argc > 2)
        return result_errorf(ctx, "%s: op '%s' takes no operand", fn,
                             reinterpret_cast<const char*>(sqlite3_value_text(argv[1])));
    } else {
      if (argc < 3)
        return result_errorf(ctx, "%s: op '%s' needs an operand x", fn,
                             reinterpret_cast<const char*>(sqlite3_value_text(argv[1])));
      if (sqlite3_value_type(argv[2]) == SQLITE_NULL) return;  // v op NULL is NULL
      if (!get_double(ctx, argv, 2, fn, "x", &x)) return;
    }
    DType out_type = op_gives_bool(op) ? DType::Bool : DType::Float64;
    ResultBlob out(ctx, out_type, v.dims, v.ndim, static_cast<size_t>(v.numel) * dtype_size(out_type));
    if (!out.ok()) return;
    visit_real(v.dtype, [&](auto loader) {
      using L = decltype(loader);
      visit_op(op, [&](auto kop) {
        apply<decltype(kop)::value, L, L>(v.data, 1, nullptr, 0, v.numel, x, true, out.data());
      });
    });
    out.finish();
  });
}

void binop_fn(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const char* fn = "tensor_binop";
  guarded(ctx, fn, [&] {
    TensorArg ta, tb;
    ArgStatus sa = get_tensor(ctx, argv, 0, fn, &ta);
    if (sa == kArgError) return;
    ArgStatus sb = get_tensor(ctx, argv, 2, fn, &tb);
    if (sb == kArgError || sa == kArgNull || sb == kArgNull) return;
    const TensorView &a = ta.view, &b = tb.view;
    Op op;
    if (!require_real(ctx, a, fn, 0) || !require_real(ctx, b, fn, 2) || !get_op(ctx, argv, 1, fn, &op)) return;
    if (op_is_unary(op))
      return result_errorf(ctx, "%s: op '%s' is unary; use tensor_map", fn,
                           reinterpret_cast<const char*>(sqlite3_value_text(argv[1])));
    // Equal shapes, or one side a single element broadcast against the other.
    const TensorView* shape = &a;
    int64_t stride_a = 1, stride_b = 1;
    if (shape_json(a.dims, a.ndim) != shape_json(b.dims, b.ndim)) {
      if (b.numel == 1) {
        stride_b = 0;
      } else if (a.numel == 1) {
        stride_a = 0;
        shape = &b;
      } else {
        return result_errorf(ctx, "%s: shapes %s and %s differ", fn, shape_json(a.dims, a.ndim).c_str(),
                             shape_json(b.dims, b.ndim).c_str());
      }
    }
    DType out_type = op_gives_bool(op) ? DType::Bool : DType::Float64;
    ResultBlob out(ctx, out_type, shape->dims, shape->ndim, static_cast<size_t>(shape->numel) * dtype_size(out_type));
    if (!out.ok()) return;
    // b as float64 keeps the instantiations to (dtype of a) x op rather than dtype^2 x op.
    std::vector<double> bd = to_doubles(b);
    const uint8_t* bp = reinterpret_cast<const uint8_t*>(bd.data());
    visit_real(a.dtype, [&](auto la) {
      visit_op(op, [&](auto kop) {
        apply<decltype(kop)::value, decltype(la), LoadAs<double>>(a.data, stride_a, bp, stride_b, shape->numel, 0,
                                                                  false, out.data());
      });
    });
    out.finish();
  });
}

}  // namespace

int register_elementwise_functions(sqlite3* db) {
  int rc = SQLITE_OK;
  auto add = [&](const char* name, int nargs, void (*f)(sqlite3_context*, int, sqlite3_value**)) {
    if (rc == SQLITE_OK)
      rc = sqlite3_create_function_v2(db, name, nargs, kScalarFlags, nullptr, f, nullptr, nullptr, nullptr);
  };
  add("tensor_map", 2, map_fn);
  add("tensor_map", 3, map_fn);
  add("tensor_binop", 3, binop_fn);
  return rc;
}

}  // namespace trialdb::sqlext
