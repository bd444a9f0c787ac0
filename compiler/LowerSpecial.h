// Specials as kernels. Reshape (a converting copy) and gather (a load through a clamped index
// buffer) are nests, scheduled like elementwise code (parallel and vectorized on the CPU, spread
// over work-items on a GPU); shape and scatter (a serial accumulation) are fixed loops; prng_*
// have no kernel (host steps). `index` is elementwise code (LowerElementwise.h).
#pragma once

#include <optional>

#include "compiler/Fusion.h"
#include "compiler/IR.h"
#include "compiler/Nest.h"
#include "tile/Bind.h"

namespace tessera::compiler {

/// The nest computing special statement `s` (reshape, gather), or nullopt for the others.
std::optional<ContractionNest> special_nest(const tile::BoundProgram &program,
                                            const tile::BoundStatement &s, const FusionPlan &plan);

/// The body of the kernel computing special statement `s` that has no nest, or nullopt when it
/// runs on the host.
std::optional<Stmt> lower_special(const tile::BoundProgram &program, const tile::BoundStatement &s);

}  // namespace tessera::compiler
