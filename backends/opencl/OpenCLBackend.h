// The `opencl:N` devices: every device of every OpenCL platform the ICD loader finds. Finished
// loop IR is printed as OpenCL C, built by the driver and enqueued in order on one queue.
#pragma once

#include <string>
#include <vector>

#include "runtime/Backend.h"

namespace tessera {

/// How many OpenCL devices this machine has (0 when there is no platform).
int opencl_device_count();
/// One line naming device `index` (its platform, device name and driver) for the registry.
std::string opencl_device_description(int index);
/// The backend of device `index` (one per device and process). Throws tile::Error when there is
/// no such device.
Backend &opencl_backend(int index);

/// How device `index` obtained its programs in this process (tests of the program cache).
struct OpenCLProgramStats {
  int source_builds = 0;  // built from OpenCL C
  int binary_loads = 0;   // loaded from a binary in the kernel cache
};
OpenCLProgramStats opencl_program_stats(int index);
/// Drops the programs this process built on device `index` (so the next compile goes to the kernel
/// cache again) and returns their cache key texts.
std::vector<std::string> opencl_forget_programs(int index);

}  // namespace tessera
