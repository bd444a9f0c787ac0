// The device interfaces: a Device compiles a bound program into an Executable that runs it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/HostTensor.h"
#include "tile/Diagnostics.h"
#include "tile/Bind.h"

namespace tessera {

/// Facts about a device, shown by `tessera devices` and later used by the cost model and as part
/// of the kernel cache key.
struct DeviceInfo {
  std::string name;         // "interp", "cpu", "opencl:0"
  std::string backend;      // "interp", "llvm", "opencl", "vulkan"
  std::string description;  // one human line
  std::map<std::string, std::string> facts;  // vendor, compute units, ... (sorted: stable output)
};

using TensorMap = std::map<std::string, HostTensor>;

/// Statistics of one compile and run, reported by `tessera run --stats`.
struct RunStats {
  int kernels = 0;
  int cache_hits = 0;
  int cache_misses = 0;
  int tuning_trials = 0;
  double tune_seconds = 0;
  double compile_seconds = 0;
  double run_seconds = 0;
};

/// A program compiled for one device and one set of input shapes; runs again with new inputs of
/// the same types without recompiling.
class Executable {
 public:
  virtual ~Executable() = default;
  /// Runs the program. `inputs` must hold every program input with the bound types. Throws
  /// tile::Error for a run-time error of the program (an `=` contraction writing an element twice).
  virtual TensorMap run(const TensorMap &inputs) = 0;
  /// Kernels this executable launches per run.
  virtual int kernel_count() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceInfo info() const = 0;
  virtual std::unique_ptr<Executable> compile(const tile::BoundProgram &program) = 0;
  /// The code this device would run for `program` (`tessera lower --emit source`): LLVM IR,
  /// OpenCL C, ... Throws tile::Error on a device that has no source form.
  virtual std::string source(const tile::BoundProgram &program) {
    (void)program;
    throw tile::Error("error: device '" + info().name + "' has no source form to show");
  }
};

}  // namespace tessera
