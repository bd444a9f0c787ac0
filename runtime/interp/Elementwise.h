// Evaluation of bound elementwise expressions with numpy broadcasting.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/HostTensor.h"
#include "tile/Diagnostics.h"

namespace tessera::interp {

/// Evaluates `e` over the tensors in `env`. Floats compute in double and round to the node's
/// dtype at every node; integers compute in 64 bits and wrap to the node's dtype. Integer
/// division truncates toward zero and x / 0 is 0; shifts by a count outside [0, bits) give 0
/// (-1 for a negative signed value shifted right). Literals evaluate exactly (int64 / float64);
/// the statement's root is converted to its bound type by the caller.
HostTensor eval_expr(const tile::BoundExpr &e, const TensorMap &env);

/// `t` converted element by element to `dtype` (float to int truncates and saturates, NaN gives 0;
/// int to int wraps).
HostTensor convert(const HostTensor &t, tile::DType dtype);

/// Calls f(out_index, offsets) for every element of `out_shape`, where offsets[k] is the C-order
/// offset into argument k of shape `shapes[k]` under numpy broadcasting (at most 3 arguments).
template <typename F>
void for_each_broadcast(const std::vector<int64_t> &out_shape,
                        const std::vector<const std::vector<int64_t> *> &shapes, F &&f) {
  size_t rank = out_shape.size(), n = shapes.size();
  TESSERA_INTERNAL_ASSERT(n <= 3, "at most 3 broadcast arguments");
  // strides[k][d]: how far argument k moves when output dimension d moves by one (0 when
  // broadcast).
  std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(rank, 0));
  for (size_t k = 0; k < n; ++k) {
    const auto &s = *shapes[k];
    int64_t stride = 1;
    for (size_t i = 0; i < s.size(); ++i) {
      size_t d = rank - 1 - i, sd = s.size() - 1 - i;
      strides[k][d] = s[sd] == 1 ? 0 : stride;
      stride *= s[sd];
    }
  }
  int64_t total = 1;
  for (int64_t d : out_shape) total *= d;
  std::vector<int64_t> coord(rank, 0);
  int64_t off[3] = {0, 0, 0};
  for (int64_t i = 0; i < total; ++i) {
    f(i, off);
    for (size_t d = rank; d-- > 0;) {
      for (size_t k = 0; k < n; ++k) off[k] += strides[k][d];
      if (++coord[d] < out_shape[d]) break;
      for (size_t k = 0; k < n; ++k) off[k] -= strides[k][d] * coord[d];
      coord[d] = 0;
    }
  }
}

}  // namespace tessera::interp
