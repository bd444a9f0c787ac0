#include "compiler/Nest.h"

#include <algorithm>
#include <limits>

#include "tile/Diagnostics.h"

namespace tessera::compiler {

using tile::AggOp;
using tile::DType;

size_t ContractionNest::outputs() const {
  size_t n = 0;
  for (const auto &i : indices) n += i.output;
  return n;
}

bool ContractionNest::guard_free(size_t j) const {
  for (const auto &g : guards)
    if (g.coeffs[j] != 0) return false;
  for (const auto &d : divisibility)
    if (d.coeffs[j] != 0) return false;
  return true;
}

bool ContractionNest::stores_every_element(const std::vector<int64_t> &shape) const {
  if (outputs() != shape.size()) return false;
  for (size_t d = 0; d < shape.size(); ++d)
    if (!indices[d].output || indices[d].lo != 0 || indices[d].extent != shape[d]) return false;
  return true;
}

namespace {

// Whether one choice of the reduction indices that guards involve satisfies every guard at every
// output point of the box, so that no element is unwritten: a pooling window at the image's border
// keeps its rows inside. Tries each choice while there are few.
bool one_point_reaches_all(const ContractionNest &n) {
  const size_t r = n.outputs();
  std::vector<size_t> chosen;
  int64_t choices = 1;
  for (size_t j = r; j < n.indices.size(); ++j)
    for (const auto &g : n.guards)
      if (g.coeffs[j] != 0) {
        if (n.indices[j].extent < 1) return false;  // no point at all
        chosen.push_back(j);
        choices *= n.indices[j].extent;
        if (choices > 4096) return false;
        break;
      }
  // Each guard's smallest value over the output box, before its reduction terms.
  std::vector<int64_t> least;
  for (const auto &g : n.guards) {
    int64_t m = g.constant;
    for (size_t j = 0; j < r; ++j) {
      const NestIndex &ix = n.indices[j];
      m += g.coeffs[j] * (g.coeffs[j] > 0 ? ix.lo : ix.lo + ix.extent - 1);
    }
    least.push_back(m);
  }
  for (int64_t c = 0; c < choices; ++c) {
    bool all = true;
    for (size_t g = 0; g < n.guards.size() && all; ++g) {
      int64_t v = least[g], rest = c;
      for (size_t j : chosen) {
        const NestIndex &ix = n.indices[j];
        v += n.guards[g].coeffs[j] * (ix.lo + rest % ix.extent);
        rest /= ix.extent;
      }
      all = v >= 0;
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

bool ContractionNest::needs_written_flag() const {
  bool reduces = indices.size() > outputs();
  bool always_written =
      !empty && divisibility.empty() && (guards.empty() || one_point_reaches_all(*this));
  if (always_written) return false;
  if (!reduces && guards.empty() && divisibility.empty()) return false;
  // Sum without a default: the identity 0 is also the unwritten value.
  return !(agg == AggOp::Sum && !unwritten) && agg != AggOp::Assign;
}

namespace {
Expr constant(Type t, double v) {
  return tile::is_float(t.dtype) ? FloatImm::make(t, v) : IntImm::make(t, static_cast<int64_t>(v));
}

template <typename T>
Expr int_limit(Type t, bool lowest) {
  return IntImm::make(t, static_cast<int64_t>(lowest ? std::numeric_limits<T>::min()
                                                     : std::numeric_limits<T>::max()));
}

Expr extreme(Type t, bool lowest) {
  switch (t.dtype) {
    case DType::Float16:
    case DType::Float32:
    case DType::Float64:
      return FloatImm::make(t, lowest ? -std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::infinity());
    case DType::Bool: return IntImm::make(t, lowest ? 0 : 1);
    case DType::Int8: return int_limit<int8_t>(t, lowest);
    case DType::Int16: return int_limit<int16_t>(t, lowest);
    case DType::Int32: return int_limit<int32_t>(t, lowest);
    case DType::Int64: return int_limit<int64_t>(t, lowest);
    case DType::UInt8: return int_limit<uint8_t>(t, lowest);
    case DType::UInt16: return int_limit<uint16_t>(t, lowest);
    case DType::UInt32: return int_limit<uint32_t>(t, lowest);
    // uint64 max does not fit an int64 immediate; its bit pattern is -1.
    case DType::UInt64: return IntImm::make(t, lowest ? 0 : -1);
  }
  return nullptr;
}
}  // namespace

Expr identity_of(AggOp agg, Type t) {
  switch (agg) {
    case AggOp::Sum:
    case AggOp::Assign: return constant(t, 0);
    case AggOp::Prod: return constant(t, 1);
    case AggOp::Max: return extreme(t, true);
    case AggOp::Min: return extreme(t, false);
  }
  return nullptr;
}

Expr aggregate(AggOp agg, Expr acc, Expr v) {
  using Op = Binary::Op;
  switch (agg) {
    case AggOp::Sum: return Binary::make(Op::Add, acc, v);
    case AggOp::Prod: return Binary::make(Op::Mul, acc, v);
    // Binary Max and Min propagate NaN on every device, as the interpreter's aggregation does
    // (docs/tile-semantics.md): a NaN anywhere in a max or min makes it NaN, in any order.
    case AggOp::Max: return Binary::make(Op::Max, acc, v);
    case AggOp::Min: return Binary::make(Op::Min, acc, v);
    case AggOp::Assign: return v;
  }
  return v;
}

Expr linear_expr(const std::vector<int64_t> &coeffs, int64_t c,
                 const std::vector<NestIndex> &indices) {
  Expr e;
  for (size_t j = 0; j < coeffs.size(); ++j) {
    if (coeffs[j] == 0) continue;
    Expr v = Var::make(Type::i64(), indices[j].name);
    int64_t mag = coeffs[j] < 0 && e ? -coeffs[j] : coeffs[j];
    Expr term = mag == 1 ? v : Binary::make(Binary::Op::Mul, IntImm::make(mag), v);
    // A negative coefficient after the first term reads as a subtraction.
    e = !e ? term : Binary::make(coeffs[j] < 0 ? Binary::Op::Sub : Binary::Op::Add, e, term);
  }
  if (!e) return IntImm::make(c);
  if (c == 0) return e;
  return Binary::make(c > 0 ? Binary::Op::Add : Binary::Op::Sub, e, IntImm::make(c > 0 ? c : -c));
}

}  // namespace tessera::compiler
