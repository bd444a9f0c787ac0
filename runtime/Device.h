// The device interfaces: a Device compiles a bound program into an Executable that runs it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/tune/Tuner.h"
#include "runtime/HostTensor.h"
#include "runtime/RunProfile.h"
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

/// TESSERA_TUNE (DESIGN.md §5): `online` tunes each kernel the cache lacks within a small budget,
/// `cached` takes the cache's schedule or the cost model's and never times, `off` uses the cost model.
enum class TunePolicy { Online, Cached, Off };

/// Where a kernel's schedule came from, and what tuning it cost; `tessera tune` prints these.
struct KernelReport {
  std::string name;         // the statement the kernel computes
  std::string hash;         // the cache's hash of the kernel's canonical text
  std::string origin;       // "cache", "tuned", "model" (cost model, not timed)
  int trials = 0;
  double untuned_seconds = 0;  // 0 when nothing was timed
  double seconds = 0;          // the chosen schedule's median time; 0 when nothing was timed
  double flops = 0;
  std::string schedule;     // Schedule::to_json()
};

/// What compiling a program did: per kernel, and in total.
struct CompileReport {
  std::vector<KernelReport> kernels;
  int cache_hits = 0;
  int cache_misses = 0;
  int tuning_trials = 0;
  double tune_seconds = 0;
  double compile_seconds = 0;  // the whole compile, tuning included
};

/// Progress of tuning a program (the `tessera tune` progress bar): kernel `index` of `count`.
struct TuneProgress {
  int index = 0, count = 0;
  std::string kernel;
  const compiler::tune::Trial *trial = nullptr;      // the trial just finished
  const compiler::tune::TuneResult *so_far = nullptr;
};

struct CompileOptions {
  std::optional<TunePolicy> policy;                // default: TESSERA_TUNE, else online
  std::optional<compiler::tune::Budget> budget;    // default: the small online budget
  std::optional<std::string> cache_path;           // default: TESSERA_CACHE, else the XDG cache file
  double total_seconds = 0;                        // tuning time for the whole program; 0: no limit
  bool retune = false;                             // time kernels the cache already has (online only)
  std::function<void(const TuneProgress &)> progress;
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
  /// What compiling it did (schedules' origins, cache hits, tuning); empty on devices that don't tune.
  const CompileReport &report() const { return report_; }
  void set_report(CompileReport report) { report_ = std::move(report); }
  /// Whether the runs that follow time each step (see RunProfile); off by default.
  void set_profiling(bool on) { timer_.set_enabled(on); }
  /// Whether this device times the steps of a run at all; profile() stays empty where not.
  virtual bool can_profile() const { return false; }
  /// The steps of the last profiled run. Profiled runs of one executable must not overlap.
  const RunProfile &profile() const { return timer_.profile(); }

 protected:
  StepTimer timer_;

 private:
  CompileReport report_;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceInfo info() const = 0;
  virtual std::unique_ptr<Executable> compile(const tile::BoundProgram &program,
                                              const CompileOptions &options = {}) = 0;
  /// The code this device would run for `program` (`tessera lower --emit source`): LLVM IR,
  /// OpenCL C, ... Throws tile::Error on a device that has no source form.
  virtual std::string source(const tile::BoundProgram &program) {
    (void)program;
    throw tile::Error("error: device '" + info().name + "' has no source form to show");
  }
};

}  // namespace tessera
