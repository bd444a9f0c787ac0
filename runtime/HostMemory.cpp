#include "runtime/HostMemory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include "tile/Diagnostics.h"

namespace tessera {

HostBuffer::HostBuffer(Backend &backend, std::byte *data, size_t bytes, std::shared_ptr<void> owner)
    : DeviceBuffer(backend, bytes), data_(data), owner_(std::move(owner)) {}

int64_t host_memory_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
}

namespace {

constexpr size_t kHugePage = 2 << 20;

}  // namespace

std::shared_ptr<DeviceBuffer> HostMemoryBackend::allocate(size_t bytes) {
  // Cache-line aligned: AVX-512 loads at malloc's 16-byte alignment straddle two lines.
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  void *p = nullptr;
  if (rounded >= kHugePage) {
    // Large buffers (weights, activations, the run's arena) in transparent huge pages, which
    // Debian's kernels give only where asked (THP mode madvise).
    rounded = (rounded + kHugePage - 1) / kHugePage * kHugePage;
    p = std::aligned_alloc(kHugePage, rounded);
    if (p) madvise(p, rounded, MADV_HUGEPAGE);
  } else {
    p = std::aligned_alloc(64, rounded);
  }
  if (!p)
    throw tile::Error("error: " + info().name + ": cannot allocate " + std::to_string(bytes) +
                      " bytes of memory");
  std::shared_ptr<void> owner(p, [](void *q) { std::free(q); });
  return std::make_shared<HostBuffer>(*this, static_cast<std::byte *>(p), bytes, std::move(owner));
}

std::shared_ptr<DeviceBuffer> HostMemoryBackend::view(const std::shared_ptr<DeviceBuffer> &parent,
                                                      size_t offset, size_t bytes) {
  TESSERA_INTERNAL_ASSERT(offset + bytes <= parent->bytes(), "a view past the end of its buffer");
  // The view's owner is the parent buffer itself, which keeps the allocation alive.
  return std::make_shared<HostBuffer>(*this, host_data(*parent) + offset, bytes, parent);
}

std::shared_ptr<DeviceBuffer> HostMemoryBackend::wrap(void *host, size_t bytes) {
  return std::make_shared<HostBuffer>(*this, static_cast<std::byte *>(host), bytes, nullptr);
}

void HostMemoryBackend::fill(DeviceBuffer &buffer, uint8_t byte) {
  std::memset(host_data(buffer), byte, buffer.bytes());
}

void HostMemoryBackend::copy(DeviceBuffer &from, DeviceBuffer &to, size_t bytes) {
  if (bytes > 0) std::memmove(host_data(to), host_data(from), bytes);
}

void HostMemoryBackend::write(DeviceBuffer &buffer, const void *host, size_t bytes) {
  if (bytes > 0) std::memcpy(host_data(buffer), host, bytes);
}

void HostMemoryBackend::read(DeviceBuffer &buffer, void *host, size_t bytes) {
  if (bytes > 0) std::memcpy(host, host_data(buffer), bytes);
}

}  // namespace tessera
