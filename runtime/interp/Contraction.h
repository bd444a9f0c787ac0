// Evaluation of bound contractions by enumerating their valid index points.
#pragma once

#include "runtime/HostTensor.h"

namespace tessera::interp {

/// Evaluates contraction statement `s` of `program` over the tensors in `env`, exactly by
/// DESIGN.md §3: every integer point whose every access (output included) is an integer inside its
/// tensor and which meets every constraint is aggregated; unwritten elements are 0 or the default
/// tensor's. Floats accumulate in double and round once; integers accumulate in int64 and wrap
/// (max and min compare values wrapped to the output's width; uint64 values above 2^63 compare as
/// signed: a documented limitation).
/// Throws tile::Error, at the statement, when `=` writes one element twice.
HostTensor eval_contraction(const tile::BoundProgram &program, const tile::BoundStatement &s,
                            const TensorMap &env);

}  // namespace tessera::interp
