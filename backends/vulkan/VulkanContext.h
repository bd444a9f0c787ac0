// The Vulkan instance and the `vulkan:N` devices it finds (every physical device with a compute
// queue): their facts, and the logical device, queue and pipelines, created on first use and kept
// until the process ends so that later compiles reuse identical pipelines.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/vulkan/GlslSource.h"
#include "runtime/BinaryStore.h"

namespace tessera::vulkan {

/// A compute pipeline built from one shader with one local size and invocation count.
struct Pipeline {
  VkShaderModule module = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
};

struct Gpu {
  int index = 0;
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  uint32_t queue_family = 0;
  uint32_t timestamp_bits = 0;  // the queue's valid timestamp bits; 0: no timestamps
  uint32_t api_version = 0;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t subgroup_size = 1;
  int cores = 1;  // CPU threads (lavapipe), NVIDIA's multiprocessors, else 1 (Vulkan does not say)
  ShaderFeatures features;
  NanPreserve nan_preserve;
  std::map<std::string, std::string> facts;

  // Created by open_gpu(); `mutex` guards the queue, the pipelines and the cache file.
  VkDevice device = VK_NULL_HANDLE;
  VkQueue queue = VK_NULL_HANDLE;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkPipelineCache cache = VK_NULL_HANDLE;
  std::set<std::string> cache_loaded;  // kernel cache files whose pipeline cache data was merged in
  bool cache_dirty = false;            // pipelines added since the data was last stored
  std::map<std::string, Pipeline> pipelines;  // keyed by source, local size and count
  int shader_compiles = 0;
  std::recursive_mutex mutex;

  std::string name() const { return "vulkan:" + std::to_string(index); }
  std::string label() const { return name() + " (" + facts.at("device") + ")"; }
};

/// Every device with a compute queue; empty when there is no loader driver (never throws).
std::vector<std::unique_ptr<Gpu>> &all_gpus();
/// Device `index` with its logical device created. Throws tile::Error when there is none.
Gpu &open_gpu(int index);

/// Throws tile::Error "error: vulkan: WHAT failed (VK_ERROR_...)" unless `result` is VK_SUCCESS.
void check(VkResult result, const std::string &what);

/// A pipeline wanted: `source` with `local_size` invocations per work-group.
struct PipelineRequest {
  const KernelSource *source;
  uint32_t local_size;
};

/// The pipeline of each request, made on first use (in parallel) from SPIR-V that `binaries` (may
/// be null) holds or that shaderc compiles (and `binaries` then keeps). Throws the first request's
/// error when one fails. Call with gpu.mutex held.
std::vector<const Pipeline *> pipelines_for(Gpu &gpu, const std::vector<PipelineRequest> &requests,
                                            BinaryStore *binaries);

/// Merges the pipeline cache data `binaries` holds for this device into its pipeline cache, once
/// per kernel cache file and process; data of another device or driver is ignored with a warning.
/// Call with gpu.mutex held.
void load_pipeline_cache(Gpu &gpu, BinaryStore *binaries);
/// Stores the pipeline cache's data in `binaries` when pipelines were added since it was last
/// stored. Call with gpu.mutex held.
void save_pipeline_cache(Gpu &gpu, BinaryStore *binaries);

}  // namespace tessera::vulkan
