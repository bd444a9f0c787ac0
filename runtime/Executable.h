// A program compiled for one device and one set of input types: the device's kernels, host steps
// and buffers, run by one step loop for every device. Runs again with new inputs of the same types.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/CompileReport.h"
#include "runtime/DeviceTensor.h"
#include "runtime/HostTensor.h"
#include "runtime/OnlineReport.h"
#include "runtime/RunProfile.h"
#include "tile/Bind.h"

namespace tessera {

class Executable {
 public:
  struct Impl;  // runtime/Executable.cpp
  explicit Executable(std::unique_ptr<Impl> impl);
  ~Executable();
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;

  /// Runs on host tensors: `inputs` holds every input with its bound type; returns every output.
  /// Throws tile::Error for a bad input or a run-time error of the program (an `=` contraction
  /// writing an element twice).
  TensorMap run(const TensorMap &inputs);

  /// Runs with the data on the device. Every input is a device tensor of this device. An output
  /// named in `outputs` is written into that device tensor, also when it is one of the inputs (an
  /// update `W = W - lr * dW` bound to W writes W's memory, after every step that reads W); the
  /// other outputs are new device tensors that later runs do not overwrite. Returns every output.
  DeviceTensorMap run_on_device(const DeviceTensorMap &inputs, const DeviceTensorMap &outputs = {});

  const tile::BoundProgram &program() const;
  /// Steps this executable runs (kernels and host steps).
  int kernel_count() const;
  /// What compiling it did: schedules' origins, cache hits, tuning.
  const CompileReport &report() const;
  /// The finished loop IR of every step, as `tessera lower --emit loops --device` prints it.
  std::string loops() const;

  /// Whether the runs that follow time each step (RunProfile); off by default. On devices that
  /// queue work, a profiled step is waited for, so a profiled run is slower.
  void set_profiling(bool on);
  /// The steps of the last profiled run. Profiled runs of one executable must not overlap.
  const RunProfile &profile() const;

  /// What tuning between runs (TESSERA_TUNE=online) has done so far: empty under other policies.
  OnlineReport tuning() const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
