// Random numbers of the op library: dropout from the Tile prng (tessera::prng_step and friends).
#pragma once

#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

struct Dropout {
  Tensor y;
  Tensor state;  // the next prng state
};
/// Inverted dropout: each element of x is kept with probability 1 - rate and scaled by 1 / (1 -
/// rate), else 0. `state` (uint32 [3, N]) is the seed; rate must lie in [0, 1).
Dropout dropout(const Tensor &x, const Tensor &state, double rate);

}  // namespace tessera::ops
