// The target-specific passes that finish a scheduled kernel: what a backend then emits as it is.
#pragma once

#include "compiler/IR.h"
#include "compiler/Target.h"

namespace tessera::compiler {

/// `kernel` (its schedule applied) after the passes `target` asks for, in this order: index
/// narrowing, guard unswitching, unrolling for grouped reads (marking the params read in groups),
/// load hoisting. Every pass computes exactly what its input does.
Kernel finish_kernel(Kernel kernel, const Target &target);

}  // namespace tessera::compiler
