// Random numbers of the op library: the Tile prng specials as EDSL functions, and dropout.
#pragma once

#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

/// One step of the generator keyed by `state` (a uint32 tensor): a handle of `shape` that
/// prng_value and prng_state read. The same state always gives the same values.
Tensor prng_step(const Tensor &state, const std::vector<int64_t> &shape);
/// float32 values in [0, 1) of a prng_step's shape.
Tensor prng_value(const Tensor &step);
/// The state to use next, of the shape and type of the state that `step` started from.
Tensor prng_state(const Tensor &step);

struct Dropout {
  Tensor y;
  Tensor state;  // the next prng state
};
/// Inverted dropout: each element of x is kept with probability 1 - rate and scaled by 1 / (1 - rate),
/// else 0. `state` (uint32 [3, N]) is the seed; rate must lie in [0, 1).
Dropout dropout(const Tensor &x, const Tensor &state, double rate);

}  // namespace tessera::ops
