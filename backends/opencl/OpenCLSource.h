// Loop IR kernels as OpenCL C: the OpenCL dialect of the C-like printer and the kernel frame
// (GpuBlock/GpuThread loops become work-group and work-item ids, clike/GpuLaunch.h; a kernel
// without them has its outermost parallel loop as a 1-D NDRange, one work-item per iteration).
#pragma once

#include <cstdint>
#include <string>

#include "backends/clike/GpuLaunch.h"
#include "compiler/IR.h"

namespace tessera::opencl {

struct KernelSource {
  std::string entry;        // the __kernel function's name
  std::string source;       // a complete OpenCL C program
  clike::GpuLaunch launch;  // the NDRange (dims 0: one work-item)
  bool uses_fp64 = false;   // needs cl_khr_fp64
};

/// Build options of every kernel program (part of the program cache's key).
inline constexpr const char *kBuildOptions = "-cl-std=CL1.2";

/// The OpenCL C program of finished kernel `kernel` (compiler/Finish.h).
KernelSource kernel_source(const compiler::Kernel &kernel);

/// The text the kernel cache keys a program binary by: the source and the build options.
inline std::string program_key_text(const KernelSource &src) {
  return src.source + "\n// build options: " + kBuildOptions + "\n";
}

}  // namespace tessera::opencl
