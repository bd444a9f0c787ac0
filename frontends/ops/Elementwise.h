// Elementwise activations and math of the op library (numpy broadcasting, Keras semantics).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tessera/edsl.h"
#include "tessera/ops.h"

namespace tessera::ops {

// The EDSL's own intrinsics are ops as they are.
using tessera::abs;
using tessera::exp;
using tessera::log;
using tessera::pow;
using tessera::sigmoid;
using tessera::sqrt;
using tessera::tanh;

/// Keras relu: x above `threshold` (clipped to `max_value` when given), alpha * (x - threshold)
/// below it.
Tensor relu(const Tensor &x, double alpha = 0, std::optional<double> max_value = std::nullopt,
            double threshold = 0);
Tensor relu6(const Tensor &x);
Tensor leaky_relu(const Tensor &x, double alpha = 0.2);
Tensor elu(const Tensor &x, double alpha = 1.0);
Tensor selu(const Tensor &x);
/// Keras hard_sigmoid: clip(0.2 x + 0.5, 0, 1).
Tensor hard_sigmoid(const Tensor &x);
/// log(1 + exp(x)) without overflow.
Tensor softplus(const Tensor &x);
Tensor softsign(const Tensor &x);
/// 0.5 x (1 + erf(x / sqrt 2)); `approximate` uses the tanh form.
Tensor gelu(const Tensor &x, bool approximate = false);
Tensor square(const Tensor &x);
/// -1, 0 or 1 in x's type.
Tensor sign(const Tensor &x);
/// Clips to [lo, hi]; either bound may be absent. Throws EdslError when lo > hi.
Tensor clip(const Tensor &x, std::optional<double> lo, std::optional<double> hi);
Tensor minimum(const Tensor &a, const Tensor &b);
Tensor maximum(const Tensor &a, const Tensor &b);
/// a where cond is true, else b (Keras switch).
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b);

/// Checks an op's input count: "<op>: expects 2 inputs, got 3".
void expect_inputs(const OpAttrs &attrs, const std::vector<Tensor> &inputs, size_t min, size_t max);
/// "[2, 3]": shapes in error messages.
std::string shape_text(const std::vector<int64_t> &shape);

}  // namespace tessera::ops
