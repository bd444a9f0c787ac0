// Lowering a bound Tile program to loop IR kernels: bounds, output basis change, fusion, schedule.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "compiler/IR.h"
#include "compiler/Schedule.h"
#include "tile/Bind.h"

namespace tessera::compiler {

/// Device facts the cost model uses to pick schedules (from the device, never hard-coded).
struct TargetInfo {
  std::string backend;        // "llvm", "opencl", "vulkan"
  int cores = 1;              // CPU threads, or GPU compute units
  int vector_bits = 128;      // widest native float vector (512 with AVX-512)
  int64_t l1_bytes = 32 << 10;
  int64_t l2_bytes = 1 << 20;
  int64_t local_memory_bytes = 0;  // GPU work-group shared memory; 0 on CPUs
  int max_workgroup_size = 1;
  int subgroup_size = 1;
  bool has_fp16 = false;
  bool has_fp64 = true;
};

/// Where a tensor of the program lives during a run.
struct BufferInfo {
  std::string name;
  tile::DType dtype;
  int64_t elements;
  enum class Role { Input, Output, Temp } role;
};

/// One step of a lowered program, in launch order: a loop IR kernel, or a statement the device
/// runs on the host with the reference interpreter (specials not lowered yet, e.g. prng).
struct Step {
  enum class Kind { Kernel, Host } kind;
  Kernel kernel;                 // Kernel
  std::string host_statement;    // Host: the name of the bound statement to interpret
  Schedule schedule;             // Kernel: how it was scheduled
  std::vector<std::string> fused;  // the statements this kernel computes (for `tessera lower`)
  /// Kernel: it stores every element of its output whatever the inputs, so a device need not
  /// zero-fill the output before it (Tile's unwritten elements are 0 only where it does not).
  bool writes_whole_output = false;
};

struct LoweredProgram {
  std::vector<BufferInfo> buffers;  // every tensor the steps touch
  std::vector<Step> steps;
};

struct ContractionNest;

/// Options for inspection: `log` receives (pass name, IR text) after each pass that changed the IR.
/// `choose`, when set, picks each scheduled kernel's schedule instead of the cost model (the tuner
/// and the kernel cache): it gets the nest, the kernel under the cost model's schedule, and that
/// schedule.
struct LowerOptions {
  std::function<void(const std::string &pass, const std::string &ir)> log;
  std::function<Schedule(const ContractionNest &nest, const Kernel &model_kernel, const Schedule &model)> choose;
};

/// The outputs and temporaries that the first step touching them overwrites whole: a device need
/// not zero-fill them before a run (every other one starts at 0, Tile's unwritten value).
std::set<std::string> written_whole_first(const LoweredProgram &lowered);

/// Lowers `program` for `target`. Throws tile::Error for a program the compiler cannot handle
/// (with the statement's source location).
LoweredProgram lower(const tile::BoundProgram &program, const TargetInfo &target, const LowerOptions &options = {});

}  // namespace tessera::compiler
