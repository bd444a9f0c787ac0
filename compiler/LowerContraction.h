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

/// Whether `s` is an `=` contraction where two points may write one output element (a reduction
/// index with more than one value). Tile makes that a run-time error, which loop IR kernels
/// cannot raise: such statements run on the host (the interpreter checks them) and are not fused.
bool assign_may_write_twice(const tile::BoundProgram &p, const tile::BoundStatement &s);

}  // namespace tessera::compiler
