// The explicit list of devices this build knows. Backends add themselves through
// register_builtin_devices(); nothing registers itself from a static initializer.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/Device.h"

namespace tessera {

class DeviceRegistry {
 public:
  using Factory = std::function<std::unique_ptr<Device>()>;

  /// Adds a device under `name` ("interp", "cpu", "opencl:0"). Later names may not repeat.
  void add(const std::string &name, const std::string &description, Factory factory);
  std::vector<std::string> names() const;
  /// Creates the device; throws tile::Error listing the known names when `name` is unknown.
  std::unique_ptr<Device> create(const std::string &name) const;
  /// The device named by $TESSERA_DEVICE, else the registry's preferred default.
  std::string default_name() const;
  void set_preferred_default(const std::string &name) { preferred_default_ = name; }

 private:
  struct Entry {
    std::string name;
    std::string description;
    Factory factory;
  };
  std::vector<Entry> entries_;
  std::string preferred_default_;
};

}  // namespace tessera
