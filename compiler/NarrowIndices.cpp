#include "compiler/NarrowIndices.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "compiler/IRMutator.h"

namespace tessera::compiler {

namespace {

using tile::DType;

// An inclusive interval of integer values.
struct Range {
  int64_t lo, hi;
};

constexpr __int128 kMin32 = std::numeric_limits<int32_t>::min();
constexpr __int128 kMax32 = std::numeric_limits<int32_t>::max();

std::optional<Range> fit32(__int128 lo, __int128 hi) {
  if (lo < kMin32 || hi > kMax32) return std::nullopt;
  return Range{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

__int128 floor_div(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// An int64 expression rewritten to int32, with the range of its values.
struct Narrowed {
  Expr e;
  Range r;
};

class Narrower : public IRMutator {
 public:
  using IRMutator::visit;

  // Variables in scope: the range of a narrowed (now int32) variable, or nullopt for one that stays
  // as it was (shadowing must hide an outer narrowed variable of the same name).
  std::map<std::string, std::vector<std::optional<Range>>> vars;

  /// `e` (int64) computed in int32, when each of its values provably fits; else nullopt.
  std::optional<Narrowed> narrow(const Expr &e) {
    if (!e || e->type.dtype != DType::Int64) return std::nullopt;
    Type t32{DType::Int32, e->type.lanes};
    switch (e->kind) {
      case ExprKind::IntImm: {
        int64_t v = as<IntImm>(e)->value;
        auto r = fit32(v, v);
        if (!r) return std::nullopt;
        return Narrowed{IntImm::make(t32, v), *r};
      }
      case ExprKind::Var: {
        auto *v = as<Var>(e);
        auto it = vars.find(v->name);
        if (it == vars.end() || it->second.empty() || !it->second.back()) return std::nullopt;
        return Narrowed{Var::make(t32, v->name), *it->second.back()};
      }
      case ExprKind::Cast: {
        // A widened int32 value is that value.
        auto *c = as<Cast>(e);
        if (c->value->type.dtype != DType::Int32) return std::nullopt;
        Expr inner = mutate(c->value);
        auto *imm = as<IntImm>(inner);
        Range r = imm ? Range{imm->value, imm->value} : Range{int64_t(kMin32), int64_t(kMax32)};
        if (auto *v = as<Var>(inner)) {
          auto it = vars.find(v->name);
          if (it != vars.end() && !it->second.empty() && it->second.back()) r = *it->second.back();
        }
        return Narrowed{inner, r};
      }
      case ExprKind::Binary: return narrow_binary(*as<Binary>(e));
      case ExprKind::Select: {
        auto *s = as<Select>(e);
        auto a = narrow(s->true_value), b = narrow(s->false_value);
        if (!a || !b) return std::nullopt;
        return Narrowed{Select::make(mutate(s->cond), a->e, b->e),
                        {std::min(a->r.lo, b->r.lo), std::max(a->r.hi, b->r.hi)}};
      }
      case ExprKind::Broadcast: {
        auto *b = as<Broadcast>(e);
        auto v = narrow(b->value);
        if (!v) return std::nullopt;
        return Narrowed{Broadcast::make(v->e, e->type.lanes), v->r};
      }
      case ExprKind::Ramp: {
        auto *rp = as<Ramp>(e);
        auto base = narrow(rp->base), stride = narrow(rp->stride);
        if (!base || !stride) return std::nullopt;
        __int128 n = e->type.lanes - 1;
        auto r = fit32(
            std::min<__int128>(base->r.lo + std::min<__int128>(0, n * stride->r.lo), base->r.lo),
            std::max<__int128>(base->r.hi + std::max<__int128>(0, n * stride->r.hi), base->r.hi));
        if (!r) return std::nullopt;
        return Narrowed{Ramp::make(base->e, stride->e, e->type.lanes), *r};
      }
      default: return std::nullopt;  // loads of int64 data, calls: data, not indices
    }
  }

  std::optional<Narrowed> narrow_binary(const Binary &b) {
    using Op = Binary::Op;
    auto x = narrow(b.a);
    if (!x) return std::nullopt;
    auto y = narrow(b.b);
    if (!y) return std::nullopt;
    __int128 alo = x->r.lo, ahi = x->r.hi, blo = y->r.lo, bhi = y->r.hi;
    std::optional<Range> r;
    switch (b.op) {
      case Op::Add: r = fit32(alo + blo, ahi + bhi); break;
      case Op::Sub: r = fit32(alo - bhi, ahi - blo); break;
      case Op::Mul: {
        __int128 c[] = {alo * blo, alo * bhi, ahi * blo, ahi * bhi};
        r = fit32(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
        break;
      }
      case Op::Div: {
        if (blo <= 0) return std::nullopt;  // floor division by positive divisors only
        __int128 c[] = {floor_div(alo, blo), floor_div(alo, bhi), floor_div(ahi, blo),
                        floor_div(ahi, bhi)};
        r = fit32(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
        break;
      }
      case Op::Mod:
        if (blo <= 0) return std::nullopt;
        r = alo >= 0 && ahi < blo ? fit32(alo, ahi) : fit32(0, bhi - 1);
        break;
      case Op::Min: r = fit32(std::min(alo, blo), std::min(ahi, bhi)); break;
      case Op::Max: r = fit32(std::max(alo, blo), std::max(ahi, bhi)); break;
      default: return std::nullopt;  // bit operations, comparisons (bool)
    }
    if (!r) return std::nullopt;
    return Narrowed{Binary::make(b.op, x->e, y->e), *r};
  }

  // ---- the general rewrite: narrowed variables used as data are widened back ----

  Expr visit(const Var *op, const Expr &self) override {
    auto it = vars.find(op->name);
    if (it == vars.end() || it->second.empty() || !it->second.back()) return self;
    return Cast::make(op->type, Var::make(Type{DType::Int32, op->type.lanes}, op->name));
  }
  Expr visit(const Cast *op, const Expr &self) override {
    // Converting the same value from int32 gives what converting it from int64 did.
    if (auto n = narrow(op->value))
      return n->e->type == op->type ? n->e : Cast::make(op->type, n->e);
    return IRMutator::visit(op, self);
  }
  Expr visit(const Binary *op, const Expr &self) override {
    using Op = Binary::Op;
    bool compare = op->op == Op::EQ || op->op == Op::NE || op->op == Op::LT || op->op == Op::LE ||
                   op->op == Op::GT || op->op == Op::GE;
    if (compare && op->a->type.dtype == DType::Int64) {
      auto x = narrow(op->a), y = narrow(op->b);
      if (x && y) return Binary::make(op->op, x->e, y->e);
    }
    return IRMutator::visit(op, self);
  }
  Expr visit(const Load *op, const Expr &self) override {
    auto n = narrow(op->index);
    if (!n) return IRMutator::visit(op, self);
    return Load::make(Type{op->type.dtype, 1}, op->buffer, n->e);
  }
  Stmt visit(const Store *op, const Stmt &self) override {
    auto n = narrow(op->index);
    if (!n) return IRMutator::visit(op, self);
    return Store::make(op->buffer, n->e, mutate(op->value));
  }
  Stmt visit(const For *op, const Stmt &self) override {
    auto lo = narrow(op->min), ext = narrow(op->extent);
    std::optional<Range> range;
    // The printed loop compares the variable with min + extent: that sum must fit too.
    if (lo && ext &&
        fit32(__int128(lo->r.lo) + ext->r.lo, __int128(lo->r.hi) + ext->r.hi).has_value())
      range = Range{lo->r.lo, std::max(lo->r.lo, lo->r.hi + std::max<int64_t>(0, ext->r.hi - 1))};
    vars[op->var].push_back(range);
    Stmt body = mutate(op->body);
    vars[op->var].pop_back();
    if (!range) {
      Expr m = mutate(op->min), e = mutate(op->extent);
      if (m == op->min && e == op->extent && body == op->body) return self;
      return For::make(op->var, m, e, op->for_kind, body, op->gpu_dim);
    }
    return For::make(op->var, lo->e, ext->e, op->for_kind, body, op->gpu_dim);
  }
  Stmt visit(const LetStmt *op, const Stmt &self) override {
    auto n = narrow(op->value);
    vars[op->var].push_back(n ? std::optional<Range>(n->r) : std::nullopt);
    Stmt body = mutate(op->body);
    vars[op->var].pop_back();
    if (n) return LetStmt::make(op->var, n->e, body);
    Expr v = mutate(op->value);
    if (v == op->value && body == op->body) return self;
    return LetStmt::make(op->var, v, body);
  }
};

}  // namespace

Kernel narrow_indices(const Kernel &kernel) {
  Kernel k = kernel;
  Narrower n;
  k.body = n.mutate(kernel.body);
  return k;
}

}  // namespace tessera::compiler
