// Deterministic random input data for `tessera run --spec FILE.json --random SEED`.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/HostTensor.h"

namespace tessera::cli {

/// Fills `tensor` (in C order) for the input `name`. Floats get uniform values in [0.5, 1.5),
/// away from zero so that divisions and logarithms stay tame; integers and bools get 1.
///
/// The stream is fixed so that other tools can reproduce it: a splitmix64 generator whose state
/// starts at `seed ^ fnv1a64(name)`; each element takes the next output x and becomes
/// 0.5 + (x >> (65 - p)) * 2^-(p - 1), where p is the dtype's significand width (11, 24, 53), so
/// every value is exact in the dtype and below 1.5.
void fill_random(HostTensor &tensor, uint64_t seed, const std::string &name);

}  // namespace tessera::cli
