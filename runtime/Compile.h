// The compile pipeline for a device, top to bottom in compile(): plan the program for the device's
// target, choose each kernel's schedule, apply it, finish the kernel, build what the device runs.
#pragma once

#include <memory>
#include <string>

#include "compiler/Lower.h"
#include "runtime/CompileOptions.h"
#include "runtime/Executable.h"

namespace tessera {

class Backend;

/// Compiles `program` for `backend` (DESIGN.md §4). Throws tile::Error for a program the compiler
/// or the device cannot handle.
std::unique_ptr<Executable> compile(const tile::BoundProgram &program, Backend &backend,
                                    const CompileOptions &options);

/// What compile() would lower `program` to, with the cache's or the cost model's schedules and no
/// tuning (`tessera lower --device`); with `options.constants`, folded and laid out as compile()
/// does them.
compiler::LoweredProgram lower_for(const tile::BoundProgram &program, Backend &backend,
                                   const CompileOptions &options);

}  // namespace tessera
