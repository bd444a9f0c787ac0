// Loop unswitching of the guards of partial register tiles, for dialects whose compiler keeps them
// in the loop (llvmpipe turns each into a lane mask and a blend).
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

/// `body` with each innermost Serial loop whose statements are guarded by conditions that do not
/// change in the loop (no loads, not its variable) split in two: `if (all conditions) { the loop
/// without the guards } else { the loop as it was }`. GPU schedules guard every update of a tile
/// that may cross the extent (`if (x0_o*13 + r < 37) acc[r] = ...` in the reduction loop); the
/// work-items of full tiles then run the unguarded copy.
Stmt unswitch_invariant_guards(const Stmt &body);

}  // namespace tessera::compiler
