#include "compiler/UnswitchGuards.h"

#include <set>
#include <string>
#include <vector>

#include "compiler/IRMutator.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"

namespace tessera::compiler {

namespace {

// Whether `cond` reads no buffer and does not mention `var`: its value is the same in every
// iteration of var's loop.
bool invariant(const Expr &cond, const std::string &var) {
  class Reads : public IRVisitor {
   public:
    explicit Reads(const std::string &v) : var_(v) {}
    bool varies = false;
    using IRVisitor::visit;
    void visit(const Load *op) override {
      varies = true;
      IRVisitor::visit(op);
    }
    void visit(const Var *op) override { varies |= op->name == var_; }

   private:
    const std::string &var_;
  } reads(var);
  reads.visit_expr(cond);
  return !reads.varies;
}

// Whether `s` holds a loop or an allocation: the split applies to innermost loops only.
bool nests(const Stmt &s) {
  class Loops : public IRVisitor {
   public:
    bool found = false;
    using IRVisitor::visit;
    void visit(const For *) override { found = true; }
    void visit(const Allocate *) override { found = true; }
  } loops;
  loops.visit_stmt(s);
  return loops.found;
}

// The split doubles the loop's code (llvmpipe's compile time) and tests the guards on each entry,
// which a short loop would not repay (an assumption: Xception's guarded loops are all channel
// loops, 32 to 1024 steps, and those ran 1.5-3x faster split).
constexpr int64_t kMinTrips = 16;

class Unswitch : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    Stmt kept = body == op->body
                    ? self
                    : For::make(op->var, op->min, op->extent, op->for_kind, body, op->gpu_dim);
    auto *extent = as<IntImm>(op->extent);
    if (op->for_kind != ForKind::Serial || !extent || extent->value < kMinTrips || nests(body))
      return kept;
    auto *block = as<Block>(body);
    std::vector<Stmt> stmts = block ? block->stmts : std::vector<Stmt>{body};
    std::vector<Stmt> unguarded;
    Expr all;
    std::set<std::string> seen;
    for (const auto &s : stmts) {
      auto *guard = as<IfThenElse>(s);
      if (!guard || guard->else_case) {
        unguarded.push_back(s);
        continue;
      }
      if (!invariant(guard->cond, op->var)) return kept;
      if (seen.insert(print_expr(guard->cond)).second)
        all = all ? Binary::make(Binary::Op::And, all, guard->cond) : guard->cond;
      unguarded.push_back(guard->then_case);
    }
    if (!all) return kept;
    Stmt fast = For::make(op->var, op->min, op->extent, op->for_kind,
                          Block::make(std::move(unguarded)), op->gpu_dim);
    return IfThenElse::make(all, fast, kept);
  }
};

}  // namespace

Stmt unswitch_invariant_guards(const Stmt &body) {
  Unswitch u;
  return u.mutate(body);
}

}  // namespace tessera::compiler
