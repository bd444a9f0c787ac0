// A device (`cpu`, `opencl:N`, `vulkan:N`, `interp`): compiles bound programs into Executables
// and holds tensors that stay in its memory between runs.
#pragma once

#include <memory>
#include <string>

#include "runtime/CompileOptions.h"
#include "runtime/DeviceInfo.h"
#include "runtime/DeviceTensor.h"
#include "runtime/Executable.h"

namespace tessera {

class Backend;

class Device {
 public:
  /// The device of `backend`, which lives as long as the process (devices are made by the
  /// registry, backends/Registry.h).
  explicit Device(Backend &backend) : backend_(&backend) {}

  DeviceInfo info() const;
  /// Compiles `program` for this device: its schedules from the kernel cache, the tuner or the cost
  /// model (CompileOptions), kernels built by the device. Throws tile::Error for a program the
  /// compiler or the device cannot handle.
  std::unique_ptr<Executable> compile(const tile::BoundProgram &program,
                                      const CompileOptions &options = {});

  /// A device tensor holding `value`.
  DeviceTensor upload(const HostTensor &value);
  /// A device tensor of `type`, zero-filled.
  DeviceTensor allocate(const tile::TensorType &type);

  /// What compile() makes of `program` with `options` but without tuning (`tessera lower`): the
  /// finished loop IR of every step, and the code the device builds from it.
  std::string loops(const tile::BoundProgram &program, const CompileOptions &options = {});
  std::string source(const tile::BoundProgram &program, const CompileOptions &options = {});

  Backend &backend() const { return *backend_; }

 private:
  Backend *backend_;
};

}  // namespace tessera
