#include "compiler/IRPrinter.h"

#include <cstdio>

#include "compiler/IRVisitor.h"

namespace tessera::compiler {

namespace {

int precedence(Binary::Op op) {
  using Op = Binary::Op;
  switch (op) {
    case Op::Mul:
    case Op::Div:
    case Op::Mod: return 6;
    case Op::Add:
    case Op::Sub: return 5;
    case Op::Shl:
    case Op::Shr: return 4;
    case Op::BitAnd:
    case Op::BitOr:
    case Op::BitXor: return 3;
    case Op::EQ:
    case Op::NE:
    case Op::LT:
    case Op::LE:
    case Op::GT:
    case Op::GE: return 2;
    case Op::And:
    case Op::Or: return 1;
    case Op::Min:
    case Op::Max: return 10;  // printed as calls
  }
  return 0;
}

std::string print_at(const Expr &e, int outer);

std::string print_float(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string s = buf;
  if (s.find_first_of(".eni") == std::string::npos) s += ".0";
  return s;
}

std::string print_node(const Expr &e, int outer) {
  switch (e->kind) {
    case ExprKind::IntImm: {
      int64_t v = static_cast<const IntImm *>(e.get())->value;
      return v < 0 && outer > 0 ? "(" + std::to_string(v) + ")" : std::to_string(v);
    }
    case ExprKind::FloatImm: {
      auto *f = static_cast<const FloatImm *>(e.get());
      std::string s = print_float(f->value);
      if (e->type.dtype != tile::DType::Float32) s = print_type(e->type) + "(" + s + ")";
      return s;
    }
    case ExprKind::Var: return static_cast<const Var *>(e.get())->name;
    case ExprKind::Cast:
      return print_type(e->type) + "(" + print_at(static_cast<const Cast *>(e.get())->value, 0) +
             ")";
    case ExprKind::Binary: {
      auto *b = static_cast<const Binary *>(e.get());
      if (b->op == Binary::Op::Min || b->op == Binary::Op::Max)
        return std::string(binary_op_name(b->op)) + "(" + print_at(b->a, 0) + ", " +
               print_at(b->b, 0) + ")";
      int p = precedence(b->op);
      // Left-associative: the right operand needs parentheses at equal precedence.
      std::string s = print_at(b->a, p) + " " + binary_op_name(b->op) + " " + print_at(b->b, p + 1);
      bool tight = b->op == Binary::Op::Mul && p >= outer;
      if (tight) s = print_at(b->a, p) + "*" + print_at(b->b, p + 1);
      return p < outer ? "(" + s + ")" : s;
    }
    case ExprKind::Not: return "!" + print_at(static_cast<const Not *>(e.get())->a, 9);
    case ExprKind::Select: {
      auto *s = static_cast<const Select *>(e.get());
      return "select(" + print_at(s->cond, 0) + ", " + print_at(s->true_value, 0) + ", " +
             print_at(s->false_value, 0) + ")";
    }
    case ExprKind::Load: {
      auto *l = static_cast<const Load *>(e.get());
      return l->buffer + "[" + print_at(l->index, 0) + "]";
    }
    case ExprKind::Call: {
      auto *c = static_cast<const Call *>(e.get());
      std::string s = std::string(tile::intrinsic_name(c->op)) + "(";
      for (size_t i = 0; i < c->args.size(); ++i) s += (i ? ", " : "") + print_at(c->args[i], 0);
      return s + ")";
    }
    case ExprKind::Broadcast: {
      auto *b = static_cast<const Broadcast *>(e.get());
      return "x" + std::to_string(e->type.lanes) + "(" + print_at(b->value, 0) + ")";
    }
    case ExprKind::Ramp: {
      auto *r = static_cast<const Ramp *>(e.get());
      return "ramp(" + print_at(r->base, 0) + ", " + print_at(r->stride, 0) + ", " +
             std::to_string(e->type.lanes) + ")";
    }
  }
  return "?";
}

std::string print_at(const Expr &e, int outer) { return e ? print_node(e, outer) : "<null>"; }

class StmtPrinter : public IRVisitor {
 public:
  explicit StmtPrinter(int indent) : indent_(indent) {}
  std::string out;

  void visit(const For *op) override {
    line("for " + op->var + narrowed(op->min->type) + " in [" + print_expr(op->min) + ", " +
         range_end(op) + ")" +
         (op->for_kind == ForKind::Serial ? "" : std::string(" ") + for_kind_name(op->for_kind)) +
         " {");
    nested(op->body);
    line("}");
  }
  void visit(const IfThenElse *op) override {
    line("if (" + print_expr(op->cond) + ") {");
    nested(op->then_case);
    if (op->else_case) {
      line("} else {");
      nested(op->else_case);
    }
    line("}");
  }
  void visit(const Store *op) override {
    line(op->buffer + "[" + print_expr(op->index) + "] = " + print_expr(op->value));
  }
  void visit(const LetStmt *op) override {
    line("let " + op->var + narrowed(op->value->type) + " = " + print_expr(op->value));
    visit_stmt(op->body);
  }
  void visit(const Allocate *op) override {
    line(std::string(op->local ? "local " : "") + "allocate " + op->buffer + ": " +
         print_type(op->type) + "[" + std::to_string(op->size) + "]");
    visit_stmt(op->body);
  }
  void visit(const Barrier *) override { line("barrier"); }

 private:
  static std::string range_end(const For *op) {
    // [min, min + extent) reads best with the end folded when min is 0.
    auto *m = as<IntImm>(op->min);
    if (m && m->value == 0) return print_expr(op->extent);
    auto *e = as<IntImm>(op->extent);
    if (m && e) return std::to_string(m->value + e->value);
    return print_expr(op->min) + " + " + print_at(op->extent, 6);
  }
  // Index variables are int64 unless narrowed (compiler/NarrowIndices.h): those show their type.
  static std::string narrowed(Type t) { return t == Type::i32() ? ": int32" : ""; }
  void line(const std::string &s) { out += std::string(2 * indent_, ' ') + s + "\n"; }
  void nested(const Stmt &s) {
    ++indent_;
    visit_stmt(s);
    --indent_;
  }
  int indent_;
};

}  // namespace

std::string print_type(Type t) {
  std::string s(tile::dtype_name(t.dtype));
  return t.lanes == 1 ? s : s + "x" + std::to_string(t.lanes);
}

std::string print_expr(const Expr &e) { return print_at(e, 0); }

std::string print_stmt(const Stmt &s, int indent) {
  StmtPrinter p(indent);
  p.visit_stmt(s);
  return p.out;
}

std::string print_kernel(const Kernel &k) {
  std::string s = "kernel " + k.name + "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    const auto &p = k.params[i];
    s += (i ? ", " : "") + p.name + ": " + std::string(tile::dtype_name(p.dtype)) + "[" +
         std::to_string(p.elements) + "]" + (p.is_output ? " out" : " in") +
         (p.grouped_reads ? " grouped" : "") +
         (p.prefetch_ahead ? " prefetch +" + std::to_string(p.prefetch_ahead) : "");
  }
  return s + ") {\n" + print_stmt(k.body, 1) + "}\n";
}

}  // namespace tessera::compiler
