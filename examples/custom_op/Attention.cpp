#include "Attention.h"

#include <cmath>

namespace tessera {

// The op: four contractions and a few elementwise operations. Its gradient comes from autodiff.
Tensor attention(const Tensor &Q, const Tensor &K, const Tensor &V) {
  TensorDim B, S, T, D, E;
  TensorIndex b("b"), s("s"), t("t"), d("d"), e("e");
  Q.bind_dims(B, S, D);
  K.bind_dims(B, T, D);
  V.bind_dims(B, T, E);
  Tensor scores = TensorOutput(B, S, T);
  scores(b, s, t) += Q(b, s, d) * K(b, t, d);
  scores = scores / std::sqrt(static_cast<double>(D.value()));
  Tensor peak = TensorOutput(B, S, 1);  // softmax over t, shifted by its maximum for stability
  peak(b, s, 0) >= scores(b, s, t);
  Tensor weights = exp(scores - peak);
  Tensor total = TensorOutput(B, S, 1);
  total(b, s, 0) += weights(b, s, t);
  Tensor out = TensorOutput(B, S, E);
  out(b, s, e) += weights(b, s, t) * V(b, t, e);
  return out / total;
}

void register_attention(OpRegistry &ops) {
  ops.add("attention", [](const std::vector<Tensor> &in, const OpAttrs &) {
    if (in.size() != 3) throw EdslError("attention: expects 3 inputs (Q, K, V)");
    return std::vector<Tensor>{attention(in[0], in[1], in[2])};
  });
}

}  // namespace tessera
