// The Vulkan pipeline cache of a device kept between processes: its data is stored in the kernel
// cache's binaries (kind "vulkan-pipeline-cache"), keyed by the device's pipelineCacheUUID.
#pragma once

#include <cstdint>
#include <string>

namespace tessera::vulkan {

inline constexpr const char *kPipelineCacheKind = "vulkan-pipeline-cache";

/// The key text of the pipeline cache data of a device: vendor, device and pipelineCacheUUID.
std::string pipeline_cache_key(uint32_t vendor, uint32_t device, const uint8_t (&uuid)[16]);

/// Whether `data` is pipeline cache data for this device and driver (a header of version one with
/// this vendor, device and uuid): the driver is never given anything else.
bool is_pipeline_cache_of(const std::string &data, uint32_t vendor, uint32_t device,
                          const uint8_t (&uuid)[16]);

}  // namespace tessera::vulkan
