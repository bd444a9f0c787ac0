// The prng specials and dropout.
#include "frontends/ops/Random.h"

#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Library.h"

namespace tessera::ops {

Dropout dropout(const Tensor &x, const Tensor &state, double rate) {
  if (!(rate >= 0 && rate < 1))
    throw EdslError("dropout: rate " + std::to_string(rate) + " is outside [0, 1)");
  if (state.dtype() != DType::UInt32 || state.rank() != 2 || state.shape()[0] != 3)
    throw EdslError("dropout: state must be uint32 [3, N], not " +
                    std::string(tile::dtype_name(state.dtype())) + " " + shape_text(state.shape()));
  if (!tile::is_float(x.dtype()))
    throw EdslError("dropout: x must be a float tensor, not " +
                    std::string(tile::dtype_name(x.dtype())));
  Tensor step = prng_step(state, x.shape());
  Tensor keep = prng_value(step) >= rate;
  return {select(keep, x / (1 - rate), 0), prng_state(step)};
}

void register_random_ops(OpRegistry &registry) {
  // Inputs (x, state); outputs (y, next state).
  registry.add("dropout", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 2);
    if (!attrs.has("rate")) throw EdslError("dropout: missing attribute 'rate'");
    Dropout d = dropout(in[0], in[1], attrs.get_float("rate", 0));
    return std::vector<Tensor>{d.y, d.state};
  });
}

}  // namespace tessera::ops
