// A contraction (after output basis change and bounds) as a ContractionNest, with the elementwise
// consumer it was fused into as its epilogue.
#pragma once

#include "compiler/LowerElementwise.h"
#include "compiler/Nest.h"

namespace tessera::compiler {

/// `s` is a contraction; `root` is the statement whose kernel computes it (s itself, or the
/// elementwise statement it is the prologue of).
ContractionNest contraction_nest(const tile::BoundStatement &s, const tile::BoundStatement &root,
                                 const ElementwiseContext &ctx);

}  // namespace tessera::compiler
