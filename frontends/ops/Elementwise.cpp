// Elementwise activations and math of the op library.
#include "frontends/ops/Library.h"

namespace tessera::ops {

Tensor relu(const Tensor &x) { return select(x > 0, x, 0); }

void register_elementwise_ops(OpRegistry &registry) {
  registry.add("relu", [](const std::vector<Tensor> &in, const OpAttrs &) { return std::vector<Tensor>{relu(in.at(0))}; });
}

}  // namespace tessera::ops
