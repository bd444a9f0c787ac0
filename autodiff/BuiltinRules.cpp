// The derivative of each builtin as PlaidML defines it (DerivDefines in its tile/lang/builtins.cc),
// used instead of differentiating the statements tile::inline_builtin writes for the builtin.
#include "autodiff/DerivativeRules.h"

namespace tessera::autodiff {

using tile::Builtin;
using tile::ExprPtr;
using tile::Intrinsic;
using tile::Poly;
using namespace ex;

namespace {

// Adds `g` to the gradient of tensor argument `arg`, summing away what broadcasting added.
void give(GradientBuilder &b, const ExprPtr &arg, const ExprPtr &g) {
  const std::string &x = arg->name;
  if (!b.active.count(x) || !differentiable(b.kind(x))) return;
  std::string hint = "d" + x;
  b.add_grad(x, b.name_of(b.unbroadcast(g, b.shape_of(g), b.dims(x), hint), hint));
}

// R[i, 0 : ROWS, 1] = +(X[i, j]): the sum of each row of the 2-D tensor X, as a column.
ExprPtr row_sum(GradientBuilder &b, const std::string &x, const ExprPtr &rows,
                const std::string &hint) {
  tile::Contraction c;
  auto i = Poly::make_index(b.fresh_index()), j = Poly::make_index(b.fresh_index());
  c.output.indices = {i, Poly::make_int(0)};
  c.sizes = {rows, int_lit(1)};
  c.inputs.push_back({x, {i, j}, {}});
  return ex::ref(b.emit(std::move(c), hint));
}

// Y = softmax(X): dX = Y dY - Y rowsum(Y dY).
void softmax_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const auto &a = s.builtin().args;
  ExprPtr y = ex::ref(s.output);
  std::string hint = "d" + s.output;
  std::string y_dy = b.emit(mul(ex::ref(d_out), y), hint);
  give(b, a[0], sub(ex::ref(y_dy), mul(y, row_sum(b, y_dy, a[1], hint))));
}

// Y = log(softmax(X)): dX = dY - softmax(X) rowsum(dY), with softmax(X) = exp(Y).
void logsoftmax_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const auto &a = s.builtin().args;
  ExprPtr softmax = call(Intrinsic::Exp, {ex::ref(s.output)});
  give(b, a[0], sub(ex::ref(d_out), mul(softmax, row_sum(b, d_out, a[1], "d" + s.output))));
}

// Y = -T log(P) - (1 - T) log(1 - P) with N = X3. PlaidML's derivative does not read dY: it is the
// gradient of sum(Y) / N, which is the loss when a Keras model averages Y over its N elements.
void binary_crossentropy_rule(GradientBuilder &b, const tile::Statement &s, const std::string &) {
  const auto &a = s.builtin().args;
  const ExprPtr &p = a[0], &t = a[1], &n = a[2];
  ExprPtr one = int_lit(1);
  give(b, p, div(add(neg(div(t, p)), div(sub(one, t), sub(one, p))), n));
  give(b, t, div(sub(call(Intrinsic::Log, {sub(one, p)}), call(Intrinsic::Log, {p})), n));
}

// Y = X forward; the gradient flows back reversed and scaled: dX = -X2 dY. X2 gets none.
void reverse_grad_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  const auto &a = s.builtin().args;
  give(b, a[0], mul(neg(a[1]), ex::ref(d_out)));
}

}  // namespace

void builtin_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out) {
  switch (s.builtin().fn) {
    case Builtin::Softmax: return softmax_rule(b, s, d_out);
    case Builtin::LogSoftmax: return logsoftmax_rule(b, s, d_out);
    case Builtin::BinaryCrossentropy: return binary_crossentropy_rule(b, s, d_out);
    case Builtin::ReverseGrad: return reverse_grad_rule(b, s, d_out);
  }
}

}  // namespace tessera::autodiff
