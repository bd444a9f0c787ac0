// Loop IR kernels as OpenCL C: the OpenCL dialect of the C-like printer and the kernel frame
// (the outermost parallel loop becomes the NDRange, one work-item per iteration).
#pragma once

#include <cstdint>
#include <string>

#include "compiler/IR.h"

namespace tessera::opencl {

struct KernelSource {
  std::string entry;         // the __kernel function's name
  std::string source;        // a complete OpenCL C program
  int64_t global_size = 1;   // work-items to launch (1D)
  bool uses_fp64 = false;    // needs cl_khr_fp64
};

KernelSource kernel_source(const compiler::Kernel &kernel);

}  // namespace tessera::opencl
