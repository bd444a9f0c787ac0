// cumsum and cumprod as contractions over the whole axis, restricted by a constraint to the
// elements on the chosen side of each output position.
#include "frontends/ops/Scan.h"

#include "frontends/ops/Library.h"
#include "frontends/ops/Shape.h"

namespace tessera::ops {

namespace {

Tensor scan(const std::string &op, tile::AggOp agg, const Tensor &x, int64_t axis, bool exclusive,
            bool reverse) {
  int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) throw EdslError(op + ": the input is a scalar; it needs rank 1 or more");
  int64_t a = normalize_axis(op, axis, rank);
  Tensor in = x.dtype() == DType::Bool ? cast(x, DType::Int32) : x;
  std::vector<TensorIndex> idx(rank);
  TensorIndex k;
  std::vector<IndexExpr> at(idx.begin(), idx.end()), from(idx.begin(), idx.end());
  from[a] = k;
  // 0 <= distance < N: k <= i (inclusive), k < i (exclusive), mirrored when reversed.
  IndexExpr distance = reverse ? IndexExpr(k) - idx[a] : IndexExpr(idx[a]) - k;
  if (exclusive) distance = distance - 1;
  Tensor out = TensorOutput(in.dims());
  out.add_constraint(distance < TensorDim(x.shape()[a]));
  // An exclusive scan's first element aggregates nothing: 0 for a sum, but 1 for a product.
  if (exclusive && agg == tile::AggOp::Prod) out.use_default(full(in.shape(), 1, in.dtype()));
  if (agg == tile::AggOp::Prod)
    out(at) *= in(from);
  else
    out(at) += in(from);
  return out;
}

}  // namespace

Tensor cumsum(const Tensor &x, int64_t axis, bool exclusive, bool reverse) {
  return scan("cumsum", tile::AggOp::Sum, x, axis, exclusive, reverse);
}

Tensor cumprod(const Tensor &x, int64_t axis, bool exclusive, bool reverse) {
  return scan("cumprod", tile::AggOp::Prod, x, axis, exclusive, reverse);
}

void register_scan_ops(OpRegistry &registry) {
  for (const char *name : {"cumsum", "cumprod"}) {
    registry.add(name, [name](const std::vector<Tensor> &in, const OpAttrs &attrs) {
      if (in.size() != 1)
        throw EdslError(std::string(name) + ": expects 1 input, got " + std::to_string(in.size()));
      auto fn = std::string(name) == "cumsum" ? cumsum : cumprod;
      return std::vector<Tensor>{fn(in[0], attrs.get_int("axis", 0),
                                    attrs.get_bool("exclusive", false),
                                    attrs.get_bool("reverse", false))};
    });
  }
}

}  // namespace tessera::ops
