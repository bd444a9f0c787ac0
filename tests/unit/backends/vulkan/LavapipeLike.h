// The target the cost model sees on lavapipe, for Vulkan tests that lower without asking a device.
#pragma once

#include "compiler/Lower.h"

namespace tessera::vulkan::test {

inline compiler::TargetInfo lavapipe_like() {
  compiler::TargetInfo t;
  t.backend = "vulkan";
  t.cores = 2;
  t.vector_bits = 32;
  t.local_memory_bytes = 32 << 10;
  t.max_workgroup_size = 1024;
  t.subgroup_size = 8;
  t.has_fp16 = true;
  return t;
}

}  // namespace tessera::vulkan::test
