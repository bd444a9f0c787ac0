// Replaces each `For ... vectorized` loop of constant extent by straight-line vector code: the
// loop variable becomes a Ramp, scalars meeting vectors are broadcast, loads and stores with
// Ramp indices are dense vector accesses. After this pass no loop is Vectorized.
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

/// Precondition: no IfThenElse condition inside a vectorized loop depends on its variable.
Stmt vectorize_loops(const Stmt &s);

}  // namespace tessera::compiler
