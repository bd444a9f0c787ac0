// The host CPU's data caches, read from sysfs (Linux).
#pragma once

#include <cstdint>

namespace tessera::llvm_backend {

struct HostCaches {
  int64_t l1d_bytes = 32 << 10;  // defaults when sysfs does not say
  int64_t l2_bytes = 1 << 20;
  int64_t l3_bytes = 0;
};

/// Cache sizes of cpu0 (per core for L1/L2; L3 is usually shared).
const HostCaches &host_caches();

}  // namespace tessera::llvm_backend
