// The target the cost model sees on lavapipe, for Vulkan tests that lower without asking a device.
#pragma once

#include "compiler/Target.h"

namespace tessera::vulkan::test {

inline compiler::Target lavapipe_like() {
  compiler::Target t;
  t.backend = "vulkan";
  t.cores = 2;
  t.vector_bits = 32;
  t.local_memory_bytes = 32 << 10;
  t.max_workgroup_size = 1024;
  t.subgroup_size = 8;
  t.cpu_invocations = true;
  t.has_fp16 = true;
  t.pad_guarded_reads = true;
  t.narrow_indices = true;
  t.unswitch_guards = true;
  t.hoist_loads = true;
  t.grouped_read_limit = 1 << 16;  // maxTexelBufferElements every Vulkan device has
  return t;
}

}  // namespace tessera::vulkan::test
