#include "compiler/PadGuardedReads.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "tile/IndexRanges.h"

namespace tessera::compiler {

namespace {

using tile::Affine;
using tile::BoundAccess;
using tile::Rational;

/// Per dimension, the elements before 0 and past the end.
using Padding = std::vector<std::pair<int64_t, int64_t>>;

// The least and greatest values of `a` over `box`, where its coefficients are integers.
std::optional<std::pair<int64_t, int64_t>> span(const Affine &a,
                                                const std::vector<tile::IndexRange> &box) {
  if (a.coeffs.size() != box.size() || !a.constant.is_integer()) return std::nullopt;
  int64_t lo = a.constant.num, hi = a.constant.num;
  for (size_t j = 0; j < box.size(); ++j) {
    if (!a.coeffs[j].is_integer()) return std::nullopt;
    int64_t c = a.coeffs[j].num, at_lo, at_hi;
    // A form that overflows int64 somewhere in the box is left alone.
    if (__builtin_mul_overflow(c, c > 0 ? box[j].lo : box[j].hi, &at_lo) ||
        __builtin_mul_overflow(c, c > 0 ? box[j].hi : box[j].lo, &at_hi) ||
        __builtin_add_overflow(lo, at_lo, &lo) || __builtin_add_overflow(hi, at_hi, &hi))
      return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

// Per dimension of `a` over `box`, how far it reads before 0 and past the end of `shape`; null
// where a form is not integral.
std::optional<Padding> overhang(const BoundAccess &a, const std::vector<int64_t> &shape,
                                const std::vector<tile::IndexRange> &box) {
  if (a.dims.size() != shape.size()) return std::nullopt;
  Padding out;
  for (size_t d = 0; d < shape.size(); ++d) {
    auto s = span(a.dims[d], box);
    if (!s) return std::nullopt;
    out.emplace_back(std::max<int64_t>(0, -s->first),
                     std::max<int64_t>(0, s->second - shape[d] + 1));
  }
  return out;
}

bool within(const Padding &o) {
  for (const auto &[lo, hi] : o)
    if (lo || hi) return false;
  return true;
}

// Whether a copy padded by `have` serves reads that need `need`.
bool serves(const Padding &have, const Padding &need) {
  for (size_t d = 0; d < need.size(); ++d)
    if (have[d].first != need[d].first || have[d].second < need[d].second) return false;
  return true;
}

std::optional<std::vector<tile::IndexRange>>
box_of(const tile::BoundContraction &c, const std::vector<int64_t> &shape,
       const std::map<std::string, tile::TensorType> &types) {
  std::vector<tile::IndexRange> box;
  for (const auto &r : tile::index_ranges(c, shape, types)) {
    if (!r || r->empty()) return std::nullopt;
    box.push_back(*r);
  }
  return box;
}

// Whether padding `read` pays: the convolution has `min_points` points or more, and the padded
// operand is the same for every value of some output index (its output channels), so that a
// register tile along that index, with rows that no guard bounds, reuses each loaded value. A
// depthwise convolution reads its input along every output index: MobileNetV2 ran 40-56 ms on
// lavapipe without copies, 53-92 with them.
bool worth_a_copy(const tile::BoundContraction &c, const BoundAccess &read,
                  const std::vector<tile::IndexRange> &box, int64_t min_points) {
  int64_t points = 1;
  min_points = std::max<int64_t>(1, min_points);
  for (const auto &r : box) {
    const int64_t extent = r.hi - r.lo + 1;
    points = extent > min_points / points ? min_points : points * extent;
  }
  if (points < min_points) return false;
  for (const auto &out : c.output.dims) {
    auto j = out.plain_index();
    if (!j || box[*j].hi == box[*j].lo) continue;
    bool reads = false;
    for (const auto &d : read.dims) reads |= !(d.coeffs[*j] == Rational(0));
    if (!reads) return true;
  }
  return false;
}

// Whether the innermost dimension of `read` (of a tensor of `shape`) is shorter than `texel` and
// indexed by an index of `c` that is no output index: the channels of an image that a convolution
// reduces.
bool short_rows(const tile::BoundContraction &c, const BoundAccess &read,
                const std::vector<int64_t> &shape, int64_t texel) {
  if (texel <= 1 || shape.empty() || shape.back() >= texel || read.dims.size() != shape.size())
    return false;
  auto j = read.dims.back().plain_index();
  if (!j) return false;
  for (const auto &out : c.output.dims)
    if (!(out.coeffs[*j] == Rational(0))) return false;
  return true;
}

// The copy P[..., i_d + lo_d, ...] = =(X[..., i_d, ...]) of `x` (of type `t`) padded by `pads`.
tile::BoundStatement padded_copy(const std::string &name, const std::string &x,
                                 const tile::TensorType &t, const Padding &pads,
                                 const tile::SourceRange &range) {
  const size_t rank = t.shape.size();
  tile::BoundStatement p;
  p.output = name;
  p.type = t;
  p.range = range;
  tile::BoundContraction c;
  c.agg = tile::AggOp::Assign;
  c.output.tensor = name;
  BoundAccess in{x, {}};
  for (size_t d = 0; d < rank; ++d) {
    c.indices.push_back("i" + std::to_string(d));
    Affine a{std::vector<Rational>(rank, Rational(0)), Rational(0)};
    a.coeffs[d] = Rational(1);
    in.dims.push_back(a);
    a.constant = Rational(pads[d].first);
    c.output.dims.push_back(a);
    p.type.shape[d] += pads[d].first + pads[d].second;
  }
  c.inputs.push_back(std::move(in));
  p.body = std::move(c);
  return p;
}

}  // namespace

tile::BoundProgram pad_guarded_reads(const tile::BoundProgram &program, int64_t min_points,
                                     int64_t texel) {
  tile::BoundProgram out = program;
  out.statements.clear();
  // Tensor -> its padded copies and their padding.
  std::map<std::string, std::vector<std::pair<std::string, Padding>>> copies;
  for (const auto &s : program.statements) {
    out.statements.push_back(s);
    if (!s.is_contraction()) continue;
    const tile::BoundContraction &c = s.contraction();
    if (c.agg != tile::AggOp::Sum || c.comb != tile::CombOp::Mul || c.inputs.size() != 2 ||
        !c.constraints.empty() || c.default_tensor || c.inputs[0].tensor == c.inputs[1].tensor)
      continue;
    auto box = box_of(c, s.type.shape, out.types);
    if (!box) continue;
    auto outside = overhang(c.output, s.type.shape, *box);
    if (!outside || !within(*outside)) continue;
    std::optional<Padding> pads[2];
    for (size_t i = 0; i < 2; ++i)
      pads[i] = overhang(c.inputs[i], out.type_of(c.inputs[i].tensor).shape, *box);
    if (!pads[0] || !pads[1] || (!within(*pads[0]) && !within(*pads[1]))) continue;
    bool widen[2];
    for (size_t i = 0; i < 2; ++i)
      widen[i] = short_rows(c, c.inputs[i], out.type_of(c.inputs[i].tensor).shape, texel);
    // The one input read past its edges, else the one whose rows are short.
    const size_t g = !within(*pads[0]) ? 0 : !within(*pads[1]) ? 1 : widen[0] ? 0 : 1;
    if (within(*pads[g]) && !widen[g]) continue;
    const BoundAccess &read = c.inputs[g];
    if (!worth_a_copy(c, read, *box,
                      widen[g] ? std::min(min_points, kTexelPadMinPoints) : min_points))
      continue;
    const tile::TensorType &xt = out.type_of(read.tensor);
    if (widen[g])
      pads[g]->back().second = std::max(pads[g]->back().second, texel - xt.shape.back());
    double padded = 1;  // in double: a wild overhang must not overflow the count
    for (size_t d = 0; d < xt.shape.size(); ++d)
      padded *= double(xt.shape[d]) + double((*pads[g])[d].first) + double((*pads[g])[d].second);
    if (padded > 4.0 * double(std::max<int64_t>(1, xt.elements()))) continue;

    // A copy with the same leading padding and at least this trailing one serves (a stride-2
    // convolution beside a stride-1 one on the same input).
    std::optional<tile::BoundStatement> copy;
    std::string name;
    for (const auto &[have, padding] : copies[read.tensor])
      if (serves(padding, *pads[g])) {
        name = have;
        pads[g] = padding;
        break;
      }
    if (name.empty()) {
      name = read.tensor + "_padded";
      while (out.types.count(name)) name += "_";
      copy = padded_copy(name, read.tensor, xt, *pads[g], s.range);
    }

    tile::BoundStatement t = s;
    tile::BoundContraction &tc = std::get<tile::BoundContraction>(t.body);
    tc.inputs[g].tensor = name;
    for (size_t d = 0; d < xt.shape.size(); ++d)
      tc.inputs[g].dims[d].constant = tc.inputs[g].dims[d].constant + Rational((*pads[g])[d].first);
    // The box must stay the box (an index whose range only X bounded would grow with P).
    if (copy) out.types[name] = copy->type;
    auto after = box_of(tc, t.type.shape, out.types);
    bool same = after && after->size() == box->size();
    for (size_t j = 0; same && j < box->size(); ++j)
      same = (*after)[j].lo == (*box)[j].lo && (*after)[j].hi == (*box)[j].hi;
    if (!same) {
      if (copy) out.types.erase(name);
      continue;
    }

    out.statements.pop_back();
    if (copy) {
      copies[read.tensor].emplace_back(name, *pads[g]);
      out.statements.push_back(std::move(*copy));
    }
    out.statements.push_back(std::move(t));
  }
  return out;
}

}  // namespace tessera::compiler
