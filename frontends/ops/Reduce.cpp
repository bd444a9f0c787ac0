// Reductions as contractions: one index per axis of x; reduced axes are absent from the output (or
// indexed at 0 with keepdims).
#include "frontends/ops/Reduce.h"

#include <algorithm>

#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Library.h"

namespace tessera::ops {

std::vector<size_t> normalize_axes(const std::string &op, const std::vector<int64_t> &axes,
                                   size_t rank) {
  std::vector<size_t> out;
  const auto r = static_cast<int64_t>(rank);
  for (int64_t a : axes) {
    if (a < -r || a >= r)
      throw EdslError(op + ": axis " + std::to_string(a) +
                      " is out of range for a tensor of rank " + std::to_string(rank));
    size_t n = static_cast<size_t>(a < 0 ? a + r : a);
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw EdslError(op + ": axis " + std::to_string(a) + " is repeated");
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int64_t> all_axes(const Tensor &x) {
  std::vector<int64_t> axes;
  for (size_t i = 0; i < x.rank(); ++i) axes.push_back(static_cast<int64_t>(i));
  return axes;
}

namespace {

Tensor reduce_axes(const std::string &op, tile::AggOp agg, const Tensor &x,
                   const std::vector<int64_t> &axes, bool keepdims) {
  std::vector<size_t> reduced = normalize_axes(op, axes, x.rank());
  if (reduced.empty()) return x;
  auto is_reduced = [&](size_t i) {
    return std::find(reduced.begin(), reduced.end(), i) != reduced.end();
  };
  std::vector<TensorIndex> idx(x.rank());
  std::vector<IndexExpr> in_idx, out_idx;
  std::vector<TensorDim> out_dims;
  for (size_t i = 0; i < x.rank(); ++i) {
    in_idx.emplace_back(idx[i]);
    if (!is_reduced(i)) {
      out_idx.emplace_back(idx[i]);
      out_dims.emplace_back(x.shape()[i]);
    } else if (keepdims) {
      out_idx.emplace_back(0);
      out_dims.emplace_back(1);
    }
  }
  Tensor out = TensorOutput(out_dims);
  IndexedTensor lhs = out(out_idx);
  IndexedTensor rhs = x(in_idx);
  switch (agg) {
    case tile::AggOp::Sum: lhs += rhs; break;
    case tile::AggOp::Prod: lhs *= rhs; break;
    case tile::AggOp::Max: lhs >= rhs; break;
    case tile::AggOp::Min: lhs <= rhs; break;
    case tile::AggOp::Assign: lhs = rhs; break;
  }
  return out;
}

int64_t reduced_count(const std::string &op, const Tensor &x, const std::vector<int64_t> &axes) {
  int64_t count = 1;
  for (size_t a : normalize_axes(op, axes, x.rank())) count *= x.shape()[a];
  return count;
}

// The first extreme: positions where x equals its extreme keep their row-major offset within the
// reduced block, the others an offset past the end, and a min over the block picks the first.
Tensor arg_extreme(const std::string &op, tile::AggOp agg, const Tensor &x,
                   const std::vector<int64_t> &axes, bool keepdims) {
  if (x.rank() == 0) throw EdslError(op + ": x is a scalar; it needs rank 1 or more");
  std::vector<size_t> reduced = normalize_axes(op, axes, x.rank());
  if (reduced.empty()) throw EdslError(op + ": axis lists no axes");
  Tensor extreme = reduce_axes(op, agg, x, axes, true);
  Tensor offset;  // int32, like index()
  int64_t stride = 1;
  for (auto it = reduced.rbegin(); it != reduced.rend(); ++it) {
    Tensor term = index(x, static_cast<int>(*it));
    if (stride != 1) term = term * stride;
    offset = offset.defined() ? offset + term : term;
    stride *= x.shape()[*it];
  }
  Tensor candidate = select(x == extreme, offset, stride);
  return reduce_axes(op, tile::AggOp::Min, candidate, axes, keepdims);
}

}  // namespace

Tensor sum(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  return reduce_axes("sum", tile::AggOp::Sum, x, axes, keepdims);
}
Tensor sum(const Tensor &x) { return sum(x, all_axes(x)); }

Tensor mean(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  Tensor xf = tile::is_float(x.dtype()) ? x : cast(x, DType::Float32);
  int64_t count = reduced_count("mean", x, axes);
  Tensor total = reduce_axes("mean", tile::AggOp::Sum, xf, axes, keepdims);
  return count == 1 ? total : total / static_cast<double>(count);
}
Tensor mean(const Tensor &x) { return mean(x, all_axes(x)); }

Tensor max(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  return reduce_axes("max", tile::AggOp::Max, x, axes, keepdims);
}
Tensor max(const Tensor &x) { return max(x, all_axes(x)); }
Tensor max(const Tensor &x, std::initializer_list<int64_t> axes, bool keepdims) {
  return max(x, std::vector<int64_t>(axes), keepdims);
}

Tensor min(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  return reduce_axes("min", tile::AggOp::Min, x, axes, keepdims);
}
Tensor min(const Tensor &x) { return min(x, all_axes(x)); }
Tensor min(const Tensor &x, std::initializer_list<int64_t> axes, bool keepdims) {
  return min(x, std::vector<int64_t>(axes), keepdims);
}

Tensor prod(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  return reduce_axes("prod", tile::AggOp::Prod, x, axes, keepdims);
}
Tensor prod(const Tensor &x) { return prod(x, all_axes(x)); }

Tensor argmax(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  return arg_extreme("argmax", tile::AggOp::Max, x, axes, keepdims);
}
Tensor argmax(const Tensor &x) { return argmax(x, all_axes(x)); }

Tensor argmin(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  return arg_extreme("argmin", tile::AggOp::Min, x, axes, keepdims);
}
Tensor argmin(const Tensor &x) { return argmin(x, all_axes(x)); }

void register_reduce_ops(OpRegistry &registry) {
  using Reduction = Tensor (*)(const Tensor &, const std::vector<int64_t> &, bool);
  const std::pair<const char *, Reduction> reductions[] = {
      {"sum", sum},   {"mean", mean},     {"max", max},       {"min", min},
      {"prod", prod}, {"argmax", argmax}, {"argmin", argmin},
  };
  for (const auto &[name, fn] : reductions) {
    registry.add(name, [fn = fn](const std::vector<Tensor> &in, const OpAttrs &attrs) {
      expect_inputs(attrs, in, 1, 1);
      std::vector<int64_t> axes = attrs.has("axis") ? attrs.get_ints("axis", {}) : all_axes(in[0]);
      return std::vector<Tensor>{fn(in[0], axes, attrs.get_bool("keepdims", false))};
    });
  }
}

}  // namespace tessera::ops
