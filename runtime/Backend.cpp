#include "runtime/Backend.h"

#include <atomic>
#include <chrono>

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

std::optional<double> Backend::time_on_device(const std::function<void()> &) {
  return std::nullopt;
}

double time_enqueued(Backend &backend, const std::function<void()> &enqueue) {
  backend.finish();
  // Without a device clock, enqueue is not called by time_on_device.
  if (auto seconds = backend.time_on_device(enqueue)) return *seconds;
  auto start = std::chrono::steady_clock::now();
  enqueue();
  backend.finish();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string device_fingerprint(const DeviceInfo &info) {
  std::string s = "backend=" + info.backend;
  for (const auto &[k, v] : info.facts) s += ";" + k + "=" + v;
  return s;
}

}  // namespace tessera
