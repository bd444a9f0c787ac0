// Matrix products of the op library: matmul (numpy semantics, batched with broadcasting) and dense.
#pragma once

#include "tessera/edsl.h"

namespace tessera::ops {

/// np.matmul: [..., M, K] @ [..., K, N] -> [..., M, N] with the batch dimensions broadcast; a 1-D
/// operand is a row (left) or a column (right) vector whose unit dimension is dropped again.
Tensor matmul(const Tensor &a, const Tensor &b);

/// Keras Dense without the activation: x [..., IN] @ kernel [IN, UNITS] (+ bias [UNITS]).
Tensor dense(const Tensor &x, const Tensor &kernel, const Tensor &bias = Tensor());

}  // namespace tessera::ops
