#include "backends/vulkan/PipelineCacheFile.h"

#include <vulkan/vulkan.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include <unistd.h>

namespace tessera::vulkan {

namespace fs = std::filesystem;

std::string pipeline_cache_path(const uint8_t (&uuid)[16]) {
  fs::path dir;
  if (const char *c = std::getenv("TESSERA_CACHE"); c && *c) {
    dir = fs::path(c).parent_path();
  } else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x) {
    dir = fs::path(x) / "tessera";
  } else {
    const char *home = std::getenv("HOME");
    dir = fs::path(home && *home ? home : ".") / ".cache" / "tessera";
  }
  static const char *hex = "0123456789abcdef";
  std::string id;
  for (uint8_t b : uuid) id += std::string{hex[b >> 4], hex[b & 15]};
  return (dir / ("vulkan-pipelines-" + id + ".bin")).string();
}

std::vector<char> read_pipeline_cache(const std::string &path, uint32_t vendor, uint32_t device,
                                      const uint8_t (&uuid)[16]) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::vector<char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  VkPipelineCacheHeaderVersionOne h{};
  bool ok = data.size() >= sizeof h;
  if (ok) std::memcpy(&h, data.data(), sizeof h);
  ok = ok && h.headerSize >= sizeof h && h.headerSize <= data.size() &&
       h.headerVersion == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && h.vendorID == vendor && h.deviceID == device &&
       std::memcmp(h.pipelineCacheUUID, uuid, VK_UUID_SIZE) == 0;
  if (!ok) {
    std::cerr << "tessera: warning: ignoring the Vulkan pipeline cache " << path
              << ": not a pipeline cache of this device and driver\n";
    return {};
  }
  return data;
}

std::string write_pipeline_cache(const std::string &path, const std::vector<char> &data) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(data.data(), static_cast<std::streamsize>(data.size())))
      return "cannot write " + tmp;
  }
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return "cannot rename to " + path;
  }
  return "";
}

}  // namespace tessera::vulkan
