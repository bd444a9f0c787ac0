// Permutation in place. A framework permutes a tensor's dimensions with an `=` copy (attention
// merging its heads back into the hidden dimension):
//   P[m, h, d : M, H, D] = =(T[h, m, d]);
// Where the copy's input is a kernel's own output that nothing else reads, that kernel stores each
// element straight where the copy would put it, and the copy runs no step: BERT-base's took
// 0.023 ms a layer on `cpu` (Intel kind), and a launch on every device. (Its copies of a reshape's
// elements, the keys and values split into heads, read a view and are left alone.)
#pragma once

#include "compiler/Fusion.h"

namespace tessera::compiler {

/// Adds to `plan` the permutations (permutation_of, Fusion.h) whose input can be stored in place
/// (FusionPlan::placed with `from`, FusionPlan::assembled_in holding the permutation's own name):
/// a copy that is not a program output (as a concatenation's links are not), of a tensor that is
/// neither an input nor an output, read by the copy alone, computed by a kernel of its own that
/// stores every element of it. Permutations read in place (FusionPlan::permutations) and ones
/// placed by a concatenation are left alone.
void place_permutations(const tile::BoundProgram &program, FusionPlan &plan);

}  // namespace tessera::compiler
