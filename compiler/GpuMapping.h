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

/// The launch map_to_gpu gives a nest with output tile loops: work-items per group along
/// dimensions 0 and 1, and the work-groups in all. Work-items past an output's last tile (a group
/// along a dimension it does not divide) are launched but idle.
struct GpuLaunch {
  int64_t items[2] = {1, 1};
  int64_t groups = 1;
  int64_t active = 1;  // work-items with a tile to compute
  int64_t group_items() const { return items[0] * items[1]; }
};

/// The launch of `n` under the GPU schedule `s` (one register tile per work-item), counted from
/// the output tile loops as map_to_gpu maps them, without building the kernel.
GpuLaunch gpu_launch(const ContractionNest &n, const Schedule &s);

/// Whether `s` asks for the GPU mapping (a work-group shape is set).
inline bool is_gpu_schedule(const Schedule &s) { return !s.workgroup.empty(); }

}  // namespace tessera::compiler
