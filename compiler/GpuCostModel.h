// Picks a GPU-style schedule (work-group shape, per-work-item register tile, vector width, local
// memory) for OpenCL and Vulkan devices from their facts; GpuMapping.h says how it is applied.
#pragma once

#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

namespace tessera::compiler {

/// A schedule with `workgroup` set. Devices whose preferred float vector is wide (PoCL on a CPU:
/// 16 lanes) get few work-items per group each computing a tall register tile of explicit vectors
/// (rows on dimension 0 so neighbouring groups share the vector operand's panel in cache); devices
/// with scalar lanes (real GPUs) get 16x16 work-items with small scalar register tiles; on Vulkan,
/// contractions get a 16x8 scalar tile per invocation (16 rows, 8 contiguous columns) and
/// work-groups along the contiguous index only.
/// Full reductions get one work-group that splits the reduction; on SIMT GPUs, reductions of one
/// operand with few outputs a work-group per output that splits it (`reduction_split`).
Schedule choose_gpu_schedule(const ContractionNest &nest, const Target &target);

/// The cost model's relative estimate of `s` on `target` (lower is better; only comparable between
/// schedules of one nest): multiply-adds per operand load of the register tile, discounted for
/// register spills, work wasted in partial tiles, and too few work-groups for the compute units.
double gpu_schedule_cost(const ContractionNest &nest, const Schedule &s, const Target &target);

/// Wide-vector targets: how many row tiles a work-item of `s` should compute from one copied panel
/// of the vector operand (Schedule::tiles_per_item; ApplySchedule.h), or 1 where no panel pays:
/// the nest allows none, its panel is small enough to stay in L1 uncopied, or chunks of row
/// tiles would leave too few work-items for the compute units.
int64_t panel_tiles_per_item(const ContractionNest &nest, const Schedule &s, const Target &target);

/// Work-items per group for a split_reduction schedule of `nest` on a SIMT GPU, 0 where none
/// pays: a reduction of one operand (a row's sum or maximum, not a product) whose outputs are too
/// few to give the compute units work-items enough (BERT's layer norms: 128 rows of 768 on an
/// H200's 132 units, 0.045 ms a reduction with one work-item per row).
int64_t reduction_split(const ContractionNest &nest, const Target &target);

/// Whether GpuMapping can stage `nest`'s operands in local memory (one reduction index, no guards).
bool stageable(const ContractionNest &nest);

/// Whether a target is wide-vector (a CPU behind OpenCL/Vulkan) rather than a SIMT GPU.
bool wide_vector_target(const Target &target);

}  // namespace tessera::compiler
