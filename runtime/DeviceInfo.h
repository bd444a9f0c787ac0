// Facts about a device: shown by `tessera devices`, and part of the kernel cache's key.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace tessera {

struct DeviceInfo {
  std::string name;                          // "interp", "cpu", "opencl:0"
  std::string backend;                       // "interp", "llvm", "opencl", "vulkan"
  std::string description;                   // one human line
  std::map<std::string, std::string> facts;  // vendor, compute units, ... (sorted: stable output)
  /// The largest tensor the device can hold, in bytes (host RAM, OpenCL's largest allocation,
  /// Vulkan's largest heap or storage buffer); 0 where unknown. Not part of the cache's key.
  int64_t max_tensor_bytes = 0;
};

/// The device part of the kernel cache's key: the backend and every fact the device reports.
std::string device_fingerprint(const DeviceInfo &info);

}  // namespace tessera
