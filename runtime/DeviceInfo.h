// Facts about a device: shown by `tessera devices`, and part of the kernel cache's key.
#pragma once

#include <map>
#include <string>

namespace tessera {

struct DeviceInfo {
  std::string name;                          // "interp", "cpu", "opencl:0"
  std::string backend;                       // "interp", "llvm", "opencl", "vulkan"
  std::string description;                   // one human line
  std::map<std::string, std::string> facts;  // vendor, compute units, ... (sorted: stable output)
};

/// The device part of the kernel cache's key: the backend and every fact the device reports.
std::string device_fingerprint(const DeviceInfo &info);

}  // namespace tessera
