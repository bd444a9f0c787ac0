#include "frontends/ops/Linear.h"

#include <algorithm>

#include "frontends/ops/Window.h"

namespace tessera::ops {

Tensor matmul(const Tensor &a, const Tensor &b) {
  if (a.rank() == 0 || b.rank() == 0)
    throw EdslError(std::string("matmul: ") + (a.rank() == 0 ? "a" : "b") +
                    " is a scalar; operands need rank >= 1");
  bool a_vector = a.rank() == 1, b_vector = b.rank() == 1;
  // Treat vectors as matrices [1, K] and [K, 1]; their unit dimension never reaches the output.
  std::vector<int64_t> as = a.shape(), bs = b.shape();
  if (a_vector) as.insert(as.begin(), 1);
  if (b_vector) bs.push_back(1);
  int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
  if (bs[bs.size() - 2] != K)
    throw EdslError("matmul: inner dimensions differ: a " + shape_string(a.shape()) + " has " +
                    std::to_string(K) + " columns but b " + shape_string(b.shape()) + " has " +
                    std::to_string(bs[bs.size() - 2]) + " rows");

  std::vector<int64_t> a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  size_t nb = std::max(a_batch.size(), b_batch.size());
  a_batch.insert(a_batch.begin(), nb - a_batch.size(), 1);
  b_batch.insert(b_batch.begin(), nb - b_batch.size(), 1);
  size_t a_pad = nb - (as.size() - 2), b_pad = nb - (bs.size() - 2);

  std::vector<TensorIndex> batch(nb);
  std::vector<TensorDim> out_dims;
  std::vector<IndexExpr> out_idx, a_idx, b_idx;
  for (size_t i = 0; i < nb; ++i) {
    int64_t x = a_batch[i], y = b_batch[i];
    if (x != y && x != 1 && y != 1)
      throw EdslError("matmul: batch dimensions of a " + shape_string(a.shape()) + " and b " +
                      shape_string(b.shape()) + " do not broadcast");
    int64_t size = x == 1 ? y : x;
    out_dims.emplace_back(size);
    out_idx.emplace_back(batch[i]);
    // A broadcast operand reads its only element; an absent leading dimension is not indexed.
    if (i >= a_pad) a_idx.push_back(x == 1 ? IndexExpr(0) : IndexExpr(batch[i]));
    if (i >= b_pad) b_idx.push_back(y == 1 ? IndexExpr(0) : IndexExpr(batch[i]));
  }
  TensorIndex m("m"), k("k"), n("n");
  if (!a_vector) {
    a_idx.emplace_back(m);
    out_idx.emplace_back(m);
    out_dims.emplace_back(M);
  }
  a_idx.emplace_back(k);
  b_idx.emplace_back(k);
  if (!b_vector) {
    b_idx.emplace_back(n);
    out_idx.emplace_back(n);
    out_dims.emplace_back(N);
  }
  Tensor out = TensorOutput(out_dims);
  out(out_idx) += a(a_idx) * b(b_idx);
  return out;
}

Tensor dense(const Tensor &x, const Tensor &kernel, const Tensor &bias) {
  if (x.rank() == 0) throw EdslError("dense: input is a scalar; it needs rank >= 1");
  if (kernel.rank() != 2)
    throw EdslError("dense: kernel must have rank 2 [in, units], got " +
                    shape_string(kernel.shape()));
  if (x.shape().back() != kernel.shape()[0])
    throw EdslError("dense: input has " + std::to_string(x.shape().back()) +
                    " features but the kernel " + shape_string(kernel.shape()) + " expects " +
                    std::to_string(kernel.shape()[0]));
  Tensor y = matmul(x, kernel);
  if (!bias.defined()) return y;
  if (bias.shape() != std::vector<int64_t>{kernel.shape()[1]})
    throw EdslError("dense: bias has shape " + shape_string(bias.shape()) + " but the kernel has " +
                    std::to_string(kernel.shape()[1]) + " units");
  return y + bias;
}

}  // namespace tessera::ops
