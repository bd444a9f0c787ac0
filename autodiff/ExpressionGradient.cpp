// Reverse mode through one elementwise expression tree, and the specials at a statement's root.
#include "autodiff/DerivativeRules.h"

#include "tile/Diagnostics.h"

namespace tessera::autodiff {

using tile::Expr;
using tile::ExprPtr;
using tile::Intrinsic;

namespace {

bool expr_active(const GradientBuilder &b, const ExprPtr &e) {
  switch (e->kind) {
    case Expr::Kind::Ref: return b.active.count(e->name) != 0;
    case Expr::Kind::Call:
      if (!differentiable(b.kind_of(e))) return false;
      for (const auto &a : e->args)
        if (expr_active(b, a)) return true;
      return false;
    default: return false;
  }
}

// `g` is the gradient of `node` (whose value is `y`), already of node's shape.
void backprop(GradientBuilder &b, const ExprPtr &node, const ExprPtr &y, const ExprPtr &g,
              const std::string &hint) {
  if (!expr_active(b, node)) return;
  if (node->kind == Expr::Kind::Ref) {
    if (differentiable(b.kind(node->name))) b.add_grad(node->name, b.name_of(g, "d" + node->name));
    return;
  }
  ElementwiseRule rule = elementwise_rule(node->op);
  if (!rule) return;
  // Several uses of g in one rule must not copy a whole expression tree: name it first.
  ExprPtr gref = ex::ref(b.name_of(g, hint));
  std::vector<ExprPtr> grads = rule(node->args, y, gref);
  Dims shape = b.shape_of(node);
  for (size_t i = 0; i < node->args.size() && i < grads.size(); ++i) {
    const ExprPtr &arg = node->args[i];
    if (!grads[i] || !expr_active(b, arg)) continue;
    ExprPtr gi = b.unbroadcast(grads[i], shape, b.shape_of(arg), hint);
    backprop(b, arg, arg, gi, hint);
  }
}

}  // namespace

void expression_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const ExprPtr &e = s.expr();
  ExprPtr g = ex::ref(d_out);
  std::string hint = "d" + s.output;
  if (e->kind != Expr::Kind::Call || !tile::is_special(e->op)) {
    backprop(b, e, ex::ref(s.output), g, hint);
    return;
  }
  switch (e->op) {
    case Intrinsic::Gather: {
      // Rows gathered several times add up: the gradient is a scatter of dO into X's shape.
      const ExprPtr &x = e->args[0];
      ExprPtr dx = ex::call(Intrinsic::Scatter, {g, e->args[1], x});
      if (expr_active(b, x)) backprop(b, x, x, ex::ref(b.emit(dx, hint)), hint);
      return;
    }
    case Intrinsic::Scatter: {
      const ExprPtr &x = e->args[0];
      ExprPtr dx = ex::call(Intrinsic::Gather, {g, e->args[1]});
      if (expr_active(b, x)) backprop(b, x, x, ex::ref(b.emit(dx, hint)), hint);
      return;
    }
    case Intrinsic::Reshape: {
      const ExprPtr &x = e->args[0];
      std::vector<ExprPtr> args{g};
      for (const auto &d : b.shape_of(x)) args.push_back(d);
      if (expr_active(b, x))
        backprop(b, x, x, ex::ref(b.emit(ex::call(Intrinsic::Reshape, args), hint)), hint);
      return;
    }
    default: return;  // shape, index, prng_*: integer or random values, not differentiable
  }
}

}  // namespace tessera::autodiff
