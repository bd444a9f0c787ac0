#include "compiler/IRVisitor.h"

#include <utility>

#include "compiler/IRMutator.h"

namespace tessera::compiler {

void IRVisitor::visit_expr(const Expr &e) {
  if (!e) return;
  switch (e->kind) {
    // clang-format off
#define LOOP_EXPR(Name) \
  case ExprKind::Name: return visit(static_cast<const Name *>(e.get()));
#include "compiler/IR.def"
    // clang-format on
  }
}

void IRVisitor::visit_stmt(const Stmt &s) {
  if (!s) return;
  switch (s->kind) {
    // clang-format off
#define LOOP_STMT(Name) \
  case StmtKind::Name: return visit(static_cast<const Name *>(s.get()));
#include "compiler/IR.def"
    // clang-format on
  }
}

void IRVisitor::visit(const IntImm *) {}
void IRVisitor::visit(const FloatImm *) {}
void IRVisitor::visit(const Var *) {}
void IRVisitor::visit(const Cast *op) { visit_expr(op->value); }
void IRVisitor::visit(const Binary *op) { visit_expr(op->a), visit_expr(op->b); }
void IRVisitor::visit(const Not *op) { visit_expr(op->a); }
void IRVisitor::visit(const Select *op) {
  visit_expr(op->cond), visit_expr(op->true_value), visit_expr(op->false_value);
}
void IRVisitor::visit(const Load *op) { visit_expr(op->index); }
void IRVisitor::visit(const Call *op) {
  for (const auto &a : op->args) visit_expr(a);
}
void IRVisitor::visit(const Broadcast *op) { visit_expr(op->value); }
void IRVisitor::visit(const Ramp *op) { visit_expr(op->base), visit_expr(op->stride); }
void IRVisitor::visit(const For *op) {
  visit_expr(op->min), visit_expr(op->extent), visit_stmt(op->body);
}
void IRVisitor::visit(const IfThenElse *op) {
  visit_expr(op->cond), visit_stmt(op->then_case), visit_stmt(op->else_case);
}
void IRVisitor::visit(const Store *op) { visit_expr(op->index), visit_expr(op->value); }
void IRVisitor::visit(const LetStmt *op) { visit_expr(op->value), visit_stmt(op->body); }
void IRVisitor::visit(const Block *op) {
  for (const auto &s : op->stmts) visit_stmt(s);
}
void IRVisitor::visit(const Allocate *op) { visit_stmt(op->body); }
void IRVisitor::visit(const Barrier *) {}

// ---- IRMutator --------------------------------------------------------------------------------

Expr IRMutator::mutate(const Expr &e) {
  if (!e) return e;
  switch (e->kind) {
#define LOOP_EXPR(Name) \
  case ExprKind::Name:  \
    return visit(static_cast<const Name *>(e.get()), e);
#include "compiler/IR.def"
  }
  return e;
}

Stmt IRMutator::mutate(const Stmt &s) {
  if (!s) return s;
  switch (s->kind) {
#define LOOP_STMT(Name) \
  case StmtKind::Name:  \
    return visit(static_cast<const Name *>(s.get()), s);
#include "compiler/IR.def"
  }
  return s;
}

Expr IRMutator::visit(const IntImm *, const Expr &self) { return self; }
Expr IRMutator::visit(const FloatImm *, const Expr &self) { return self; }
Expr IRMutator::visit(const Var *, const Expr &self) { return self; }
Expr IRMutator::visit(const Cast *op, const Expr &self) {
  Expr v = mutate(op->value);
  return v == op->value ? self : Cast::make(op->type.with_lanes(v->type.lanes), v);
}
Expr IRMutator::visit(const Binary *op, const Expr &self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  return a == op->a && b == op->b ? self : Binary::make(op->op, a, b);
}
Expr IRMutator::visit(const Not *op, const Expr &self) {
  Expr a = mutate(op->a);
  return a == op->a ? self : Not::make(a);
}
Expr IRMutator::visit(const Select *op, const Expr &self) {
  Expr c = mutate(op->cond), a = mutate(op->true_value), b = mutate(op->false_value);
  if (c == op->cond && a == op->true_value && b == op->false_value) return self;
  return Select::make(c, a, b);
}
Expr IRMutator::visit(const Load *op, const Expr &self) {
  Expr i = mutate(op->index);
  return i == op->index ? self : Load::make(op->type.with_lanes(1), op->buffer, i);
}
Expr IRMutator::visit(const Call *op, const Expr &self) {
  std::vector<Expr> args;
  bool changed = false;
  for (const auto &a : op->args) {
    args.push_back(mutate(a));
    changed |= args.back() != a;
  }
  if (!changed) return self;
  return Call::make(op->type.with_lanes(args.empty() ? op->type.lanes : args[0]->type.lanes),
                    op->op, args);
}
Expr IRMutator::visit(const Broadcast *op, const Expr &self) {
  Expr v = mutate(op->value);
  return v == op->value ? self : Broadcast::make(v, op->type.lanes);
}
Expr IRMutator::visit(const Ramp *op, const Expr &self) {
  Expr b = mutate(op->base), s = mutate(op->stride);
  return b == op->base && s == op->stride ? self : Ramp::make(b, s, op->type.lanes);
}

Stmt IRMutator::visit(const For *op, const Stmt &self) {
  Expr m = mutate(op->min), e = mutate(op->extent);
  Stmt b = mutate(op->body);
  if (m == op->min && e == op->extent && b == op->body) return self;
  return For::make(op->var, m, e, op->for_kind, b, op->gpu_dim);
}
Stmt IRMutator::visit(const IfThenElse *op, const Stmt &self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->then_case), e = mutate(op->else_case);
  if (c == op->cond && t == op->then_case && e == op->else_case) return self;
  return IfThenElse::make(c, t, e);
}
Stmt IRMutator::visit(const Store *op, const Stmt &self) {
  Expr i = mutate(op->index), v = mutate(op->value);
  return i == op->index && v == op->value ? self : Store::make(op->buffer, i, v);
}
Stmt IRMutator::visit(const LetStmt *op, const Stmt &self) {
  Expr v = mutate(op->value);
  Stmt b = mutate(op->body);
  return v == op->value && b == op->body ? self : LetStmt::make(op->var, v, b);
}
Stmt IRMutator::visit(const Block *op, const Stmt &self) {
  std::vector<Stmt> stmts;
  bool changed = false;
  for (const auto &s : op->stmts) {
    stmts.push_back(mutate(s));
    changed |= stmts.back() != s;
  }
  return changed ? Block::make(std::move(stmts)) : self;
}
Stmt IRMutator::visit(const Allocate *op, const Stmt &self) {
  Stmt b = mutate(op->body);
  return b == op->body ? self : Allocate::make(op->buffer, op->type, op->size, op->local, b);
}
Stmt IRMutator::visit(const Barrier *, const Stmt &self) { return self; }

void BufferUses::visit(const Load *op) {
  read.insert(op->buffer);
  IRVisitor::visit(op);
}
void BufferUses::visit(const Store *op) {
  written.insert(op->buffer);
  IRVisitor::visit(op);
}
void BufferUses::visit(const Allocate *op) {
  local.insert(op->buffer);
  IRVisitor::visit(op);
}

std::set<std::string> variables_of(const Expr &e) {
  class Names : public IRVisitor {
   public:
    std::set<std::string> names;
    using IRVisitor::visit;
    void visit(const Var *op) override { names.insert(op->name); }
  } v;
  v.visit_expr(e);
  return std::move(v.names);
}

}  // namespace tessera::compiler
