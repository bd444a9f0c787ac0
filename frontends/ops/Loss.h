// Losses of the op library, with Keras backend semantics (per example, not averaged).
#pragma once

#include "tessera/edsl.h"

namespace tessera::ops {

/// -sum(target * log(p), axis) where p is softmax(output) when from_logits, else output divided by
/// its sum over `axis` and clipped to [1e-7, 1 - 1e-7]. target and output have one shape; the
/// result drops `axis`.
Tensor categorical_crossentropy(const Tensor &target, const Tensor &output,
                                bool from_logits = false, int64_t axis = -1);

/// categorical_crossentropy with integer class ids: target has output's shape without `axis` (or
/// with size 1 there).
Tensor sparse_categorical_crossentropy(const Tensor &target, const Tensor &output,
                                       bool from_logits = false, int64_t axis = -1);

/// Elementwise -(t log p + (1 - t) log(1 - p)) with p = sigmoid(output) when from_logits (computed
/// without overflow), else output clipped to [1e-7, 1 - 1e-7].
Tensor binary_crossentropy(const Tensor &target, const Tensor &output, bool from_logits = false);

}  // namespace tessera::ops
