// Picks a kernel's schedule from device facts: vector width from the target's vector bits and
// the dtype, a register-blocked accumulator tile for contractions, parallel outer loops.
#pragma once

#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

namespace tessera::compiler {

/// The cost model's schedule; the kernel cache or the tuner may replace it
/// (runtime/ScheduleSelector.h).
Schedule choose_schedule(const ContractionNest &nest, const Target &target);

}  // namespace tessera::compiler
