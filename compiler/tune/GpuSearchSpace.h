// The schedules the tuner may time for a kernel on an OpenCL or Vulkan device, ranked best-first.
#pragma once

#include <vector>

#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

namespace tessera::compiler::tune {

/// GPU-style candidates for `target`: the cost model's own choice (choose_gpu_schedule) first, then
/// variants ranked by gpu_schedule_cost: register tiles of every row count up to the register
/// budget (not only powers of two), 1-4 vectors wide, narrower vectors, work-group shapes
/// (1-64 work-items per dimension), the vector index or the rows on dimension 0, and operands
/// staged in local memory or not (where GpuMapping can stage them); on a SIMT GPU, a reduction that
/// reduction_split allows split over groups of 32-256 work-items per output. No duplicates.
std::vector<Schedule> gpu_candidates(const ContractionNest &nest, const Target &target);

}  // namespace tessera::compiler::tune
