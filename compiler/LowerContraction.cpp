#include "compiler/LowerContraction.h"

#include <algorithm>
#include <numeric>

#include "compiler/OutputBasis.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

using Op = Binary::Op;
using tile::CombOp;

Type scalar(tile::DType t) { return Type{t, 1}; }

// The value of the affine form `f` at the nest's point; fractional forms are exact after the
// divisibility guards.
Expr affine_value(const tile::Affine &f, const std::vector<NestIndex> &ix) {
  int64_t den = f.constant.den;
  for (const auto &c : f.coeffs) den = std::lcm(den, c.den);
  std::vector<int64_t> coeffs;
  for (const auto &c : f.coeffs) coeffs.push_back(c.num * (den / c.den));
  Expr e = linear_expr(coeffs, f.constant.num * (den / f.constant.den), ix);
  return den == 1 ? e : Binary::make(Op::Div, e, IntImm::make(den));
}

// The flat element offset of `a` into a tensor of `shape`.
Expr access_index(const tile::BoundAccess &a, const std::vector<int64_t> &shape,
                  const std::vector<NestIndex> &ix) {
  Expr idx;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    Expr e = affine_value(a.dims[d], ix);
    if (shape[d] != 1) {
      Expr term = stride == 1 ? e : Binary::make(Op::Mul, e, IntImm::make(stride));
      idx = idx ? Binary::make(Op::Add, term, idx) : term;
    }
    stride *= shape[d];
  }
  return idx ? idx : IntImm::make(0);
}

Type accumulator_type(tile::DType t) {
  // float16 sums accumulate in float32 (rounded once at the store, as the interpreter does);
  // float32 and float64 accumulate in their own type; integers wrap in their own width.
  if (t == tile::DType::Float16) return scalar(tile::DType::Float32);
  if (t == tile::DType::Bool) return scalar(tile::DType::Int32);
  return scalar(t);
}

}  // namespace

ContractionNest contraction_nest(const tile::BoundStatement &s, const tile::BoundStatement &root,
                                 const ElementwiseContext &ctx) {
  const tile::BoundProgram &p = ctx.program;
  BasisChange change = change_output_basis(s.contraction());
  const tile::BoundContraction &c = change.contraction;
  DomainBounds b = compute_bounds(p, s, c, change.integrality);

  ContractionNest n;
  n.name = root.output;
  size_t r = c.output.dims.size();
  for (size_t j = 0; j < c.indices.size(); ++j)
    n.indices.push_back(
        {c.indices[j], b.lo[j], std::max<int64_t>(b.hi[j] - b.lo[j] + 1, 0), j < r});
  n.guards = b.guards;
  n.divisibility = b.divisibility;
  n.empty = b.empty;
  for (size_t j = 0; j < r; ++j) n.empty |= s.type.shape[j] == 0;
  n.agg = c.agg;
  n.result_type = scalar(s.type.dtype);
  n.acc_type = accumulator_type(s.type.dtype);

  std::vector<Expr> loads;
  for (const auto &in : c.inputs) {
    const auto &t = p.type_of(in.tensor);
    if (ctx.plan.inlined(in.tensor)) {  // computed or permuted in place (Fusion.h)
      std::vector<Expr> coords;
      for (const auto &f : in.dims) coords.push_back(affine_value(f, n.indices));
      loads.push_back(value_at(in.tensor, coords, ctx));
      continue;
    }
    loads.push_back(Load::make(scalar(t.dtype), ctx.plan.storage(in.tensor),
                               access_index(in, t.shape, n.indices)));
  }
  auto as_acc = [&](Expr e) { return convert_value(e, n.acc_type.dtype); };
  auto equal = [&]() {
    tile::DType a = loads[0]->type.dtype, bb = loads[1]->type.dtype;
    tile::DType dom =
        tile::is_float(a) || tile::is_float(bb) ? tile::DType::Float64 : tile::DType::Int64;
    return Binary::make(Op::EQ, convert_value(loads[0], dom), convert_value(loads[1], dom));
  };
  Expr zero = tile::is_float(n.acc_type.dtype) ? FloatImm::make(n.acc_type, 0)
                                               : IntImm::make(n.acc_type, 0);
  Expr one = tile::is_float(n.acc_type.dtype) ? FloatImm::make(n.acc_type, 1)
                                              : IntImm::make(n.acc_type, 1);
  switch (c.comb) {
    case CombOp::None: n.value = as_acc(loads[0]); break;
    case CombOp::Mul: n.value = Binary::make(Op::Mul, as_acc(loads[0]), as_acc(loads[1])); break;
    case CombOp::Add: n.value = Binary::make(Op::Add, as_acc(loads[0]), as_acc(loads[1])); break;
    case CombOp::Eq: n.value = Select::make(equal(), one, zero); break;
    case CombOp::Cond: n.value = Select::make(equal(), as_acc(loads[2]), zero); break;
  }

  std::vector<Expr> coords;
  for (size_t j = 0; j < r; ++j) coords.push_back(Var::make(Type::i64(), c.indices[j]));
  Expr flat = broadcast_index(s.type.shape, coords);
  if (c.default_tensor) {
    const auto &t = p.type_of(*c.default_tensor);
    TESSERA_INTERNAL_ASSERT(t.elements() == s.type.elements(), "default of another size");
    n.unwritten = convert_value(
        Load::make(scalar(t.dtype), ctx.plan.storage(*c.default_tensor), flat), s.type.dtype);
  }
  n.out_buffer = root.output;
  n.out_index = flat;
  if (&root != &s) {
    ElementwiseContext epi{ctx.program, ctx.plan, s.output};
    n.epilogue = convert_value(lower_value(*root.expr(), coords, epi), root.type.dtype);
  }
  return n;
}

bool assign_may_write_twice(const tile::BoundProgram &p, const tile::BoundStatement &s) {
  if (!s.is_contraction() || s.contraction().agg != tile::AggOp::Assign) return false;
  BasisChange change = change_output_basis(s.contraction());
  const tile::BoundContraction &c = change.contraction;
  DomainBounds b = compute_bounds(p, s, c, change.integrality);
  if (b.empty) return false;
  // The basis change is unimodular, so distinct points of the new space are distinct points of
  // the program's; outputs come first, the rest are reduction indices. A reduction index is
  // pinned when its box has one value, or when two inequalities over pinned indices bound it to
  // an interval shorter than 1 (`P[2*j + r] = =(I[j]), r < 2` pins j to [(o-1)/2, o/2]). All
  // pinned: each element is written at most once.
  const size_t n = c.indices.size(), r = c.output.dims.size();
  std::vector<bool> pinned(n, false);
  for (size_t j = 0; j < n; ++j) pinned[j] = j < r || b.hi[j] <= b.lo[j];
  auto ineqs = domain_inequalities(c, s.type.shape, p.types);
  auto over_pinned = [&](const Inequality &q, size_t m) {
    for (size_t j = 0; j < n; ++j)
      if (j != m && q.coeffs[j] != 0 && !pinned[j]) return false;
    return true;
  };
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t m = r; m < n; ++m) {
      if (pinned[m]) continue;
      for (const auto &lo : ineqs) {  // c_lo * x_m + L >= 0 with c_lo > 0: x_m >= -L / c_lo
        if (lo.coeffs[m] <= 0 || !over_pinned(lo, m)) continue;
        for (const auto &hi : ineqs) {  // -c_hi * x_m + H >= 0: x_m <= H / c_hi
          if (hi.coeffs[m] >= 0 || !over_pinned(hi, m)) continue;
          int64_t a = lo.coeffs[m], h = -hi.coeffs[m];
          bool cancels = true;  // H / c_hi + L / c_lo is a constant
          for (size_t j = 0; j < n && cancels; ++j)
            cancels = j == m || hi.coeffs[j] * a + lo.coeffs[j] * h == 0;
          if (cancels && hi.constant * a + lo.constant * h < a * h) pinned[m] = progress = true;
          if (pinned[m]) break;
        }
        if (pinned[m]) break;
      }
    }
  }
  return std::find(pinned.begin(), pinned.end(), false) != pinned.end();
}

}  // namespace tessera::compiler
