// The schedules the tuner may time for a kernel, ranked best-first by the cost model.
#pragma once

#include <vector>

#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

namespace tessera::compiler::tune {

/// Candidates for `target`, the cost model's own choice first, no duplicates. OpenCL and Vulkan
/// targets get gpu_candidates() (GpuSearchSpace.h). On CPUs: register
/// tiles of every row count the register file allows (not only powers of two), 1-4 vectors wide,
/// either tile loop outermost (only the activations first where they outgrow L2:
/// activations_outgrow_l2); elementwise kernels: unroll factors.
std::vector<Schedule> candidates(const ContractionNest &nest, const Target &target);

}  // namespace tessera::compiler::tune
