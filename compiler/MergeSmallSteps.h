// Runs of small kernels merged into one kernel that a single work-item runs in order, for devices
// where a launch costs more than a few thousand points of arithmetic on one thread: lavapipe, whose
// every dispatch wakes its thread pool and waits for it (70-100 us each in a profile). A
// classifier's tail (global pooling of a small map, the dense layer, softmax's maximum,
// exponentials, sum and division) is one dispatch there instead of six. `cpu` and PoCL launch such
// kernels in a few microseconds (small_resnet measured level with and without merging), and a SIMT
// GPU would run one thread through every load's latency: they keep one kernel a step.
#pragma once

#include "compiler/Lower.h"

namespace tessera::compiler {

/// `plan` with each run of at least two consecutive Scheduled steps of at most 8192 iteration
/// points each (the product of their nest's index extents), every one storing its whole output,
/// replaced by one Fixed step: their nests in order under the schedule that tiles nothing, every
/// loop serial. It is named after the run's last step and fuses what they all fused.
ProgramPlan merge_small_steps(ProgramPlan plan);

}  // namespace tessera::compiler
