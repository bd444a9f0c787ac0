// The inside of an Executable: the lowered program, the device's compiled kernels, the buffer plan
// and the step loop. Internal to runtime/ (it shows loop IR); runtime/Compile.cpp builds one.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "compiler/Lower.h"
#include "runtime/Backend.h"
#include "runtime/Executable.h"

namespace tessera {

class OnlineTuner;

struct Executable::Impl {
  Impl(Backend &backend, tile::BoundProgram program, compiler::LoweredProgram lowered,
       std::unique_ptr<CompiledKernels> kernels, CompileReport report);
  ~Impl();

  /// Where a kernel is launched from: the compile's kernels, or a tuned replacement's.
  struct Launch {
    CompiledKernels *kernels = nullptr;
    size_t index = 0;
  };
  /// A step whose new kernel runs for the first time in the next run: `replaced` (the kernel it
  /// would replace) runs first on the same data, and the run keeps its outputs when the two differ.
  struct Check {
    Launch replaced;
    compiler::Step replaced_step;
    std::string difference;  // after the run: "" when they agreed
  };

  Backend &backend;
  tile::BoundProgram program;
  compiler::LoweredProgram lowered;
  std::unique_ptr<CompiledKernels> kernels;  // the kernel steps', in step order; null without any
  CompileReport report;
  StepTimer timer;

  std::set<std::string> input_names, output_names;
  std::map<std::string, const compiler::BufferInfo *> buffers;
  std::map<std::string, const tile::BoundStatement *> statements;
  std::vector<size_t> kernel_of_step;  // a kernel step's index in `launches`
  std::vector<Launch> launches;        // per kernel, in step order
  std::unique_ptr<OnlineTuner> tuner;  // TESSERA_TUNE=online; else null
  std::vector<char> watched;           // per step: timed alone in the runs that follow
  std::vector<double> step_seconds;    // per step: its time in the last run, when watched
  std::map<size_t, Check> checks;      // by step: checked in the next run, then cleared
  std::vector<std::vector<std::string>> zero_before;  // per step: buffers zeroed before it
  std::vector<std::string> zero_at_start;             // outputs no step touches
  std::shared_ptr<DeviceBuffer> arena;  // the temporaries' memory, where the device has views
  std::map<std::string, std::shared_ptr<DeviceBuffer>> temp_buffers;
  std::map<std::string, std::shared_ptr<DeviceBuffer>> own_outputs;
  std::map<std::string, std::shared_ptr<DeviceBuffer>> staged_inputs;  // host inputs copied in
  DeviceTensorMap constants;  // the program's inputs fixed at compile time, on the device
  /// Those and the inputs of the program as given that were constants (folded away since): a run
  /// gives none of them.
  std::set<std::string> constant_names;

  /// The filled panels of constants that kernels read (compiler/ConstantPanel.h), by name.
  std::map<std::string, std::shared_ptr<DeviceBuffer>> panels;

  /// Every buffer a step touches, by name: temporaries, panels and constants are entered once,
  /// the inputs and outputs of a run as it starts; per kernel step, where its params' buffers are
  /// (pointers into `where`, whose nodes stay put). Building the map and looking names up on every
  /// run cost a CIFAR ResNet (17 kernels, about 100 us a run) 10-20% of its time. Rebuilt when
  /// stale: after the constants are set, and after the tuner swaps a kernel in.
  std::map<std::string, DeviceBuffer *> where;
  std::vector<std::vector<DeviceBuffer **>> step_args;
  std::set<uint64_t> constant_ids;  // buffers of the constants
  bool where_stale = true;
  void refresh_where();

  /// Uploads the values of the inputs fixed at compile time, and fills and uploads the panels of
  /// them that the steps read; `given` names the constants of the program as it was given.
  void set_constants(const TensorMap &values, const TensorMap &given);

  std::vector<std::string> step_uses(const compiler::Step &s) const;
  void plan_memory();
  std::shared_ptr<DeviceBuffer> fresh(const tile::TensorType &type);
  std::shared_ptr<DeviceBuffer> own_output(const std::string &name);
  void check_device_inputs(const DeviceTensorMap &inputs) const;
  /// Callers hold the backend's mutex and have restarted the timer. Without `wait`, the run's
  /// work may still be in the device's queue on return: the caller reads or finishes.
  DeviceTensorMap run_locked(const DeviceTensorMap &inputs, const DeviceTensorMap &outputs,
                             bool wait = true);
  TensorMap run_host(const TensorMap &inputs);
  void run_steps();
  void run_host_step(const std::string &name);
  void launch_checked(size_t step, Check &check, const std::vector<DeviceBuffer *> &args);
  /// The tuner's turn around a run: before it (swaps happen here, never inside a run), and after
  /// it, given how long the run took.
  void before_run();
  void after_run(double seconds);
  std::string loops() const;
};

}  // namespace tessera
