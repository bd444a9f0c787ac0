// The `cpu` device: finished loop IR compiled by LLVM for the host and run on a thread pool, its
// tensors in host memory.
#pragma once

#include "compiler/Target.h"
#include "runtime/Backend.h"

namespace tessera {

/// The host CPU's backend (one per process).
Backend &cpu_backend();

namespace llvm_backend {
/// The facts of the host the cost model schedules for (cores, vector width, caches).
compiler::Target host_target();
}  // namespace llvm_backend

}  // namespace tessera
