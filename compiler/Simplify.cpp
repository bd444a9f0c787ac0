#include "compiler/Simplify.h"

#include <algorithm>

#include "compiler/IRMutator.h"
#include "compiler/Substitute.h"

namespace tessera::compiler {

namespace {

const IntImm *int_imm(const Expr &e) { return as<IntImm>(e); }

bool is_const(const Expr &e, int64_t v) {
  auto *i = int_imm(e);
  return i && i->value == v;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

class Simplifier : public IRMutator {
 public:
  using IRMutator::visit;
  Expr visit(const Binary *op, const Expr &self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    using Op = Binary::Op;
    if (tile::is_integer(op->type.dtype) && op->type.lanes == 1) {
      auto *x = int_imm(a), *y = int_imm(b);
      if (x && y) {
        int64_t u = x->value, v = y->value;
        switch (op->op) {
          case Op::Add: return IntImm::make(op->type, u + v);
          case Op::Sub: return IntImm::make(op->type, u - v);
          case Op::Mul: return IntImm::make(op->type, u * v);
          case Op::Div:
            if (v != 0) return IntImm::make(op->type, floor_div(u, v));
            break;
          case Op::Mod:
            if (v != 0) return IntImm::make(op->type, u - floor_div(u, v) * v);
            break;
          case Op::Min: return IntImm::make(op->type, std::min(u, v));
          case Op::Max: return IntImm::make(op->type, std::max(u, v));
          default: break;
        }
      }
      if (op->op == Op::Add && is_const(a, 0)) return b;
      if ((op->op == Op::Add || op->op == Op::Sub) && is_const(b, 0)) return a;
      if (op->op == Op::Mul && (is_const(a, 0) || is_const(b, 1))) return a;
      if (op->op == Op::Mul && (is_const(b, 0) || is_const(a, 1))) return b;
      if (op->op == Op::Div && is_const(b, 1)) return a;
      // x + (-c) reads better as x - c.
      if (op->op == Op::Add && y && y->value < 0)
        return Binary::make(Op::Sub, a, IntImm::make(op->type, -y->value));
    }
    if (a == op->a && b == op->b) return self;
    return Binary::make(op->op, a, b);
  }
  Stmt visit(const For *op, const Stmt &self) override {
    Stmt s = IRMutator::visit(op, self);
    auto *f = as<For>(s);
    // A loop of one iteration is its body at the loop's start.
    if (f && is_const(f->extent, 1) && f->for_kind != ForKind::Vectorized)
      return mutate(substitute(f->body, {{f->var, f->min}}));
    return s;
  }
};

}  // namespace

Expr simplify(const Expr &e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt &s) { return Simplifier().mutate(s); }

}  // namespace tessera::compiler
