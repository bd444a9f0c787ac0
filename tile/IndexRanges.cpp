#include "tile/IndexRanges.h"

#include "tile/Diagnostics.h"
#include "tile/Projection.h"

namespace tessera::tile {

namespace {
// lo <= form <= hi, both inclusive.
struct Bracket {
  const Affine *form;
  Rational lo, hi;
};

struct Interval {
  std::optional<Rational> lo, hi;
};

// Tightens `v`'s interval from one inequality; returns true when it changed. Works only when
// every other variable with a nonzero coefficient is bounded on the side it needs.
bool tighten(const Bracket &q, size_t v, std::vector<Interval> &box) {
  const Affine &a = *q.form;
  Rational c = a.coeffs[v];
  if (c.num == 0) return false;
  // rest = sum over other variables; its min and max over the box.
  Rational rest_min = a.constant, rest_max = a.constant;
  bool has_min = true, has_max = true;
  for (size_t j = 0; j < a.coeffs.size(); ++j) {
    if (j == v || a.coeffs[j].num == 0) continue;
    Rational k = a.coeffs[j];
    const auto &low = k.num > 0 ? box[j].lo : box[j].hi;
    const auto &high = k.num > 0 ? box[j].hi : box[j].lo;
    if (low)
      rest_min = rest_min + k * *low;
    else
      has_min = false;
    if (high)
      rest_max = rest_max + k * *high;
    else
      has_max = false;
  }
  // lo - rest_max <= c*x <= hi - rest_min.
  std::optional<Rational> cx_lo, cx_hi;
  if (has_max) cx_lo = q.lo - rest_max;
  if (has_min) cx_hi = q.hi - rest_min;
  std::optional<Rational> x_lo, x_hi;
  if (c.num > 0) {
    if (cx_lo) x_lo = Rational(((*cx_lo) / c).ceil());
    if (cx_hi) x_hi = Rational(((*cx_hi) / c).floor());
  } else {
    if (cx_hi) x_lo = Rational(((*cx_hi) / c).ceil());
    if (cx_lo) x_hi = Rational(((*cx_lo) / c).floor());
  }
  bool changed = false;
  if (x_lo && (!box[v].lo || *box[v].lo < *x_lo)) box[v].lo = x_lo, changed = true;
  if (x_hi && (!box[v].hi || *x_hi < *box[v].hi)) box[v].hi = x_hi, changed = true;
  return changed;
}
}  // namespace

std::vector<std::optional<IndexRange>>
index_ranges(const BoundContraction &c, const std::vector<int64_t> &output_shape,
             const std::map<std::string, TensorType> &types) {
  std::vector<Bracket> ineqs;
  auto add_access = [&](const BoundAccess &a, const std::vector<int64_t> &shape) {
    TESSERA_INTERNAL_ASSERT(a.dims.size() == shape.size(), "access rank differs from tensor rank");
    for (size_t d = 0; d < a.dims.size(); ++d) ineqs.push_back({&a.dims[d], 0, shape[d] - 1});
  };
  add_access(c.output, output_shape);
  for (const auto &in : c.inputs) add_access(in, types.at(in.tensor).shape);
  for (const auto &k : c.constraints) ineqs.push_back({&k.poly, 0, k.bound - 1});

  std::vector<Interval> box(c.indices.size());
  // Bounds only shrink and are integers, so this reaches a fixpoint; the round cap guards
  // against slow creeping (x < y, y < x + 1, ...) where the box is already good enough.
  bool empty = false;
  for (int round = 0; round < 64 && !empty; ++round) {
    bool changed = false;
    for (const auto &q : ineqs)
      for (size_t v = 0; v < box.size(); ++v) changed |= tighten(q, v, box);
    if (!changed) break;
    for (const auto &b : box) empty |= b.lo && b.hi && *b.hi < *b.lo;
  }
  // Intervals see one inequality at a time; a variable bounded only by combining several
  // (2*j + k and j - k) gets its range by exact projection instead.
  std::vector<Inequality> all;
  for (size_t v = 0; v < box.size() && !empty; ++v) {
    if (box[v].lo && box[v].hi) continue;
    if (all.empty()) all = domain_inequalities(c, output_shape, types);
    int64_t lo = 0, hi = -1;
    bool none = false;
    if (!project(all, v, lo, hi, none)) continue;
    if (!box[v].lo || *box[v].lo < Rational(lo)) box[v].lo = Rational(lo);
    if (!box[v].hi || Rational(hi) < *box[v].hi) box[v].hi = Rational(hi);
    empty |= none || hi < lo;
  }
  // No valid point at all: every variable gets the empty range, bounded or not.
  if (empty) return std::vector<std::optional<IndexRange>>(box.size(), IndexRange{});
  std::vector<std::optional<IndexRange>> out;
  for (const auto &b : box) {
    if (!b.lo || !b.hi)
      out.push_back(std::nullopt);
    else
      out.push_back(IndexRange{b.lo->num, b.hi->num});
  }
  return out;
}

}  // namespace tessera::tile
