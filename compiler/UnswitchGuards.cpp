#include "compiler/UnswitchGuards.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compiler/IRMutator.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/Simplify.h"
#include "compiler/Substitute.h"

namespace tessera::compiler {

namespace {

// What `e` uses: whether it reads a buffer, and whether it mentions variable `var`.
struct Uses {
  bool loads = false, var = false;
};

Uses uses(const Expr &e, const std::string &var) {
  class Visitor : public IRVisitor {
   public:
    explicit Visitor(const std::string &v) : var_(v) {}
    Uses found;
    using IRVisitor::visit;
    void visit(const Load *op) override {
      found.loads = true;
      IRVisitor::visit(op);
    }
    void visit(const Var *op) override { found.var |= op->name == var_; }

   private:
    const std::string &var_;
  } visitor(var);
  visitor.visit_expr(e);
  return visitor.found;
}

// Whether `cond` reads no buffer and does not mention `var`: its value is the same in every
// iteration of var's loop.
bool invariant(const Expr &cond, const std::string &var) {
  Uses u = uses(cond, var);
  return !u.loads && !u.var;
}

bool mentions(const Expr &e, const std::string &var) { return uses(e, var).var; }

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

// The coefficient of `var` in `e` where `e` is affine in it (sums, differences and products by
// terms free of it), else nullopt. Terms free of `var` count 0 whatever they are.
std::optional<int64_t> coefficient(const Expr &e, const std::string &var) {
  if (!mentions(e, var)) return 0;
  if (as<Var>(e)) return 1;  // it mentions var, so it is var
  auto *b = as<Binary>(e);
  if (!b) return std::nullopt;
  auto ca = coefficient(b->a, var), cb = coefficient(b->b, var);
  if (!ca || !cb) return std::nullopt;
  switch (b->op) {
    case Binary::Op::Add: return *ca + *cb;
    case Binary::Op::Sub: return *ca - *cb;
    case Binary::Op::Mul:
      if (auto *k = as<IntImm>(b->b); k && *cb == 0) return *ca * k->value;
      if (auto *k = as<IntImm>(b->a); k && *ca == 0) return *cb * k->value;
      return std::nullopt;
    default: return std::nullopt;
  }
}

// A perfect nest of serial loops: the loops from the outermost in, and the innermost body.
struct Nest {
  std::vector<const For *> loops;
  Stmt body;
};

Nest perfect_nest(const For *op) {
  Nest n;
  const For *f = op;
  while (f && f->for_kind == ForKind::Serial) {
    n.loops.push_back(f);
    n.body = f->body;
    f = as<For>(f->body);
  }
  return n;
}

// `cond`, a conjunction of comparisons affine in the nest's variables, at the corner of the
// nest's box where each comparison is tightest: it holds there only if it holds in every
// iteration. Null where a part is not of that form, reads a buffer (the nest may write it) or a
// loop's bounds use an inner variable.
Expr at_tightest_corner(const Expr &cond, const Nest &n) {
  auto *b = as<Binary>(cond);
  if (!b || uses(cond, "").loads) return nullptr;
  if (b->op == Binary::Op::And) {
    Expr a = at_tightest_corner(b->a, n), c = at_tightest_corner(b->b, n);
    return a && c ? Binary::make(Binary::Op::And, a, c) : nullptr;
  }
  bool at_least = b->op == Binary::Op::GE || b->op == Binary::Op::GT;
  if (!at_least && b->op != Binary::Op::LE && b->op != Binary::Op::LT) return nullptr;
  Expr difference = Binary::make(Binary::Op::Sub, b->a, b->b);
  std::map<std::string, Expr> corner;
  for (size_t i = 0; i < n.loops.size(); ++i) {
    const For *f = n.loops[i];
    auto c = coefficient(difference, f->var);
    if (!c) return nullptr;
    if (*c == 0) continue;
    for (size_t j = i; j < n.loops.size(); ++j)
      if (mentions(f->min, n.loops[j]->var) || mentions(f->extent, n.loops[j]->var)) return nullptr;
    Expr last = Binary::make(Binary::Op::Sub, Binary::make(Binary::Op::Add, f->min, f->extent),
                             IntImm::make(f->min->type, 1));
    // a - b >= 0 is tightest where a - b is least: the first iteration where it grows with the
    // variable; a - b <= 0 where it is greatest.
    corner[f->var] = (*c > 0) == at_least ? f->min : last;
  }
  return simplify(Binary::make(b->op, substitute(b->a, corner), substitute(b->b, corner)));
}

// The statements of `body` with their guards dropped, and the conjunction of `hoist` of each
// distinct guard: the condition under which they may run unguarded. Nullopt where `body` has no
// guard or `hoist` gives null for one (that guard cannot leave).
std::optional<std::pair<Expr, Stmt>> strip_guards(const Stmt &body,
                                                  const std::function<Expr(const Expr &)> &hoist) {
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
    Expr cond = hoist(guard->cond);
    if (!cond) return std::nullopt;
    if (seen.insert(print_expr(cond)).second)
      all = all ? Binary::make(Binary::Op::And, all, cond) : cond;
    unguarded.push_back(guard->then_case);
  }
  if (!all) return std::nullopt;
  return std::make_pair(all, Block::make(std::move(unguarded)));
}

class Unswitch : public IRMutator {
 public:
  using IRMutator::visit;

  Stmt visit(const For *op, const Stmt &self) override {
    auto nest = split_nest(op);
    if (!nest) return split_loop(op, self);
    // Inside the guarded copy a nest whose guards come to the same condition would test it again.
    std::string cond = print_expr(nest->first);
    failed_.insert(cond);
    Stmt kept = split_loop(op, self);
    failed_.erase(failed_.find(cond));
    return IfThenElse::make(nest->first, nest->second, kept);
  }

 private:
  Stmt split_loop(const For *op, const Stmt &self) {
    Stmt body = mutate(op->body);
    Stmt kept = body == op->body
                    ? self
                    : For::make(op->var, op->min, op->extent, op->for_kind, body, op->gpu_dim);
    auto *extent = as<IntImm>(op->extent);
    if (op->for_kind != ForKind::Serial || !extent || extent->value < kMinTrips || nests(body))
      return kept;
    auto stripped = strip_guards(
        body, [&](const Expr &cond) { return invariant(cond, op->var) ? cond : nullptr; });
    if (!stripped) return kept;
    Stmt fast =
        For::make(op->var, op->min, op->extent, op->for_kind, stripped->second, op->gpu_dim);
    return IfThenElse::make(stripped->first, fast, kept);
  }

  // A nest of two or more serial loops whose innermost statements' guards are affine in the
  // nest's variables (a padded convolution's taps: `0 <= 2*x + l - 3 < 224`, l in [0, 7)) splits
  // into the nest without the guards under the guards at their tightest corners, and the nest as
  // it was (its loops split as above where they can). PoCL kept a compare and branch per
  // update of the loops too short for that split (a 7x7 stem's 3 channels, a depthwise
  // convolution's 3 taps).
  std::optional<std::pair<Expr, Stmt>> split_nest(const For *op) {
    if (!across_nests) return std::nullopt;
    Nest n = perfect_nest(op);
    if (n.loops.size() < 2 || nests(n.body)) return std::nullopt;
    // Where the innermost loop is long enough for its own split (a channel loop), that one serves.
    auto *inner = as<IntImm>(n.loops.back()->extent);
    if (!inner || inner->value >= kMinTrips) return std::nullopt;
    auto stripped =
        strip_guards(n.body, [&](const Expr &cond) { return at_tightest_corner(cond, n); });
    if (!stripped || failed_.count(print_expr(stripped->first))) return std::nullopt;
    Stmt fast = stripped->second;
    for (size_t i = n.loops.size(); i-- > 0;) {
      const For *f = n.loops[i];
      fast = For::make(f->var, f->min, f->extent, f->for_kind, fast, f->gpu_dim);
    }
    return std::make_pair(stripped->first, fast);
  }

  std::multiset<std::string> failed_;  // conditions of the enclosing nests' guarded copies

 public:
  bool across_nests = false;
};

}  // namespace

Stmt unswitch_invariant_guards(const Stmt &body, bool across_nests) {
  Unswitch u;
  u.across_nests = across_nests;
  return u.mutate(body);
}

}  // namespace tessera::compiler
