// Loop unswitching of the guards of partial register tiles, for dialects whose compiler keeps them
// in the loop (llvmpipe turns each into a lane mask and a blend).
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

/// `body` with each innermost Serial loop whose statements are guarded by conditions that do not
/// change in the loop (no loads, not its variable) split in two: `if (all conditions) { the loop
/// without the guards } else { the loop as it was }`. GPU schedules guard every update of a tile
/// that may cross the extent (`if (x0_o*13 + r < 37) acc[r] = ...` in the reduction loop); the
/// work-items of full tiles then run the unguarded copy. With `across_nests`, a nest of serial
/// loops whose innermost statements' guards are affine in the nest's variables splits the same
/// way, under the guards at the corner of the nest's iteration box where each is tightest.
Stmt unswitch_invariant_guards(const Stmt &body, bool across_nests = false);

}  // namespace tessera::compiler
