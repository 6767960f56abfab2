// The elementwise operators shared by tensor_map (tensor op scalar), tensor_binop (tensor op
// tensor), tensor_count and tensor_allclose: parsed once per call into an enum, applied in
// loops instantiated per operator so no per-element dispatch remains.
#pragma once
#include <cmath>
#include <string_view>
#include <type_traits>

namespace trialdb::sqlext {

enum class Op {
  // unary (tensor_map only) -> float64
  Abs,
  Neg,
  Sign,
  Sqrt,
  Square,
  Exp,
  Log,
  // unary -> bool
  IsNan,
  IsInf,
  IsFinite,
  // binary arithmetic -> float64
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Min,
  Max,
  // binary comparisons -> bool (NaN compares unequal to everything, as in numpy)
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Invalid,
};

inline Op parse_op(std::string_view s) {
  struct Name {
    const char* name;
    Op op;
  };
  static constexpr Name kNames[] = {
      {"abs", Op::Abs}, {"neg", Op::Neg}, {"sign", Op::Sign},   {"sqrt", Op::Sqrt},   {"square", Op::Square},
      {"exp", Op::Exp}, {"log", Op::Log}, {"isnan", Op::IsNan}, {"isinf", Op::IsInf}, {"isfinite", Op::IsFinite},
      {"+", Op::Add},   {"-", Op::Sub},   {"*", Op::Mul},       {"/", Op::Div},       {"pow", Op::Pow},
      {"min", Op::Min}, {"max", Op::Max}, {"=", Op::Eq},        {"==", Op::Eq},       {"!=", Op::Ne},
      {"<>", Op::Ne},   {"<", Op::Lt},    {"<=", Op::Le},       {">", Op::Gt},        {">=", Op::Ge},
  };
  for (const Name& n : kNames)
    if (s == n.name) return n.op;
  return Op::Invalid;
}

constexpr bool op_is_unary(Op op) { return op <= Op::IsFinite; }
constexpr bool op_gives_bool(Op op) { return (op >= Op::IsNan && op <= Op::IsFinite) || op >= Op::Eq; }
constexpr bool op_is_comparison(Op op) { return op >= Op::Eq && op <= Op::Ge; }

// numpy's elementwise result for one pair (y ignored by unary operators). Comparisons give 0/1.
template <Op kOp>
inline double apply_op(double x, double y) {
  if constexpr (kOp == Op::Abs) return std::fabs(x);
  if constexpr (kOp == Op::Neg) return -x;
  if constexpr (kOp == Op::Sign) return x > 0 ? 1.0 : x < 0 ? -1.0 : x;  // 0 stays 0, NaN stays NaN
  if constexpr (kOp == Op::Sqrt) return std::sqrt(x);
  if constexpr (kOp == Op::Square) return x * x;
  if constexpr (kOp == Op::Exp) return std::exp(x);
  if constexpr (kOp == Op::Log) return std::log(x);
  if constexpr (kOp == Op::IsNan) return std::isnan(x);
  if constexpr (kOp == Op::IsInf) return std::isinf(x);
  if constexpr (kOp == Op::IsFinite) return std::isfinite(x);
  if constexpr (kOp == Op::Add) return x + y;
  if constexpr (kOp == Op::Sub) return x - y;
  if constexpr (kOp == Op::Mul) return x * y;
  if constexpr (kOp == Op::Div) return x / y;
  if constexpr (kOp == Op::Pow) return std::pow(x, y);
  if constexpr (kOp == Op::Min) return (x != x || y != y) ? x + y : (x < y ? x : y);  // NaN propagates
  if constexpr (kOp == Op::Max) return (x != x || y != y) ? x + y : (x > y ? x : y);
  if constexpr (kOp == Op::Eq) return x == y;
  if constexpr (kOp == Op::Ne) return x != y;
  if constexpr (kOp == Op::Lt) return x < y;
  if constexpr (kOp == Op::Le) return x <= y;
  if constexpr (kOp == Op::Gt) return x > y;
  if constexpr (kOp == Op::Ge) return x >= y;
  return 0;
}

// Calls f(std::integral_constant<Op, op>) for a runtime op.
template <class F>
void visit_op(Op op, F&& f) {
#define TRIALDB_OP(name) \
  case Op::name: f(std::integral_constant<Op, Op::name>{}); return;
  switch (op) {
    TRIALDB_OP(Abs)
    TRIALDB_OP(Neg)
    TRIALDB_OP(Sign)
    TRIALDB_OP(Sqrt)
    TRIALDB_OP(Square)
    TRIALDB_OP(Exp)
    TRIALDB_OP(Log)
    TRIALDB_OP(IsNan)
    TRIALDB_OP(IsInf)
    TRIALDB_OP(IsFinite)
    TRIALDB_OP(Add)
    TRIALDB_OP(Sub)
    TRIALDB_OP(Mul)
    TRIALDB_OP(Div)
    TRIALDB_OP(Pow)
    TRIALDB_OP(Min)
    TRIALDB_OP(Max)
    TRIALDB_OP(Eq)
    TRIALDB_OP(Ne)
    TRIALDB_OP(Lt)
    TRIALDB_OP(Le)
    TRIALDB_OP(Gt)
    TRIALDB_OP(Ge)
    case Op::Invalid: return;
  }
#undef TRIALDB_OP
}

}  // namespace trialdb::sqlext
