// Specials as kernels: reshape (a converting copy), shape, index, gather (a load through a
// clamped index buffer) and scatter (a serial accumulation). prng_* have no kernel (host steps).
#pragma once

#include <optional>

#include "compiler/IR.h"
#include "tile/Bind.h"

namespace tessera::compiler {

/// The body of the kernel computing special statement `s`, or nullopt when it runs on the host.
std::optional<Stmt> lower_special(const tile::BoundProgram &program, const tile::BoundStatement &s);

}  // namespace tessera::compiler
