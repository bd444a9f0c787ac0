// Normalizations of the op library: softmax, log_softmax, batch norm, moments, layer norm.
#pragma once

#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

/// exp(x - max) / sum(exp(x - max)) over `axes` (default the last); stable for large x.
Tensor softmax(const Tensor &x, const std::vector<int64_t> &axes = {-1});
/// (x - max) - log(sum(exp(x - max))) over `axes`.
Tensor log_softmax(const Tensor &x, const std::vector<int64_t> &axes = {-1});

/// Keras batch_normalization (inference): (x - mean) / sqrt(variance + epsilon) * gamma + beta.
/// The parameters have shape [C] for C = x's size on `axis`, or x's rank with C on `axis` and 1
/// elsewhere; gamma and beta may be undefined Tensors (no scale, no shift).
Tensor batch_norm(const Tensor &x, const Tensor &mean, const Tensor &variance, const Tensor &beta,
                  const Tensor &gamma, double epsilon = 1e-3, int64_t axis = -1);

/// Training statistics: the mean and the (population) variance of x over `axes`.
struct Moments {
  Tensor mean;
  Tensor variance;
};
Moments moments(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);

/// Keras LayerNormalization: x normalized over `axes`, then * gamma + beta (either may be an
/// undefined Tensor). gamma and beta have x's sizes on `axes`, or x's rank with 1 elsewhere.
Tensor layer_norm(const Tensor &x, const std::vector<int64_t> &axes = {-1}, double epsilon = 1e-3,
                  const Tensor &gamma = Tensor(), const Tensor &beta = Tensor());

}  // namespace tessera::ops
