#include "compiler/Simplify.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "compiler/IRMutator.h"
#include "compiler/Substitute.h"
#include "tile/Affine.h"

namespace tessera::compiler {

namespace {

const IntImm *int_imm(const Expr &e) { return as<IntImm>(e); }

bool is_const(const Expr &e, int64_t v) {
  auto *i = int_imm(e);
  return i && i->value == v;
}

using tile::floor_div;

// The truth of `u OP v` for a comparison or logic op, nothing for any other.
std::optional<bool> compare(Binary::Op op, int64_t u, int64_t v) {
  using Op = Binary::Op;
  switch (op) {
    case Op::EQ: return u == v;
    case Op::NE: return u != v;
    case Op::LT: return u < v;
    case Op::LE: return u <= v;
    case Op::GT: return u > v;
    case Op::GE: return u >= v;
    case Op::And: return u != 0 && v != 0;
    case Op::Or: return u != 0 || v != 0;
    default: return std::nullopt;
  }
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
    if (op->type.dtype == tile::DType::Bool && op->type.lanes == 1) {
      auto *x = int_imm(a), *y = int_imm(b);
      if (x && y && (tile::is_integer(a->type.dtype) || a->type.dtype == tile::DType::Bool))
        if (auto truth = compare(op->op, x->value, y->value))
          return IntImm::make(op->type, *truth ? 1 : 0);
      // false && e is false, true && e is e; likewise for ||.
      if (op->op == Op::And || op->op == Op::Or) {
        bool is_and = op->op == Op::And;
        for (auto [known, other] : {std::pair{x, b}, std::pair{y, a}}) {
          if (!known) continue;
          if ((known->value != 0) != is_and) return IntImm::make(op->type, is_and ? 0 : 1);
          if (other->type == op->type) return other;
        }
      }
    }
    if (a == op->a && b == op->b) return self;
    return Binary::make(op->op, a, b);
  }
  // A guard known at compile time goes, and with it what only it held (a null statement here
  // means nothing is left): a contraction with no valid point otherwise keeps its loads at
  // constant negative indices, which shader compilers reject even in code that never runs.
  Stmt visit(const IfThenElse *op, const Stmt &self) override {
    Expr cond = mutate(op->cond);
    if (auto *c = int_imm(cond)) return mutate(c->value != 0 ? op->then_case : op->else_case);
    Stmt then_case = mutate(op->then_case), else_case = mutate(op->else_case);
    if (!then_case && !else_case) return nullptr;
    if (!then_case) return IfThenElse::make(Not::make(cond), else_case);
    if (cond == op->cond && then_case == op->then_case && else_case == op->else_case) return self;
    return IfThenElse::make(cond, then_case, else_case);
  }
  Stmt visit(const Block *op, const Stmt &self) override {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (const auto &s : op->stmts) {
      Stmt m = mutate(s);
      changed |= m != s;
      if (m) stmts.push_back(std::move(m));
    }
    if (stmts.empty()) return nullptr;
    return changed ? Block::make(std::move(stmts)) : self;
  }
  Stmt visit(const LetStmt *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    if (!body) return nullptr;
    Expr value = mutate(op->value);
    return value == op->value && body == op->body ? self : LetStmt::make(op->var, value, body);
  }
  Stmt visit(const Allocate *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    if (!body) return nullptr;
    return body == op->body ? self
                            : Allocate::make(op->buffer, op->type, op->size, op->local, body);
  }
  Stmt visit(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    if (!body) return nullptr;
    Expr min = mutate(op->min), extent = mutate(op->extent);
    Stmt s = min == op->min && extent == op->extent && body == op->body
                 ? self
                 : For::make(op->var, min, extent, op->for_kind, body, op->gpu_dim);
    auto *f = as<For>(s);
    // A loop of one iteration is its body at the loop's start.
    if (f && is_const(f->extent, 1) && f->for_kind != ForKind::Vectorized)
      return mutate(substitute(f->body, {{f->var, f->min}}));
    return s;
  }
};

}  // namespace

Expr simplify(const Expr &e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt &s) {
  // A statement that does nothing at all stays as it was: loop IR has no empty statement.
  Stmt r = Simplifier().mutate(s);
  return r ? r : s;
}

}  // namespace tessera::compiler
