// The derivative of every differentiable intrinsic of tile/Intrinsics.def, one function each.
#include "autodiff/DerivativeRules.h"

namespace tessera::autodiff {

using tile::ExprPtr;
using tile::Intrinsic;
using namespace ex;

namespace {

using Grads = std::vector<ExprPtr>;
ExprPtr zero() { return int_lit(0); }
ExprPtr one() { return int_lit(1); }
ExprPtr sq(const ExprPtr &x) { return mul(x, x); }
ExprPtr cmp(Intrinsic op, const ExprPtr &a, const ExprPtr &b) { return call(op, {a, b}); }

Grads d_ident(const Grads &, const ExprPtr &, const ExprPtr &g) { return {g}; }
Grads d_add(const Grads &, const ExprPtr &, const ExprPtr &g) { return {g, g}; }
Grads d_sub(const Grads &, const ExprPtr &, const ExprPtr &g) { return {g, neg(g)}; }
Grads d_mul(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {mul(g, a[1]), mul(g, a[0])};
}
// d(a/b)/db = -a/b^2 = -y/b.
Grads d_div(const Grads &a, const ExprPtr &y, const ExprPtr &g) {
  return {div(g, a[1]), neg(div(mul(g, y), a[1]))};
}
Grads d_neg(const Grads &, const ExprPtr &, const ExprPtr &g) { return {neg(g)}; }
// Ties go to the first argument, so exactly one argument gets the gradient.
Grads d_max(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {select(cmp(Intrinsic::CmpGe, a[0], a[1]), g, zero()),
          select(cmp(Intrinsic::CmpLt, a[0], a[1]), g, zero())};
}
Grads d_min(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {select(cmp(Intrinsic::CmpLe, a[0], a[1]), g, zero()),
          select(cmp(Intrinsic::CmpGt, a[0], a[1]), g, zero())};
}
Grads d_cond(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {nullptr, select(a[0], g, zero()), select(a[0], zero(), g)};
}
// d(a^b)/da = b a^(b-1); d/db = a^b log a, taken as 0 where a <= 0 (log undefined; 0^b has slope
// 0).
Grads d_pow(const Grads &a, const ExprPtr &y, const ExprPtr &g) {
  return {mul(g, mul(a[1], call(Intrinsic::Pow, {a[0], sub(a[1], one())}))),
          select(cmp(Intrinsic::CmpGt, a[0], zero()), mul(g, mul(y, call(Intrinsic::Log, {a[0]}))),
                 zero())};
}
Grads d_exp(const Grads &, const ExprPtr &y, const ExprPtr &g) { return {mul(g, y)}; }
Grads d_log(const Grads &a, const ExprPtr &, const ExprPtr &g) { return {div(g, a[0])}; }
Grads d_sqrt(const Grads &, const ExprPtr &y, const ExprPtr &g) { return {div(g, mul(lit(2), y))}; }
Grads d_tanh(const Grads &, const ExprPtr &y, const ExprPtr &g) {
  return {mul(g, sub(one(), sq(y)))};
}
Grads d_sin(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {mul(g, call(Intrinsic::Cos, {a[0]}))};
}
Grads d_cos(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {neg(mul(g, call(Intrinsic::Sin, {a[0]})))};
}
Grads d_tan(const Grads &, const ExprPtr &y, const ExprPtr &g) {
  return {mul(g, add(one(), sq(y)))};
}
Grads d_asin(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {div(g, call(Intrinsic::Sqrt, {sub(one(), sq(a[0]))}))};
}
Grads d_acos(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {neg(div(g, call(Intrinsic::Sqrt, {sub(one(), sq(a[0]))})))};
}
Grads d_atan(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {div(g, add(one(), sq(a[0])))};
}
Grads d_sinh(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {mul(g, call(Intrinsic::Cosh, {a[0]}))};
}
Grads d_cosh(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {mul(g, call(Intrinsic::Sinh, {a[0]}))};
}
// d erf(x)/dx = 2/sqrt(pi) exp(-x^2).
Grads d_erf(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {mul(g, mul(lit(1.1283791670955126), call(Intrinsic::Exp, {neg(sq(a[0]))})))};
}
Grads d_sigmoid(const Grads &, const ExprPtr &y, const ExprPtr &g) {
  return {mul(g, mul(y, sub(one(), y)))};
}
// sign(x): 0 at 0.
Grads d_abs(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {select(cmp(Intrinsic::CmpGt, a[0], zero()), g,
                 select(cmp(Intrinsic::CmpLt, a[0], zero()), neg(g), zero()))};
}
// Piecewise constant: zero almost everywhere.
Grads d_step(const Grads &a, const ExprPtr &, const ExprPtr &) { return Grads(a.size(), nullptr); }
Grads d_relu(const Grads &a, const ExprPtr &, const ExprPtr &g) {
  return {select(cmp(Intrinsic::CmpGt, a[0], zero()), g, zero())};
}
// A cast between floats passes the gradient; the bit width is no tensor.
Grads d_as_float(const Grads &, const ExprPtr &, const ExprPtr &g) { return {g, nullptr}; }

}  // namespace

ElementwiseRule elementwise_rule(Intrinsic op) {
  switch (op) {
    case Intrinsic::Ident: return d_ident;
    case Intrinsic::Add: return d_add;
    case Intrinsic::Sub: return d_sub;
    case Intrinsic::Mul: return d_mul;
    case Intrinsic::Div: return d_div;
    case Intrinsic::Neg: return d_neg;
    case Intrinsic::Max: return d_max;
    case Intrinsic::Min: return d_min;
    case Intrinsic::Cond: return d_cond;
    case Intrinsic::Pow: return d_pow;
    case Intrinsic::Exp: return d_exp;
    case Intrinsic::Log: return d_log;
    case Intrinsic::Sqrt: return d_sqrt;
    case Intrinsic::Tanh: return d_tanh;
    case Intrinsic::Sin: return d_sin;
    case Intrinsic::Cos: return d_cos;
    case Intrinsic::Tan: return d_tan;
    case Intrinsic::Asin: return d_asin;
    case Intrinsic::Acos: return d_acos;
    case Intrinsic::Atan: return d_atan;
    case Intrinsic::Sinh: return d_sinh;
    case Intrinsic::Cosh: return d_cosh;
    case Intrinsic::Erf: return d_erf;
    case Intrinsic::Sigmoid: return d_sigmoid;
    case Intrinsic::Abs: return d_abs;
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round: return d_step;
    case Intrinsic::Relu: return d_relu;
    case Intrinsic::AsFloat: return d_as_float;
    default: return nullptr;  // comparisons, bit ops, integer and bool casts, specials
  }
}

}  // namespace tessera::autodiff
