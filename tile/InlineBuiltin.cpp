#include "tile/InlineBuiltin.h"

namespace tessera::tile {

namespace {

class Inliner {
 public:
  Inliner(const Statement &s, const std::function<std::string(const std::string &)> &fresh)
      : s_(s), call_(s.builtin()), fresh_(fresh) {}

  std::vector<Statement> run() {
    switch (call_.fn) {
      case Builtin::Softmax: softmax(false); break;
      case Builtin::LogSoftmax: softmax(true); break;
      case Builtin::BinaryCrossentropy: binary_crossentropy(); break;
      // Forward it is the identity; only its gradient differs (autodiff/BuiltinRules.cpp).
      case Builtin::ReverseGrad: define(s_.output, call_.args[0]); break;
    }
    return std::move(out_);
  }

 private:
  ExprPtr arg(size_t i) const { return call_.args[i]; }
  ExprPtr ref(const std::string &name) const { return Expr::make_ref(name, call_.range); }
  ExprPtr lit(int64_t v) const { return Expr::make_int(v, call_.range); }
  ExprPtr call(Intrinsic op, std::vector<ExprPtr> args) const {
    return Expr::make_call(op, std::move(args), call_.range);
  }

  Statement statement(const std::string &name) const {
    Statement t;
    t.output = name;
    t.range = s_.range;
    return t;
  }

  void define(const std::string &name, ExprPtr e) {
    Statement t = statement(name);
    t.body = std::move(e);
    out_.push_back(std::move(t));
  }

  // NAME[i, 0 : ROWS, 1] = agg(X[i, j]): one value per row of the 2-D tensor X, as a column.
  void per_row(const std::string &name, AggOp agg, const std::string &x) {
    PolyPtr i = Poly::make_index("i", call_.range), j = Poly::make_index("j", call_.range);
    Contraction c;
    c.agg = agg;
    c.output = {name, {i, Poly::make_int(0, call_.range)}, call_.range};
    c.sizes = {arg(1), lit(1)};
    c.inputs = {Access{x, {i, j}, call_.range}};
    Statement t = statement(name);
    t.body = std::move(c);
    out_.push_back(std::move(t));
  }

  // Subtracting the row's maximum keeps exp() finite; it cancels in the quotient.
  void softmax(bool log) {
    const std::string &x = arg(0)->name;
    std::string max = fresh_("max"), exp = fresh_("exp"), sum = fresh_("sum");
    per_row(max, AggOp::Max, x);
    define(exp, call(Intrinsic::Exp, {call(Intrinsic::Sub, {ref(x), ref(max)})}));
    per_row(sum, AggOp::Sum, exp);
    if (!log) return define(s_.output, call(Intrinsic::Div, {ref(exp), ref(sum)}));
    // log(e^(x - max) / sum) = x - (max + log(sum))
    define(s_.output,
           call(Intrinsic::Sub,
                {ref(x), call(Intrinsic::Add, {ref(max), call(Intrinsic::Log, {ref(sum)})})}));
  }

  // -t log(p) - (1 - t) log(1 - p); the third argument matters only to the gradient.
  void binary_crossentropy() {
    ExprPtr p = arg(0), t = arg(1);
    ExprPtr hit = call(Intrinsic::Mul, {call(Intrinsic::Neg, {t}), call(Intrinsic::Log, {p})});
    ExprPtr miss =
        call(Intrinsic::Mul, {call(Intrinsic::Sub, {lit(1), t}),
                              call(Intrinsic::Log, {call(Intrinsic::Sub, {lit(1), p})})});
    define(s_.output, call(Intrinsic::Sub, {hit, miss}));
  }

  const Statement &s_;
  const BuiltinCall &call_;
  const std::function<std::string(const std::string &)> &fresh_;
  std::vector<Statement> out_;
};

}  // namespace

std::vector<Statement>
inline_builtin(const Statement &s, const std::function<std::string(const std::string &)> &fresh) {
  return Inliner(s, fresh).run();
}

}  // namespace tessera::tile
