// What a device supplies to the runtime: memory (allocate, fill, copy, transfer), kernels built
// from finished loop IR and launched in order, and its target facts. Everything else a device does
// — lowering, schedules, the step loop of a run, host steps, profiling — the runtime does once for
// every device (runtime/Compile.h, runtime/Executable.h). Not a public header: it shows loop IR.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "compiler/IR.h"
#include "compiler/Target.h"
#include "runtime/DeviceInfo.h"

namespace tessera {

class Backend;
class BinaryStore;

/// Memory of one device. Backends derive their own (a pointer, a cl_mem, a VkBuffer range).
class DeviceBuffer {
 public:
  DeviceBuffer(Backend &backend, size_t bytes);
  virtual ~DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  Backend &backend() const { return *backend_; }
  size_t bytes() const { return bytes_; }
  /// Unique in the process (never reused, unlike an address): what a backend keys bindings by.
  uint64_t id() const { return id_; }

 private:
  Backend *backend_;
  size_t bytes_;
  uint64_t id_;
};

/// The kernels of one program, built for one device.
class CompiledKernels {
 public:
  virtual ~CompiledKernels() = default;
  /// Enqueues kernel `index` (in the order given to Backend::build) with `args[i]` bound to its
  /// params[i]; it runs after everything enqueued before it and sees what that wrote.
  virtual void launch(size_t index, const std::vector<DeviceBuffer *> &args) = 0;
};

/// A device's memory and kernels: one object per device, alive until the process ends. The
/// operations form one in-order stream; `mutex()` is held by whoever runs a program on it.
class Backend {
 public:
  virtual ~Backend() = default;

  virtual DeviceInfo info() const = 0;
  virtual compiler::Target target() const = 0;
  /// Whether programs run as kernels; false for the interpreter, whose every step is a host step.
  virtual bool runs_kernels() const { return true; }

  /// A buffer of `bytes` (at least 1) with unspecified contents. Throws tile::Error when the device
  /// cannot allocate it.
  virtual std::shared_ptr<DeviceBuffer> allocate(size_t bytes) = 0;
  /// Bytes [offset, offset + bytes) of `parent` as a buffer of their own (`offset` a multiple of
  /// view_alignment()), or null where the device has no such views. It keeps `parent` alive.
  virtual std::shared_ptr<DeviceBuffer> view(const std::shared_ptr<DeviceBuffer> &parent,
                                             size_t offset, size_t bytes);
  virtual size_t view_alignment() const { return 64; }
  /// Host memory used in place by kernels, or null where kernels cannot read host memory. The
  /// memory must outlive every use of the buffer.
  virtual std::shared_ptr<DeviceBuffer> wrap(void *host, size_t bytes);

  /// Enqueue: every byte of `buffer` set to `byte`; `bytes` of `from` copied to `to`.
  virtual void fill(DeviceBuffer &buffer, uint8_t byte) = 0;
  virtual void copy(DeviceBuffer &from, DeviceBuffer &to, size_t bytes) = 0;
  /// Wait for what was enqueued, then move `bytes` between the host and the start of `buffer`.
  virtual void write(DeviceBuffer &buffer, const void *host, size_t bytes) = 0;
  virtual void read(DeviceBuffer &buffer, void *host, size_t bytes) = 0;
  /// Enqueue: `bytes` of `host` copied into `buffer` after what was enqueued before, without
  /// waiting for the copy, whose source must stay as it is until the next read() or finish().
  /// A run's inputs go this way: on OpenCL a blocking write costs a round trip through the
  /// driver's queue (PoCL: 10-15 us, as much as two of small_resnet's kernels).
  virtual void write_async(DeviceBuffer &buffer, const void *host, size_t bytes) {
    write(buffer, host, bytes);
  }
  /// Wait for everything enqueued.
  virtual void finish() = 0;
  /// With the queue idle: enqueues what `enqueue` enqueues, waits for it, and returns the seconds
  /// the device took for it by its own clock (GPU timestamps), without the submit and the wait
  /// around it; nothing where the device has no such clock (time_enqueued times on the host then).
  virtual std::optional<double> time_on_device(const std::function<void()> &enqueue);

  /// Builds finished kernels (compiler/Finish.h). `binaries` keeps compiled code between processes
  /// (null: none). Throws tile::Error, with the driver's log where there is one, when a kernel does
  /// not build or does not fit the device.
  virtual std::unique_ptr<CompiledKernels>
  build(const std::vector<const compiler::Kernel *> &kernels, BinaryStore *binaries) = 0;
  /// The code build() makes of `kernels`, as text (`tessera lower --emit source`).
  virtual std::string source(const std::vector<const compiler::Kernel *> &kernels) = 0;

  std::recursive_mutex &mutex() { return mutex_; }

 private:
  std::recursive_mutex mutex_;
};

/// The seconds `enqueue`'s work takes on `backend` alone: what was enqueued before finishes first,
/// then the device's clock times it (Backend::time_on_device), or the host's from enqueue to the
/// end of the wait for it. How the tuner and profiles time a kernel.
double time_enqueued(Backend &backend, const std::function<void()> &enqueue);

}  // namespace tessera
