// Concatenation in place. Tile writes a concatenation as a chain of `=` copies, each placing one
// part at an offset over the previous one as its default:
//   C0[i, j, k, l : N, H, W, 256] = =(A[i, j, k, l]);
//   C1[i, j, k, l + 64 : N, H, W, 256] = =(B[i, j, k, l]) default C0;  ...
// Run as written, every link copies the whole tensor (Inception v3: 50 copy kernels, 8% of its
// kernel time). Where the parts tile the result exactly, each part's own kernel stores its
// elements straight into their box of the result's buffer and the links run no step at all.
#pragma once

#include <vector>

#include "compiler/Fusion.h"
#include "compiler/Nest.h"

namespace tessera::compiler {

/// Adds to `plan` the concatenations whose parts can be stored in place (FusionPlan::placed,
/// FusionPlan::assembled_in). A chain qualifies when its parts' boxes are disjoint and cover the
/// result, no link but the last is read by anything but the next link, and every part is read only
/// by its link and is either a kernel's own output (not a special, a reshape view, an input or a
/// program output) or itself such a concatenation (whose parts then go to the outer buffer).
void place_concatenations(const tile::BoundProgram &program, FusionPlan &plan);

/// Whether the kernel computing `part` (its root) stores every element of it: elementwise kernels
/// do; a contraction's may leave elements outside its output box to the device's zero fill.
bool stores_whole(const tile::BoundProgram &program, const FusionPlan &plan,
                  const std::string &part);

/// `nest`, which stores a placed tensor, storing into its placement's buffer (of `buffer_shape`)
/// instead, each element where its placement puts it.
void store_in_place(ContractionNest &nest, const FusionPlan::Placement &placement,
                    const std::vector<int64_t> &buffer_shape);

}  // namespace tessera::compiler
