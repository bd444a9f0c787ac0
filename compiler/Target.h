// The facts of a device that a program is lowered for: what the cost model schedules by, and which
// finishing passes (compiler/Finish.h) its code generator wants. Every device describes itself by
// one.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::compiler {

struct Target {
  std::string backend;    // "llvm", "opencl", "vulkan" (the cost model's family of schedules)
  int cores = 1;          // CPU threads, or GPU compute units
  int vector_bits = 128;  // widest native float vector (512 with AVX-512)
  int64_t l1_bytes = 32 << 10;
  int64_t l2_bytes = 1 << 20;
  int64_t local_memory_bytes = 0;  // GPU work-group shared memory; 0 on CPUs
  int max_workgroup_size = 1;
  int subgroup_size = 1;
  /// A GPU API served by the CPU (lavapipe): invocations are SIMD lanes of CPU threads, so tall
  /// scalar register tiles pay where a SIMT GPU would want more work-items instead.
  bool cpu_invocations = false;
  bool has_fp16 = false;
  bool has_fp64 = true;
  /// Convolutions read a zero-padded copy of their input instead of guarding each load past its
  /// edges (compiler/PadGuardedReads.h): lavapipe, whose register tiles cannot span guarded rows.
  bool pad_guarded_reads = false;
  /// A launch costs more than a few thousand points of arithmetic on one thread (lavapipe): runs of
  /// small steps become one kernel that one work-item runs (compiler/MergeSmallSteps.h).
  bool merge_small_steps = false;
  /// A depthwise convolution's or a pool's padding guards stay conditions of its taps' updates,
  /// the taps' loops running whole (lavapipe): guards folded into loop bounds that vary from lane
  /// to lane make the taps' variable, and with it the weights' index, differ between the lanes of
  /// a subgroup (compiler/ApplySchedule.cpp; docs/tuning.md has the measurements).
  bool guards_in_taps = false;
  /// > 0: kernels prefetch this many bytes ahead of their reads of constant panels in their first
  /// row tile (OpenCL on a CPU, PoCL): each work-item's first pass over its weights panel
  /// otherwise waits on L3 with the hardware prefetchers behind; the later passes hit L1 or L2.
  /// `cpu` prefetches by reduction blocks instead (ApplySchedule.cpp).
  int64_t panel_prefetch_bytes = 0;

  // Finishing passes, run on every kernel after its schedule is applied.
  /// 32-bit index arithmetic wherever it provably fits: GPUs emulate or split 64-bit integers.
  bool narrow_indices = false;
  /// Guards of partial register tiles unswitched out of reduction loops, and loads repeated in a
  /// straight-line run read once: llvmpipe keeps both as written (a lane mask and blend per guard,
  /// a bounds-checked load per lane).
  bool unswitch_guards = false;
  bool hoist_loads = false;
  /// > 0: float32 inputs of at most this many groups of four elements are read a group at a time
  /// (Vulkan's texel buffer views), with loops unrolled so that those loads align.
  int64_t grouped_read_limit = 0;
};

}  // namespace tessera::compiler
