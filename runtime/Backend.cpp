#include "runtime/Backend.h"

#include <atomic>

namespace tessera {

namespace {
std::atomic<uint64_t> next_buffer_id{1};
}  // namespace

DeviceBuffer::DeviceBuffer(Backend &backend, size_t bytes)
    : backend_(&backend), bytes_(bytes), id_(next_buffer_id.fetch_add(1)) {}

std::shared_ptr<DeviceBuffer> Backend::view(const std::shared_ptr<DeviceBuffer> &, size_t, size_t) {
  return nullptr;
}

std::shared_ptr<DeviceBuffer> Backend::wrap(void *, size_t) { return nullptr; }

std::string device_fingerprint(const DeviceInfo &info) {
  std::string s = "backend=" + info.backend;
  for (const auto &[k, v] : info.facts) s += ";" + k + "=" + v;
  return s;
}

}  // namespace tessera
