// Row reductions in two stages on wide-vector targets. A reduction of one operand along its
// contiguous last dimension (softmax's row maximum and sum, a layer norm's mean and variance) is
// scheduled as vectors of outputs, each lane a different row: its loads gather elements a row
// apart (on the Intel kind BERT-base's 12 x 128 row maxima over 128 took 0.05 ms on `cpu`, 0.4 on
// PoCL). As two contractions, each row's W partial results from dense vectors of the row, then
// their reduction, both read contiguous lanes.
#pragma once

#include "tile/Bind.h"

namespace tessera::compiler {

/// `program` with each such reduction R[o] = agg(X[..., k]) (sum, max or min of float32, k the
/// only reduction index, the whole of X's last dimension, at least 4 vectors of `lanes` long)
/// replaced by P[o, l] = agg(X[..., lanes * k + l]) and R[o] = agg(P[o, l]), P a new tensor; R
/// keeps its name, so what fused into it still does. `program` unchanged where nothing qualifies
/// or `lanes` < 2.
tile::BoundProgram split_row_reductions(const tile::BoundProgram &program, int lanes);

}  // namespace tessera::compiler
