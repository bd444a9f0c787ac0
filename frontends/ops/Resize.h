// Image resizing of NHWC tensors: nearest (Keras 2.3 UpSampling2D) and bilinear (TF2
// tf.image.resize).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

/// Keras 2.3 UpSampling2D(interpolation="nearest"), channels_last: every pixel becomes a
/// scale[0] x scale[1] block, i.e. out[n, y, x, c] = in[n, y / sh, x / sw, c] (integer factors).
Tensor resize_nearest(const Tensor &x, const std::vector<int64_t> &scale);

/// TF2 tf.image.resize(method="bilinear") to `size` = {height, width}, channels_last: half-pixel
/// centres, antialias off. Source row of output row y is (y + 0.5) * H / OH - 0.5; its two
/// neighbours are floor and ceil of that, each clamped into [0, H - 1], weighted by the fraction.
/// Integer inputs give float32, float inputs keep their dtype.
Tensor resize_bilinear(const Tensor &x, const std::vector<int64_t> &size);

}  // namespace tessera::ops
