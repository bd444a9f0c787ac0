// The tuner's KernelBench on a `vulkan:N` device: builds one loop IR kernel, runs and times it.
#pragma once

#include <memory>

#include "compiler/tune/Tuner.h"

namespace tessera::vulkan {

/// A KernelBench on Vulkan device `index` (pipelines go through the device's VkPipelineCache).
std::unique_ptr<compiler::tune::KernelBench> make_kernel_bench(int index);

}  // namespace tessera::vulkan
