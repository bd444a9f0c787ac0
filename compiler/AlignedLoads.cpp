#include "compiler/AlignedLoads.h"

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "compiler/IRMutator.h"
#include "compiler/IRVisitor.h"
#include "compiler/Simplify.h"
#include "compiler/Substitute.h"

namespace tessera::compiler {

namespace {

using Op = Binary::Op;

int64_t mod4(int64_t v) { return (v % 4 + 4) % 4; }

// The value of integer `e` modulo 4 where its form shows it. Integer arithmetic and casts wrap
// modulo a power of two of at least 8 bits, which keeps values modulo 4.
std::optional<int64_t> residue(const Expr &e) {
  if (auto *i = as<IntImm>(e)) return mod4(i->value);
  if (auto *c = as<Cast>(e))
    return tile::is_integer(c->type.dtype) && tile::is_integer(c->value->type.dtype)
               ? residue(c->value)
               : std::nullopt;
  auto *b = as<Binary>(e);
  if (!b) return std::nullopt;
  if (b->op == Op::Shl) {  // by 2 or more (a count past the width gives 0)
    auto *count = as<IntImm>(b->b);
    return count && count->value >= 2 ? std::optional<int64_t>(0) : std::nullopt;
  }
  auto x = residue(b->a), y = residue(b->b);
  if (b->op == Op::Mul && ((x && *x == 0) || (y && *y == 0))) return 0;
  if (!x || !y) return std::nullopt;
  if (b->op == Op::Add) return mod4(*x + *y);
  if (b->op == Op::Sub) return mod4(*x - *y);
  if (b->op == Op::Mul) return mod4(*x * *y);
  return std::nullopt;
}

// `e` as its terms without additive constants (null when none are left) plus those constants.
std::pair<Expr, int64_t> split_constant(const Expr &e) {
  if (auto *i = as<IntImm>(e)) return {nullptr, i->value};
  auto *b = as<Binary>(e);
  if (!b || (b->op != Op::Add && b->op != Op::Sub)) return {e, 0};
  auto [x, cx] = split_constant(b->a);
  auto [y, cy] = split_constant(b->b);
  int64_t c = b->op == Op::Add ? cx + cy : cx - cy;
  if (!y) return {x, c};
  if (!x) return {b->op == Op::Add ? y : Binary::make(Op::Sub, IntImm::make(e->type, 0), y), c};
  return {Binary::make(b->op, x, y), c};
}

class CountAligned : public IRVisitor {
 public:
  explicit CountAligned(const std::function<bool(const std::string &)> &grouped)
      : grouped_(grouped) {}
  int aligned = 0;
  bool nested = false;  // loops or allocations: not copied (copies stay straight-line code)
  using IRVisitor::visit;
  void visit(const Load *op) override {
    if (grouped_(op->buffer) && aligned_index(op->index)) ++aligned;
    IRVisitor::visit(op);
  }
  void visit(const For *op) override {
    nested = true;
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    nested = true;
    IRVisitor::visit(op);
  }

 private:
  const std::function<bool(const std::string &)> &grouped_;
};

// Whether `stmts` are Stores to distinct constant elements, each reading written buffers only at
// its own element (register accumulators): statement i of one copy then touches what statement i
// of every other copy touches and nothing else, so copies may interleave statement by statement.
bool independent_updates(const std::vector<Stmt> &stmts) {
  std::set<std::pair<std::string, int64_t>> written;
  for (const auto &s : stmts) {
    auto *st = as<Store>(s);
    auto *at = st ? as<IntImm>(st->index) : nullptr;
    if (!at || !written.insert({st->buffer, at->value}).second) return false;
  }
  class ReadsOnlyOwn : public IRVisitor {
   public:
    ReadsOnlyOwn(const std::set<std::pair<std::string, int64_t>> &w, const Store &s)
        : written(w), self(s) {}
    const std::set<std::pair<std::string, int64_t>> &written;
    const Store &self;
    bool ok = true;
    using IRVisitor::visit;
    void visit(const Load *op) override {
      auto *at = as<IntImm>(op->index);
      bool own = op->buffer == self.buffer && at && at->value == as<IntImm>(self.index)->value;
      bool writes = false;
      for (const auto &[b, i] : written) writes |= b == op->buffer;
      ok &= own || !writes;
      IRVisitor::visit(op);
    }
  };
  for (const auto &s : stmts) {
    ReadsOnlyOwn r(written, *as<Store>(s));
    r.visit_expr(as<Store>(s)->value);
    if (!r.ok) return false;
  }
  return true;
}

// The statements of `s` (a Block's, or itself).
std::vector<Stmt> statements(const Stmt &s) {
  if (auto *b = as<Block>(s)) return b->stmts;
  return {s};
}

class UnrollForGroups : public IRMutator {
 public:
  explicit UnrollForGroups(const std::function<bool(const std::string &)> &grouped)
      : grouped_(grouped) {}
  using IRMutator::visit;

  Stmt visit(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    Stmt kept = body == op->body
                    ? self
                    : For::make(op->var, op->min, op->extent, op->for_kind, body, op->gpu_dim);
    auto *min = as<IntImm>(op->min);
    auto *extent = as<IntImm>(op->extent);
    // Loops shorter than a group (an image's 3 colour channels, padded to 4) unroll whole.
    if (op->for_kind != ForKind::Serial || !min || !extent || extent->value < 2 ||
        (extent->value > 4 && extent->value % 4 != 0))
      return kept;
    CountAligned before(grouped_);
    before.visit_stmt(body);
    if (before.nested) return kept;
    // Register accumulators take their updates in a row, which lets large tiles pay off on
    // llvmpipe: each accumulator is loaded, blended with the lane mask and stored once per run of
    // updates (SGEMM 1024 on lavapipe, copy after copy: 16x8 half as fast as 8x8; in a row, 10-15%
    // faster; eight in a row rather than four, another 5%).
    size_t n = statements(body).size();
    bool updates = independent_updates(statements(body));
    int64_t factor = extent->value < 4 ? extent->value : updates && extent->value % 8 == 0 ? 8 : 4;
    Type t = op->min->type;
    std::string outer =
        op->var + "#" + std::to_string(factor);  // '#' keeps it apart from the nest's names
    bool once = extent->value == factor;         // no loop left
    Expr base = once ? IntImm::make(t, 0)
                     : Binary::make(Op::Mul, Var::make(t, outer), IntImm::make(t, factor));
    std::vector<Stmt> copies;
    for (int64_t c = 0; c < factor; ++c) {
      Expr value = Binary::make(Op::Add, base, IntImm::make(t, min->value + c));
      copies.push_back(simplify(substitute(body, {{op->var, value}})));
    }
    std::vector<Stmt> order;
    bool alike = std::all_of(copies.begin(), copies.end(),
                             [&](const Stmt &c) { return statements(c).size() == n; });
    if (alike && updates) {
      for (size_t i = 0; i < n; ++i)
        for (const auto &copy : copies) order.push_back(statements(copy)[i]);
    } else {
      order = copies;
    }
    Stmt unrolled = Block::make(std::move(order));
    CountAligned after(grouped_);
    after.visit_stmt(unrolled);
    if (after.aligned <= factor * before.aligned) return kept;
    if (once) return unrolled;
    return For::make(outer, IntImm::make(t, 0), IntImm::make(t, extent->value / factor),
                     ForKind::Serial, unrolled);
  }

 private:
  const std::function<bool(const std::string &)> &grouped_;
};

}  // namespace

std::optional<AlignedIndex> aligned_index(const Expr &index) {
  if (index->type.lanes != 1 || !tile::is_integer(index->type.dtype)) return std::nullopt;
  auto r = residue(index);
  if (!r) return std::nullopt;
  auto [rest, constant] = split_constant(index);
  // index = rest + constant = first + r, so first = rest + (constant - r), a multiple of 4.
  Expr offset = IntImm::make(index->type, constant - *r);
  Expr first = !rest ? offset : constant == *r ? rest : Binary::make(Op::Add, rest, offset);
  return AlignedIndex{first, static_cast<int>(*r)};
}

Stmt unroll_for_aligned_loads(const Stmt &body,
                              const std::function<bool(const std::string &)> &grouped) {
  UnrollForGroups u(grouped);
  return u.mutate(body);
}

}  // namespace tessera::compiler
