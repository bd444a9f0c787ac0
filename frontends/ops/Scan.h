// Prefix scans along an axis: cumsum and cumprod with TensorFlow's exclusive and reverse options.
#pragma once

#include <cstdint>

#include "tessera/edsl.h"

namespace tessera::ops {

/// tf.math.cumsum: out[i] = sum of x[k] for k <= i (k < i when exclusive; k >= i, k > i when
/// reversed). A sum contraction whose constraint keeps k on the right side of i. Bool sums as
/// int32.
Tensor cumsum(const Tensor &x, int64_t axis = 0, bool exclusive = false, bool reverse = false);

/// tf.math.cumprod: the same ranges with a product contraction; an empty range gives 1.
Tensor cumprod(const Tensor &x, int64_t axis = 0, bool exclusive = false, bool reverse = false);

}  // namespace tessera::ops
