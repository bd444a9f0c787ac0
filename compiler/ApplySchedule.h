// Turns a ContractionNest into loop IR under a Schedule: tile loops (the outermost parallel),
// a register accumulator tile kept across the reduction loops, guards folded into reduction loop
// bounds where their other variables are already fixed (unless the nest keeps its taps' guards as
// conditions: ContractionNest::guards_in_taps), vector and unrolled point loops. A padded
// contraction is split into an interior and borders (SplitBorders.h); when its vector operand is
// too big for one panel, the vector tile loop goes around all regions so they share one packed
// panel. GPU schedules map onto work-groups (GpuMapping.h); with tiles_per_item a work-item first
// copies its vector tile's panel into private memory and then computes a chunk of row tiles from
// it.
#pragma once

#include "compiler/ConstantPanel.h"
#include "compiler/Nest.h"
#include "compiler/Schedule.h"

namespace tessera::compiler {

/// Preconditions (choose_schedule guarantees them; others are normalized): the vector index is
/// an output index whose tile is a multiple of vector_width dividing its extent, and no guard or
/// divisibility condition involves it.
/// With `constants`, a vector operand that is one of its constants is read from a filled panel
/// (ConstantPanel.h) that the schedule's tiles lay out, added to `constants->panels`.
Stmt apply_schedule(const ContractionNest &nest, const Schedule &schedule,
                    ConstantPanels *constants = nullptr);

/// A schedule that tiles nothing: serial loops in index order (what lowering produces first).
Schedule default_schedule(const ContractionNest &nest);

}  // namespace tessera::compiler
