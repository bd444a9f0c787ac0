// The tuner's view of a device: one finished kernel built by the device's backend, run on buffers
// of its own and timed, with its outputs read back for the tuner's correctness check.
#pragma once

#include <memory>

#include "compiler/tune/Tuner.h"

namespace tessera {

class Backend;
class BinaryStore;

/// Times kernels on `backend`; `binaries` (may be null) keeps what it builds between processes.
std::unique_ptr<compiler::tune::KernelBench> make_kernel_bench(Backend &backend,
                                                               BinaryStore *binaries);

}  // namespace tessera
