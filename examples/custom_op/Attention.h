// A custom op: scaled dot-product attention written with the EDSL.
//
//   attention(Q[B, S, D], K[B, T, D], V[B, T, E]) = softmax(Q K^T / sqrt(D)) V
#pragma once

#include "tessera/edsl.h"
#include "tessera/ops.h"

namespace tessera {

Tensor attention(const Tensor &Q, const Tensor &K, const Tensor &V);
/// Adds "attention" (inputs Q, K, V) to `ops`.
void register_attention(OpRegistry &ops);

}  // namespace tessera
