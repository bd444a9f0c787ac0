#include "runtime/DeviceRegistry.h"

#include <cstdlib>

#include "tile/Diagnostics.h"

namespace tessera {

void DeviceRegistry::add(const std::string &name, const std::string &description, Factory factory) {
  for (const auto &e : entries_)
    TESSERA_INTERNAL_ASSERT(e.name != name, "device registered twice: " + name);
  entries_.push_back({name, description, std::move(factory)});
  if (preferred_default_.empty()) preferred_default_ = name;
}

std::vector<std::string> DeviceRegistry::names() const {
  std::vector<std::string> out;
  for (const auto &e : entries_) out.push_back(e.name);
  return out;
}

std::unique_ptr<Device> DeviceRegistry::create(const std::string &name) const {
  for (const auto &e : entries_)
    if (e.name == name) return e.factory();
  std::string known;
  for (const auto &e : entries_) known += (known.empty() ? "" : ", ") + e.name;
  throw tile::Error("error: unknown device '" + name + "' (this machine has: " + known + ")");
}

std::string DeviceRegistry::default_name() const {
  if (const char *env = std::getenv("TESSERA_DEVICE"); env && *env) return env;
  return preferred_default_;
}

}  // namespace tessera
