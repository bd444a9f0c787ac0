#include "compiler/Vectorize.h"

#include <algorithm>

#include "compiler/IRMutator.h"
#include "compiler/Simplify.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

Expr widen(const Expr &e, int lanes) {
  if (e->type.lanes == lanes) return e;
  TESSERA_INTERNAL_ASSERT(e->type.lanes == 1, "mixing vectors of different widths");
  return Broadcast::make(e, lanes);
}

// Widens one loop body in which `var` is the vector lane index.
class Widen : public IRMutator {
 public:
  Widen(std::string var, int lanes) : var_(std::move(var)), lanes_(lanes) {}
  using IRMutator::visit;

  Expr visit(const Var *op, const Expr &self) override {
    if (op->name != var_) return self;
    return Ramp::make(IntImm::make(op->type, 0), IntImm::make(op->type, 1), lanes_);
  }
  Expr visit(const Binary *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    if (a == op->a && b == op->b) return self;
    int lanes = std::max(a->type.lanes, b->type.lanes);
    using Op = Binary::Op;
    // Affine index math stays a Ramp: (base + s*lane) + x and (base + s*lane) * c.
    auto *ra = as<Ramp>(a), *rb = as<Ramp>(b);
    if (ra && b->type.lanes == 1 && (op->op == Op::Add || op->op == Op::Sub))
      return Ramp::make(simplify(Binary::make(op->op, ra->base, b)), ra->stride, lanes);
    if (rb && a->type.lanes == 1 && op->op == Op::Add)
      return Ramp::make(simplify(Binary::make(Op::Add, a, rb->base)), rb->stride, lanes);
    if (ra && b->type.lanes == 1 && op->op == Op::Mul)
      return Ramp::make(simplify(Binary::make(Op::Mul, ra->base, b)),
                        simplify(Binary::make(Op::Mul, ra->stride, b)), lanes);
    if (rb && a->type.lanes == 1 && op->op == Op::Mul)
      return Ramp::make(simplify(Binary::make(Op::Mul, a, rb->base)),
                        simplify(Binary::make(Op::Mul, a, rb->stride)), lanes);
    return Binary::make(op->op, widen(a, lanes), widen(b, lanes));
  }
  Expr visit(const Cast *op, const Expr &self) override {
    Expr v = mutate(op->value);
    if (v == op->value) return self;
    return Cast::make(op->type.with_lanes(v->type.lanes), v);
  }
  Expr visit(const Select *op, const Expr &self) override {
    Expr c = mutate(op->cond), a = mutate(op->true_value), b = mutate(op->false_value);
    if (c == op->cond && a == op->true_value && b == op->false_value) return self;
    int lanes = std::max({c->type.lanes, a->type.lanes, b->type.lanes});
    return Select::make(c, widen(a, lanes), widen(b, lanes));
  }
  Expr visit(const Call *op, const Expr &self) override {
    std::vector<Expr> args;
    int lanes = 1;
    for (const auto &a : op->args)
      args.push_back(mutate(a)), lanes = std::max(lanes, args.back()->type.lanes);
    if (lanes == 1) return self;
    for (auto &a : args) a = widen(a, lanes);
    return Call::make(op->type.with_lanes(lanes), op->op, args);
  }
  Stmt visit(const Store *op, const Stmt &self) override {
    Expr i = mutate(op->index), v = mutate(op->value);
    if (i == op->index && v == op->value) return self;
    int lanes = std::max(i->type.lanes, v->type.lanes);
    return Store::make(op->buffer, widen(i, lanes), widen(v, lanes));
  }
  Stmt visit(const IfThenElse *op, const Stmt &self) override {
    Expr c = mutate(op->cond);
    TESSERA_INTERNAL_ASSERT(c->type.lanes == 1, "a guard depends on the vectorized index " + var_);
    return IRMutator::visit(op, self);
  }
  Stmt visit(const LetStmt *op, const Stmt &self) override {
    Expr v = mutate(op->value);
    TESSERA_INTERNAL_ASSERT(v->type.lanes == 1, "a let depends on the vectorized index " + var_);
    return IRMutator::visit(op, self);
  }

 private:
  std::string var_;
  int lanes_;
};

class Vectorizer : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const For *op, const Stmt &self) override {
    Stmt s = IRMutator::visit(op, self);
    auto *f = as<For>(s);
    if (!f || f->for_kind != ForKind::Vectorized) return s;
    auto *extent = as<IntImm>(f->extent);
    TESSERA_INTERNAL_ASSERT(extent && extent->value > 1, "vectorized loop of non-constant extent");
    Stmt body = f->body;
    // Shift the loop to start at 0 so the lane index is a Ramp from 0.
    if (!(as<IntImm>(f->min) && as<IntImm>(f->min)->value == 0)) {
      return s;  // not produced by the scheduler; left for the backend
    }
    return simplify(Widen(f->var, static_cast<int>(extent->value)).mutate(body));
  }
};

}  // namespace

Stmt vectorize_loops(const Stmt &s) { return Vectorizer().mutate(s); }

}  // namespace tessera::compiler
