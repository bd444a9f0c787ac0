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
/// activations_outgrow_l2; only the vector tiles first where the weights do: weights_outgrow_l2);
/// elementwise kernels: unroll factors.
std::vector<Schedule> candidates(const ContractionNest &nest, const Target &target);

/// The search space's version, part of the kernel cache's key (runtime/ScheduleSelector.h): bump
/// it when candidates() offers other schedules, so that what an older build chose among other
/// candidates is tuned again (hashing the candidates themselves would cost 15 ms a GPU kernel at
/// every compile). 2: weights_outgrow_l2; 3: split reductions on SIMT GPUs (GpuSearchSpace.h).
inline constexpr int kSearchSpaceVersion = 3;

}  // namespace tessera::compiler::tune
