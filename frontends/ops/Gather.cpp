// Index-driven ops: gather along any axis (np.take with clipping) and one_hot.
#include "frontends/ops/Library.h"
#include "frontends/ops/Shape.h"

namespace tessera::ops {

Tensor take(const Tensor &x, const Tensor &indices, int64_t axis) {
  int64_t rank = static_cast<int64_t>(x.rank());
  if (rank == 0) throw EdslError("gather: the input is a scalar; it needs rank 1 or more");
  if (!tile::is_integer(indices.dtype()))
    throw EdslError("gather: indices have dtype " + std::string(tile::dtype_name(indices.dtype())) +
                    "; they must be integers");
  int64_t a = normalize_axis("gather", axis, rank);
  // Tile's gather indexes the first axis: move `axis` to the front, gather, then move the
  // gathered axes back to where `axis` was.
  Tensor front = x;
  if (a != 0) {
    std::vector<int64_t> perm{a};
    for (int64_t d = 0; d < rank; ++d)
      if (d != a) perm.push_back(d);
    front = transpose(x, perm);
  }
  Tensor g = gather(front, indices);
  if (a == 0) return g;
  int64_t k = static_cast<int64_t>(indices.rank());
  std::vector<int64_t> perm;  // g's axes are [indices..., x[:a]..., x[a+1:]...]
  for (int64_t d = 0; d < a; ++d) perm.push_back(k + d);
  for (int64_t d = 0; d < k; ++d) perm.push_back(d);
  for (int64_t d = k + a; d < k + rank - 1; ++d) perm.push_back(d);
  return transpose(g, perm);
}

Tensor one_hot(const Tensor &indices, int64_t depth, double on, double off, int64_t axis,
               DType dtype) {
  if (depth < 1) throw EdslError("one_hot: depth must be at least 1, got " + std::to_string(depth));
  if (!tile::is_integer(indices.dtype()))
    throw EdslError("one_hot: indices have dtype " +
                    std::string(tile::dtype_name(indices.dtype())) + "; they must be integers");
  int64_t rank = static_cast<int64_t>(indices.rank());
  int64_t a = normalize_axis("one_hot", axis, rank + 1);
  std::vector<int64_t> column = indices.shape();
  column.push_back(1);
  Tensor classes = index(full({depth}, 0, DType::Int32), 0);  // 0, 1, ..., depth - 1
  Tensor hot = select(reshape(indices, column) == classes, Tensor(on), Tensor(off));
  hot = cast(hot, dtype);
  if (a == rank) return hot;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < a; ++d) perm.push_back(d);
  perm.push_back(rank);
  for (int64_t d = a; d < rank; ++d) perm.push_back(d);
  return transpose(hot, perm);
}

void register_gather_ops(OpRegistry &registry) {
  registry.add("gather", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    if (in.size() != 2)
      throw EdslError("gather: expects 2 inputs (x, indices), got " + std::to_string(in.size()));
    return std::vector<Tensor>{take(in[0], in[1], attrs.get_int("axis", 0))};
  });
  registry.add("one_hot", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    if (in.size() != 1)
      throw EdslError("one_hot: expects 1 input (indices), got " + std::to_string(in.size()));
    std::string name = attrs.get_string("dtype", "float32");
    auto dtype = tile::parse_dtype(name);
    if (!dtype) throw EdslError("one_hot: dtype '" + name + "' is not a dtype");
    return std::vector<Tensor>{
        one_hot(in[0], attrs.get_int("depth"), attrs.get_float("on_value", 1),
                attrs.get_float("off_value", 0), attrs.get_int("axis", -1), *dtype)};
  });
}

}  // namespace tessera::ops
