#include "compiler/HoistLoads.h"

#include <map>
#include <vector>

#include "compiler/IRMutator.h"
#include "compiler/IRPrinter.h"

namespace tessera::compiler {

namespace {

// The loads of read-only buffers an expression always evaluates, by their printed text.
class CollectLoads {
 public:
  explicit CollectLoads(const std::set<std::string> &read_only) : read_only_(read_only) {}
  std::map<std::string, std::pair<Expr, int>> found;  // text -> (load, occurrences)

  void expr(const Expr &e) {
    if (!e) return;
    switch (e->kind) {
      case ExprKind::Load: {
        auto *l = as<Load>(e);
        if (read_only_.count(l->buffer)) {
          auto &entry = found[print_expr(e)];
          entry.first = e;
          ++entry.second;
        }
        return expr(l->index);
      }
      case ExprKind::Cast: return expr(as<Cast>(e)->value);
      case ExprKind::Binary: {
        auto *b = as<Binary>(e);
        // And/Or may print short-circuiting: only their first operand always runs.
        expr(b->a);
        if (b->op != Binary::Op::And && b->op != Binary::Op::Or) expr(b->b);
        return;
      }
      case ExprKind::Not: return expr(as<Not>(e)->a);
      case ExprKind::Select: return expr(as<Select>(e)->cond);  // the arms may be guarded
      case ExprKind::Call:
        for (const auto &a : as<Call>(e)->args) expr(a);
        return;
      case ExprKind::Broadcast: return expr(as<Broadcast>(e)->value);
      case ExprKind::Ramp: expr(as<Ramp>(e)->base), expr(as<Ramp>(e)->stride); return;
      default: return;
    }
  }

 private:
  const std::set<std::string> &read_only_;
};

class ReplaceLoads : public IRMutator {
 public:
  std::map<std::string, Expr> with;  // printed load -> variable
  using IRMutator::visit;
  Expr visit(const Load *op, const Expr &self) override {
    auto it = with.find(print_expr(self));
    return it != with.end() ? it->second : IRMutator::visit(op, self);
  }
};

class Hoist : public IRMutator {
 public:
  explicit Hoist(const std::set<std::string> &read_only) : read_only_(read_only) {}
  using IRMutator::visit;

  Stmt visit(const Block *op, const Stmt &self) override {
    Stmt mutated = IRMutator::visit(op, self);
    auto *block = as<Block>(mutated);
    if (!block) return mutated;
    std::vector<Stmt> out, run;
    auto flush = [&] {
      if (!run.empty()) out.push_back(hoist_run(run));
      run.clear();
    };
    for (const auto &s : block->stmts) {
      if (as<Store>(s)) {
        run.push_back(s);
        continue;
      }
      flush();
      out.push_back(s);
    }
    flush();
    return Block::make(std::move(out));
  }

 private:
  Stmt hoist_run(const std::vector<Stmt> &run) {
    if (run.size() < 2) return Block::make(run);
    CollectLoads loads(read_only_);
    for (const auto &s : run) {
      auto *st = as<Store>(s);
      loads.expr(st->index);
      loads.expr(st->value);
    }
    ReplaceLoads replace;
    std::vector<std::pair<std::string, Expr>> lets;
    for (const auto &[text, entry] : loads.found) {
      if (entry.second < 2) continue;
      std::string name = "tsr_ld" + std::to_string(next_++);
      replace.with[text] = Var::make(entry.first->type, name);
      lets.push_back({name, entry.first});
    }
    if (lets.empty()) return Block::make(run);
    std::vector<Stmt> body;
    for (const auto &s : run) body.push_back(replace.mutate(s));
    Stmt result = Block::make(std::move(body));
    for (auto it = lets.rbegin(); it != lets.rend(); ++it)
      result = LetStmt::make(it->first, it->second, result);
    return result;
  }

  const std::set<std::string> &read_only_;
  int next_ = 0;
};

}  // namespace

Stmt hoist_loads(const Stmt &body, const std::set<std::string> &read_only) {
  Hoist h(read_only);
  return h.mutate(body);
}

}  // namespace tessera::compiler
