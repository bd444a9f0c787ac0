// Where the Vulkan pipeline cache of a device lives between processes: a file next to the kernel
// cache, named by the device's pipelineCacheUUID.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::vulkan {

/// The file for the device whose pipelineCacheUUID is `uuid`: in the directory of $TESSERA_CACHE
/// when set, else $XDG_CACHE_HOME/tessera (~/.cache/tessera).
std::string pipeline_cache_path(const uint8_t (&uuid)[16]);

/// The file's bytes when it is a pipeline cache for this device (header of version one with this
/// vendor, device and uuid); else empty, with a warning on stderr when the file exists but is bad.
std::vector<char> read_pipeline_cache(const std::string &path, uint32_t vendor, uint32_t device,
                                      const uint8_t (&uuid)[16]);

/// Writes `data` to `path` (through a temporary file and a rename). Returns "" or what went wrong.
std::string write_pipeline_cache(const std::string &path, const std::vector<char> &data);

}  // namespace tessera::vulkan
