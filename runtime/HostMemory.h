// Device memory that is host memory: the `cpu` and `interp` devices keep tensors in 64-byte aligned
// host allocations, use host memory in place, and move data with memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "runtime/Backend.h"

namespace tessera {

/// A buffer in host memory: owned (aligned), a view into another, or borrowed host memory.
class HostBuffer : public DeviceBuffer {
 public:
  HostBuffer(Backend &backend, std::byte *data, size_t bytes, std::shared_ptr<void> owner);
  std::byte *data() const { return data_; }

 private:
  std::byte *data_;
  std::shared_ptr<void> owner_;  // the allocation this buffer lives in (null when borrowed)
};

/// The memory half of a Backend for devices whose memory is the host's; work runs when called, so
/// there is nothing to wait for.
class HostMemoryBackend : public Backend {
 public:
  std::shared_ptr<DeviceBuffer> allocate(size_t bytes) override;
  std::shared_ptr<DeviceBuffer> view(const std::shared_ptr<DeviceBuffer> &parent, size_t offset,
                                     size_t bytes) override;
  std::shared_ptr<DeviceBuffer> wrap(void *host, size_t bytes) override;
  void fill(DeviceBuffer &buffer, uint8_t byte) override;
  void copy(DeviceBuffer &from, DeviceBuffer &to, size_t bytes) override;
  void write(DeviceBuffer &buffer, const void *host, size_t bytes) override;
  void read(DeviceBuffer &buffer, void *host, size_t bytes) override;
  void finish() override {}
};

/// The host's physical memory in bytes: the largest tensor the `cpu` and `interp` devices hold.
int64_t host_memory_bytes();

/// The host memory of a buffer of a HostMemoryBackend.
inline std::byte *host_data(DeviceBuffer &b) { return static_cast<HostBuffer &>(b).data(); }

}  // namespace tessera
