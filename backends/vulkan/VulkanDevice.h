// The `vulkan:N` devices: every physical device with a compute queue that the Vulkan loader finds;
// programs are lowered to loop IR, printed as GLSL compute shaders, compiled to SPIR-V with shaderc
// and dispatched from one command buffer per run (host steps split it).
#pragma once

#include <memory>
#include <string>

#include "runtime/Device.h"

namespace tessera {

/// How many Vulkan devices this machine has (0 without a loader driver).
int vulkan_device_count();
/// One line naming device `index` (its name, vendor and driver) for the registry.
std::string vulkan_device_description(int index);
std::unique_ptr<Device> make_vulkan_device(int index);

}  // namespace tessera
