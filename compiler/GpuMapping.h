// Maps a scheduled contraction nest onto a GPU-style launch: the output tile loops that
// apply_schedule built for one work-item's register tile become work-groups (GpuBlock) and
// work-items (GpuThread); see backends/clike/GpuLaunch.h for how a kernel frame reads them.
#pragma once

#include <functional>

#include "compiler/Nest.h"
#include "compiler/Schedule.h"

namespace tessera::compiler {

/// How apply_schedule builds one region of a nest under a schedule (no parallel loops, no panel).
using RegionBuilder = std::function<Stmt(const ContractionNest &, const Schedule &)>;

/// `build(n, s)` (with s.parallel_loops = 0) gives loops where each iteration of the output tile
/// loops computes one register tile. The innermost output tile loop becomes GPU dimension 0 with
/// s.workgroup[0] work-items per group, the next dimension 1 with s.workgroup[1]; further output
/// loops fold into dimension 2 (one work-item per group along it). Point loops marked Unrolled are
/// unrolled so that accumulators have constant indices (the C-like printer keeps those in
/// registers). With s.use_local_memory, a nest of one reduction index without guards whose tiles
/// divide evenly stages, per chunk of the reduction, the work-group's tiles of every operand that
/// reads it in local memory (loaded by all work-items together, between barriers); other nests
/// ignore the flag. A nest without output loops (a full reduction) runs as one work-group whose
/// work-items split the outermost reduction loop, partial results combined in local memory (a
/// tree of barriers), when the aggregation allows it; else as a single work-item.
Stmt map_to_gpu(const ContractionNest &n, const Schedule &s, const RegionBuilder &build);

/// Whether `s` asks for the GPU mapping (a work-group shape is set).
inline bool is_gpu_schedule(const Schedule &s) { return !s.workgroup.empty(); }

}  // namespace tessera::compiler
