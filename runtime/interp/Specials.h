// Evaluation of the special statements: shape, reshape, index, gather, scatter and prng_*.
#pragma once

#include "runtime/HostTensor.h"

namespace tessera::interp {

/// Evaluates statement `s`, whose expression is a special call, over the tensors in `env`.
/// gather and scatter clamp every index into [0, n): devices cannot raise, so out-of-range
/// indices read or write the nearest row instead.
HostTensor eval_special(const tile::BoundProgram &program, const tile::BoundStatement &s,
                        const TensorMap &env);

}  // namespace tessera::interp
