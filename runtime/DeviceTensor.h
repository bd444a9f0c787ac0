// A tensor in a device's memory: what runs take and give when data stays on the device between
// runs (the weights of a training loop), and what an in-place update writes.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "runtime/HostTensor.h"

namespace tessera {

class DeviceBuffer;

class DeviceTensor {
 public:
  DeviceTensor() = default;
  /// `buffer` (at least type.bytes() long) holding a tensor of `type`. Made by Device::upload,
  /// Device::allocate and runs.
  DeviceTensor(tile::TensorType type, std::shared_ptr<DeviceBuffer> buffer);

  bool defined() const { return buffer_ != nullptr; }
  const tile::TensorType &type() const { return type_; }
  size_t bytes() const;
  /// The device it lives on: "cpu", "opencl:0", ...
  std::string device() const;
  /// Its value on the host; waits for the runs that write it.
  HostTensor read() const;
  /// Overwrites it with `value`, which must have its type (tile::Error otherwise).
  void write(const HostTensor &value);

  const std::shared_ptr<DeviceBuffer> &buffer() const { return buffer_; }

 private:
  tile::TensorType type_;
  std::shared_ptr<DeviceBuffer> buffer_;
};

using DeviceTensorMap = std::map<std::string, DeviceTensor>;

}  // namespace tessera
