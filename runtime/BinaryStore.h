// Compiled code kept between processes beside the tuned schedules, in the kernel cache's file: one
// store for every backend (LLVM object code, OpenCL program binaries, SPIR-V, Vulkan pipeline cache
// data), keyed by kind, a key text, the device's fingerprint and Tessera's version.
#pragma once

#include <optional>
#include <string>

namespace tessera {

class KernelCache;

class BinaryStore {
 public:
  BinaryStore(KernelCache &cache, std::string device_fingerprint);
  /// The bytes stored under (`kind`, `key_text`) for this device; nothing when there are none or
  /// the cache fails to answer (a build then costs time, never the run).
  std::optional<std::string> find(const std::string &kind, const std::string &key_text);
  /// Stores `bytes`; a cache that cannot store is reported once per process.
  void store(const std::string &kind, const std::string &key_text, const std::string &bytes);
  /// The kernel cache file the binaries live in.
  const std::string &path() const;

 private:
  KernelCache &cache_;
  std::string device_;
};

}  // namespace tessera
