// The tuner's view of the `cpu` device: one loop IR kernel JIT-compiled alone and timed.
#pragma once

#include "compiler/tune/Tuner.h"

namespace tessera::llvm_backend {

class CpuKernelBench : public compiler::tune::KernelBench {
 public:
  compiler::tune::Measurement measure(const compiler::Kernel &kernel, const std::vector<std::vector<std::byte>> &inputs,
                                      int warmup, int runs) override;
};

}  // namespace tessera::llvm_backend
