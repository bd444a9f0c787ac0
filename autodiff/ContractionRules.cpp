// Backward rules of contractions: each input's gradient is again a contraction over the same
// index space (same accesses, same constraints), so conv and matmul backprop fall out.
#include "autodiff/DerivativeRules.h"

#include "tile/Diagnostics.h"

namespace tessera::autodiff {

using tile::Access;
using tile::AggOp;
using tile::CombOp;
using tile::Contraction;
using tile::ExprPtr;
using tile::Intrinsic;

namespace {

Access with_tensor(Access a, const std::string &tensor) {
  a.tensor = tensor;
  return a;
}

Access out_access(const Contraction &c, const std::string &tensor) {
  return with_tensor(c.output, tensor);
}

// 0 <= poly < dim for every index of an access the new contraction no longer reads, so that it
// sums over exactly the forward contraction's points.
void keep_range(GradientBuilder &b, const Access &a, std::vector<tile::Constraint> &out) {
  const Dims &d = b.dims(a.tensor);
  for (size_t i = 0; i < a.indices.size() && i < d.size(); ++i) {
    tile::Constraint k;
    k.poly = a.indices[i];
    k.bound = d[i];
    out.push_back(k);
  }
}

// A sum contraction writing the gradient of input `i` at its own access, over `dims(input)`.
Contraction grad_contraction(GradientBuilder &b, const Contraction &c, size_t i) {
  Contraction g;
  g.agg = AggOp::Sum;
  g.output = c.inputs[i];
  g.sizes = b.dims(c.inputs[i].tensor);
  g.constraints = c.constraints;
  return g;
}

bool wants(GradientBuilder &b, const std::string &tensor) {
  return b.active.count(tensor) && differentiable(b.kind(tensor));
}

void add(GradientBuilder &b, const std::string &tensor, Contraction g, const std::string &hint) {
  b.add_grad(tensor, b.emit(std::move(g), hint));
}

}  // namespace

void sum_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!wants(b, c.inputs[i].tensor)) continue;
    Contraction g = grad_contraction(b, c, i);
    g.inputs.push_back(out_access(c, d_out));
    if (c.inputs.size() == 2) {
      g.comb = CombOp::Mul;
      g.inputs.push_back(c.inputs[1 - i]);
    }
    add(b, c.inputs[i].tensor, std::move(g), "d" + c.inputs[i].tensor);
  }
}

void sum_of_sum_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  for (size_t i = 0; i < 2; ++i) {
    if (!wants(b, c.inputs[i].tensor)) continue;
    Contraction g = grad_contraction(b, c, i);
    g.inputs.push_back(out_access(c, d_out));
    keep_range(b, c.inputs[1 - i], g.constraints);
    add(b, c.inputs[i].tensor, std::move(g), "d" + c.inputs[i].tensor);
  }
}

void max_min_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  if (c.comb != CombOp::None)
    tile::user_error(
        b.source().source, s.range,
        "autodiff: a max or min contraction over a combination is not differentiable here");
  if (!wants(b, c.inputs[0].tensor)) return;
  Contraction g = grad_contraction(b, c, 0);
  g.comb = CombOp::Cond;
  g.inputs = {c.inputs[0], out_access(c, s.output), out_access(c, d_out)};
  add(b, c.inputs[0].tensor, std::move(g), "d" + c.inputs[0].tensor);
}

void product_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  if (c.comb != CombOp::None)
    tile::user_error(
        b.source().source, s.range,
        "autodiff: a product contraction over a combination is not differentiable here");
  const Access &in = c.inputs[0];
  if (!wants(b, in.tensor)) return;
  std::string h = "d" + in.tensor;
  ExprPtr x = ex::ref(in.tensor), is_zero = ex::call(Intrinsic::CmpEq, {x, ex::int_lit(0)});
  // Per output element: the number of zero factors and the product of the non-zero ones.
  std::string zero_flag = b.emit(ex::select(is_zero, ex::int_lit(1), ex::int_lit(0)), h);
  std::string nonzero = b.emit(ex::select(is_zero, ex::int_lit(1), x), h);
  Contraction zc = c, pc = c;
  zc.agg = AggOp::Sum;
  zc.inputs = {with_tensor(in, zero_flag)};
  zc.default_tensor.reset();
  pc.inputs = {with_tensor(in, nonzero)};
  pc.default_tensor.reset();
  ExprPtr zeros = ex::ref(b.emit(zc, h)), prod = ex::ref(b.emit(pc, h));
  ExprPtr g_prod = ex::mul(ex::ref(d_out), prod);
  // No zero: dI = dO * P / I. One zero: only that element gets dO * P. Two or more: nothing.
  std::string g0 = b.emit(
      ex::select(ex::call(Intrinsic::CmpEq, {zeros, ex::int_lit(0)}), g_prod, ex::int_lit(0)), h);
  std::string g1 = b.emit(
      ex::select(ex::call(Intrinsic::CmpEq, {zeros, ex::int_lit(1)}), g_prod, ex::int_lit(0)), h);
  std::string inv = b.emit(ex::select(is_zero, ex::int_lit(0), ex::div(ex::int_lit(1), x)), h);
  std::string at_zero = b.emit(ex::select(is_zero, ex::ref(nonzero), ex::int_lit(0)), h);
  Contraction d0 = grad_contraction(b, c, 0), d1 = grad_contraction(b, c, 0);
  d0.comb = d1.comb = CombOp::Mul;
  d0.inputs = {out_access(c, g0), with_tensor(in, inv)};
  d1.inputs = {out_access(c, g1), with_tensor(in, at_zero)};
  add(b, in.tensor, std::move(d0), h);
  add(b, in.tensor, std::move(d1), h);
}

void ternary_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  if (c.agg != AggOp::Sum && c.agg != AggOp::Assign)
    tile::user_error(b.source().source, s.range,
                     "autodiff: only sum and assign ternary contractions are differentiable here");
  if (!wants(b, c.inputs[2].tensor)) return;
  Contraction g = grad_contraction(b, c, 2);
  g.comb = CombOp::Cond;
  g.inputs = {c.inputs[0], c.inputs[1], out_access(c, d_out)};
  add(b, c.inputs[2].tensor, std::move(g), "d" + c.inputs[2].tensor);
}

void default_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  const std::string &t = *c.default_tensor;
  if (!wants(b, t)) return;
  // Binding requires the default to have the output's shape; the gradient, which does not bind,
  // must say so itself rather than reach unbroadcast with a rank it cannot undo.
  const Dims from = b.dims(s.output), to = b.dims(t);
  if (to.size() != from.size())
    tile::user_error(b.source().source, c.default_range,
                     "the default '" + t + "' has rank " + std::to_string(to.size()) +
                         " but the output '" + s.output + "' has rank " +
                         std::to_string(from.size()) + "; a default must have the output's shape");
  // dO where some point wrote (max of copies of dO[out] over the forward points), 0 elsewhere.
  Contraction w;
  w.agg = AggOp::Max;
  w.output = c.output;
  w.sizes = c.sizes;
  w.constraints = c.constraints;
  w.inputs = {out_access(c, d_out)};
  for (const auto &a : c.inputs) keep_range(b, a, w.constraints);
  std::string h = "d" + t;
  std::string written = b.emit(std::move(w), h);
  ExprPtr unwritten = ex::sub(ex::ref(d_out), ex::ref(written));
  ExprPtr dt = b.unbroadcast(unwritten, from, to, h);
  b.add_grad(t, b.name_of(dt, h));
}

void contraction_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const Contraction &c = s.contraction();
  if (c.default_tensor) default_rule(b, s, d_out);
  if (c.comb == CombOp::Eq) return;  // bool result: not differentiable
  if (c.comb == CombOp::Cond) return ternary_rule(b, s, d_out);
  switch (c.agg) {
    case AggOp::Sum:
    case AggOp::Assign:
      if (c.comb == CombOp::Add) return sum_of_sum_rule(b, s, d_out);
      return sum_rule(b, s, d_out);
    case AggOp::Max:
    case AggOp::Min: return max_min_rule(b, s, d_out);
    case AggOp::Prod: return product_rule(b, s, d_out);
  }
}

}  // namespace tessera::autodiff
