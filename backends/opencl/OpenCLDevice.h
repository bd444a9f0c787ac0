// The `opencl:N` devices: every device of every OpenCL platform the ICD loader finds; programs are
// lowered to loop IR, printed as OpenCL C, built by the driver and launched in order.
#pragma once

#include <memory>
#include <string>

#include "runtime/Device.h"

namespace tessera {

/// How many OpenCL devices this machine has (0 when there is no platform).
int opencl_device_count();
/// One line naming device `index` (its platform, device name and driver) for the registry.
std::string opencl_device_description(int index);
std::unique_ptr<Device> make_opencl_device(int index);

}  // namespace tessera
