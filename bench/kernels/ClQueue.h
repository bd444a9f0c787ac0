// The first OpenCL device's context and in-order queue, for the benchmarks that drive the driver
// directly (CLBlast's SGEMM, the launch floor) beside Tessera's own `opencl:0`.
#pragma once

#include <CL/cl.h>

#include <optional>
#include <stdexcept>
#include <string>

namespace tessera::bench {

inline void check(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed with " + std::to_string(err));
}

struct ClQueue {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;

  /// The first platform's first device, or nothing where the machine has none.
  static std::optional<ClQueue> first() {
    cl_platform_id platform;
    cl_uint count = 0;
    ClQueue q;
    if (clGetPlatformIDs(1, &platform, &count) != CL_SUCCESS || count == 0 ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &q.device, nullptr) != CL_SUCCESS)
      return std::nullopt;
    cl_int err = CL_SUCCESS;
    q.context = clCreateContext(nullptr, 1, &q.device, nullptr, nullptr, &err);
    check(err, "clCreateContext");
    q.queue = clCreateCommandQueue(q.context, q.device, 0, &err);
    check(err, "clCreateCommandQueue");
    return q;
  }
  void release() {
    clReleaseCommandQueue(queue);
    clReleaseContext(context);
  }
};

}  // namespace tessera::bench
