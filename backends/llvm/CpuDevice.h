// The `cpu` device: programs lowered to loop IR, compiled by LLVM for the host and run on a thread pool.
#pragma once

#include <memory>
#include <string>

#include "compiler/Lower.h"
#include "runtime/Device.h"

namespace tessera {

std::unique_ptr<Device> make_cpu_device();

namespace llvm_backend {
/// The facts of the host the cost model schedules for (cores, vector width, caches).
compiler::TargetInfo host_target();
}  // namespace llvm_backend

/// The kernels of `program` as LLVM IR text (`tessera lower --emit source`), after the host's O3
/// pipeline when `optimize`.
std::string emit_source(const compiler::LoweredProgram &program, bool optimize = true);

}  // namespace tessera
