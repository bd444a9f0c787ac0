// The tuner's KernelBench on an `opencl:N` device: builds one loop IR kernel, runs and times it.
#pragma once

#include <memory>
#include <string>

#include "compiler/tune/Tuner.h"

namespace tessera::opencl {

/// A KernelBench on OpenCL device `index`. Programs go through the kernel cache at `cache_path`
/// (binaries reused across processes); an empty path builds every candidate from source.
std::unique_ptr<compiler::tune::KernelBench> make_kernel_bench(int index, const std::string &cache_path = "");

}  // namespace tessera::opencl
