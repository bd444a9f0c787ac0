// The `vulkan:N` devices: every physical device with a compute queue that the Vulkan loader finds.
// Finished loop IR is printed as GLSL compute shaders, compiled to SPIR-V with shaderc, and
// dispatched from one command buffer per stretch of work the host does not wait for.
#pragma once

#include <string>

#include "runtime/Backend.h"

namespace tessera {

/// How many Vulkan devices this machine has (0 without a loader driver).
int vulkan_device_count();
/// One line naming device `index` (its name, vendor and driver) for the registry.
std::string vulkan_device_description(int index);
/// The backend of device `index` (one per device and process). Throws tile::Error when there is
/// no such device.
Backend &vulkan_backend(int index);

}  // namespace tessera
