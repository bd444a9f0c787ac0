// Reads a value once where several statements of a straight-line run load it: llvmpipe (Vulkan on a
// CPU) loads storage buffers lane by lane with bounds checks and cannot merge the repeats itself.
#pragma once

#include <set>
#include <string>

#include "compiler/IR.h"

namespace tessera::compiler {

/// `body` with every load of a `read_only` buffer that two or more Stores of one run of consecutive
/// Stores in a Block evaluate (unconditionally: not under a Select arm) bound by a LetStmt around
/// that run and read from the variable. Exact: the buffers are never written, the loads' indices
/// only use variables bound outside the run, and each hoisted load was evaluated by the run anyway.
Stmt hoist_loads(const Stmt &body, const std::set<std::string> &read_only);

}  // namespace tessera::compiler
