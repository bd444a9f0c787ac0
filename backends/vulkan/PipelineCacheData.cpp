#include "backends/vulkan/PipelineCacheData.h"

#include <vulkan/vulkan.h>

#include <cstring>

namespace tessera::vulkan {

std::string pipeline_cache_key(uint32_t vendor, uint32_t device, const uint8_t (&uuid)[16]) {
  static const char *hex = "0123456789abcdef";
  std::string id;
  for (uint8_t b : uuid) id += std::string{hex[b >> 4], hex[b & 15]};
  return "vendor=" + std::to_string(vendor) + ";device=" + std::to_string(device) + ";uuid=" + id;
}

bool is_pipeline_cache_of(const std::string &data, uint32_t vendor, uint32_t device,
                          const uint8_t (&uuid)[16]) {
  VkPipelineCacheHeaderVersionOne h{};
  if (data.size() < sizeof h) return false;
  std::memcpy(&h, data.data(), sizeof h);
  return h.headerSize >= sizeof h && h.headerSize <= data.size() &&
         h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && h.vendorID == vendor &&
         h.deviceID == device && std::memcmp(h.pipelineCacheUUID, uuid, VK_UUID_SIZE) == 0;
}

}  // namespace tessera::vulkan
