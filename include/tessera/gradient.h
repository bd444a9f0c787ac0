// gradient: reverse-mode derivatives of EDSL Tensors (autodiff::gradient on the built program,
// imported back as Tensors).
//
//   Tensor loss = ...;                        // any shape; depends on placeholders W, B
//   auto g = gradient(loss, {W, B});          // g[0] has W's shape: d(sum(loss)) / dW
#pragma once

#include <vector>

#include "tessera/edsl.h"

namespace tessera {

/// The vector-Jacobian product of `loss` with seed ones of the loss's shape (the gradient of the
/// sum of its elements) with respect to each of `wrt`, one Tensor per entry, of its shape and
/// computed from the placeholders `loss` and `wrt` depend on. A `wrt` may be an intermediate
/// Tensor: it gets the gradient flowing into it, and placeholders listed beside it still get
/// their whole gradient (through it too). A `wrt` the loss does not depend on gets zeros.
/// Throws EdslError
/// ("gradient: ...") for a bool or integer loss or `wrt`, a literal `wrt` and an undefined Tensor.
std::vector<Tensor> gradient(const Tensor &loss, const std::vector<Tensor> &wrt);

/// As above with an explicit seed (the gradient of the loss), which must have the loss's shape.
std::vector<Tensor> gradient(const Tensor &loss, const std::vector<Tensor> &wrt,
                             const Tensor &seed);

}  // namespace tessera
