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

struct Executable::Impl {
  Impl(Backend &backend, tile::BoundProgram program, compiler::LoweredProgram lowered,
       std::unique_ptr<CompiledKernels> kernels, CompileReport report);

  Backend &backend;
  tile::BoundProgram program;
  compiler::LoweredProgram lowered;
  std::unique_ptr<CompiledKernels> kernels;  // the kernel steps', in step order; null without any
  CompileReport report;
  StepTimer timer;

  std::set<std::string> input_names, output_names;
  std::map<std::string, const compiler::BufferInfo *> buffers;
  std::map<std::string, const tile::BoundStatement *> statements;
  std::vector<size_t> kernel_of_step;                 // a kernel step's index in `kernels`
  std::vector<std::vector<std::string>> zero_before;  // per step: buffers zeroed before it
  std::vector<std::string> zero_at_start;             // outputs no step touches
  std::shared_ptr<DeviceBuffer> arena;  // the temporaries' memory, where the device has views
  std::map<std::string, std::shared_ptr<DeviceBuffer>> temp_buffers;
  std::map<std::string, std::shared_ptr<DeviceBuffer>> own_outputs;
  std::map<std::string, std::shared_ptr<DeviceBuffer>> staged_inputs;  // host inputs copied in

  std::vector<std::string> step_uses(const compiler::Step &s) const;
  void plan_memory();
  std::shared_ptr<DeviceBuffer> fresh(const tile::TensorType &type);
  std::shared_ptr<DeviceBuffer> own_output(const std::string &name);
  void check_device_inputs(const DeviceTensorMap &inputs) const;
  /// Callers hold the backend's mutex and have restarted the timer.
  DeviceTensorMap run_locked(const DeviceTensorMap &inputs, const DeviceTensorMap &outputs);
  TensorMap run_host(const TensorMap &inputs);
  void run_steps(const std::map<std::string, DeviceBuffer *> &where);
  void run_host_step(const std::string &name, const std::map<std::string, DeviceBuffer *> &where);
  std::string loops() const;
};

}  // namespace tessera
