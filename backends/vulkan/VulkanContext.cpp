#include "backends/vulkan/VulkanContext.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <set>
#include <thread>

#include "backends/clike/ParallelBuild.h"
#include "backends/vulkan/PipelineCacheData.h"
#include "backends/vulkan/ShaderCompiler.h"
#include "tile/Diagnostics.h"

namespace tessera::vulkan {

namespace {

const char *result_name(VkResult r) {
  switch (r) {
    case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
    case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
    case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
    case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
    case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
    case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
    case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
    case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
    case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
    case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
    case VK_ERROR_INVALID_SHADER_NV: return "VK_ERROR_INVALID_SHADER_NV";
    case VK_TIMEOUT: return "VK_TIMEOUT";
    default: return "VkResult";
  }
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

std::string vendor_name(uint32_t id) {
  switch (id) {
    case 0x1002: return "AMD";
    case 0x10DE: return "NVIDIA";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x106B: return "Apple";
    case VK_VENDOR_ID_MESA: return "Mesa";
    default: break;
  }
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", id);
  return buf;
}

const char *type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual-gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

// The validation layer, in debug builds where it is installed (never required).
std::vector<const char *> debug_layers() {
#ifdef NDEBUG
  return {};
#else
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, nullptr);
  std::vector<VkLayerProperties> layers(n);
  vkEnumerateInstanceLayerProperties(&n, layers.data());
  for (const auto &l : layers)
    if (std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0)
      return {"VK_LAYER_KHRONOS_validation"};
  return {};
#endif
}

VkInstance instance() {
  static VkInstance inst = [] {
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "tessera";
    app.pEngineName = "tessera";
    app.apiVersion = VK_API_VERSION_1_2;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pApplicationInfo = &app;
    auto layers = debug_layers();
    info.enabledLayerCount = static_cast<uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    VkInstance i = VK_NULL_HANDLE;
    if (vkCreateInstance(&info, nullptr, &i) != VK_SUCCESS)
      return VkInstance(VK_NULL_HANDLE);  // no driver
    return i;
  }();
  return inst;
}

bool has_extension(VkPhysicalDevice pd, const char *name) {
  uint32_t count = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> extensions(count);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &count, extensions.data());
  return std::any_of(extensions.begin(), extensions.end(),
                     [&](const auto &e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::unique_ptr<Gpu> describe(VkPhysicalDevice pd, uint32_t family) {
  auto g = std::make_unique<Gpu>();
  g->physical = pd;
  g->queue_family = family;
  vkGetPhysicalDeviceProperties(pd, &g->props);
  vkGetPhysicalDeviceMemoryProperties(pd, &g->memory);
  g->api_version = g->props.apiVersion;
  bool v12 = g->api_version >= VK_API_VERSION_1_2;

  VkPhysicalDeviceFeatures core{};
  vkGetPhysicalDeviceFeatures(pd, &core);
  g->features.float64 = core.shaderFloat64;
  g->features.int64 = core.shaderInt64;
  std::string driver = std::to_string(g->props.driverVersion);
  if (v12) {
    VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
    VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
    f11.pNext = &f12;
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &f11;
    vkGetPhysicalDeviceFeatures2(pd, &f2);
    g->features.float16 = f12.shaderFloat16 && f11.storageBuffer16BitAccess;
    g->features.int16 = core.shaderInt16 && f11.storageBuffer16BitAccess;
    g->features.int8 = f12.shaderInt8 && f12.storageBuffer8BitAccess;

    VkPhysicalDeviceSubgroupProperties sub{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceDriverProperties drv{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceFloatControlsProperties fc{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
    // NVIDIA's drivers tell their multiprocessors: the cost model sizes tiles to fill them.
    VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
    sub.pNext = &drv;
    drv.pNext = &fc;
    if (has_extension(pd, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME)) fc.pNext = &sm;
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sub;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    g->subgroup_size = std::max(1u, sub.subgroupSize);
    g->cores = static_cast<int>(std::max(1u, sm.shaderSMCount));
    driver = std::string(drv.driverName) + " " + drv.driverInfo;
    g->nan_preserve = {static_cast<bool>(fc.shaderSignedZeroInfNanPreserveFloat16),
                       static_cast<bool>(fc.shaderSignedZeroInfNanPreserveFloat32),
                       static_cast<bool>(fc.shaderSignedZeroInfNanPreserveFloat64)};
  }
  const auto &lim = g->props.limits;
  bool cpu = g->props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  // A CPU device (lavapipe) runs work-groups on one thread per core; Vulkan has no query for a
  // GPU's compute units but NVIDIA's extension above.
  if (cpu) g->cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto &f = g->facts;
  f["vendor"] = vendor_name(g->props.vendorID);
  f["device"] = g->props.deviceName;
  f["device_type"] = type_name(g->props.deviceType);
  f["driver_version"] = driver;
  f["api_version"] = version_string(g->api_version);
  f["compute_units"] = cpu || g->cores > 1 ? std::to_string(g->cores) : "unknown";
  f["local_memory_bytes"] = std::to_string(lim.maxComputeSharedMemorySize);
  f["max_workgroup_size"] = std::to_string(lim.maxComputeWorkGroupInvocations);
  f["subgroup_size"] = std::to_string(g->subgroup_size);
  // Invocations are the SIMD lanes (lavapipe too): one float per invocation is the natural width.
  f["preferred_vector_width_float"] = "1";
  f["max_storage_buffer_range"] = std::to_string(lim.maxStorageBufferRange);
  f["fp64"] = g->features.float64 ? "yes" : "no";
  f["fp16"] = g->features.float16 ? "yes" : "no";
  f["int64"] = g->features.int64 ? "yes" : "no";
  return g;
}

// Enables every optional feature the shaders may use that the device has.
VkDevice create_device(Gpu &g) {
  float priority = 1.0f;
  VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
  q.queueFamilyIndex = g.queue_family;
  q.queueCount = 1;
  q.pQueuePriorities = &priority;
  VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  f2.features.shaderFloat64 = g.features.float64;
  f2.features.shaderInt64 = g.features.int64;
  f2.features.shaderInt16 = g.features.int16;
  VkPhysicalDeviceVulkan11Features f11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  f11.storageBuffer16BitAccess = g.features.float16 || g.features.int16;
  f12.shaderFloat16 = g.features.float16;
  f12.shaderInt8 = g.features.int8;
  f12.storageBuffer8BitAccess = g.features.int8;
  VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  info.queueCreateInfoCount = 1;
  info.pQueueCreateInfos = &q;
  if (g.api_version >= VK_API_VERSION_1_2) {
    f11.pNext = &f12;
    f2.pNext = &f11;
    info.pNext = &f2;
  } else {
    info.pEnabledFeatures = &f2.features;
  }
  VkDevice d = VK_NULL_HANDLE;
  check(vkCreateDevice(g.physical, &info, nullptr, &d), g.name() + ": vkCreateDevice");
  return d;
}

std::string cache_key_of(const Gpu &g) {
  return pipeline_cache_key(g.props.vendorID, g.props.deviceID, g.props.pipelineCacheUUID);
}

}  // namespace

void check(VkResult result, const std::string &what) {
  if (result != VK_SUCCESS)
    throw tile::Error("error: vulkan: " + what + " failed (" + result_name(result) + " " +
                      std::to_string(static_cast<int>(result)) + ")");
}

std::vector<std::unique_ptr<Gpu>> &all_gpus() {
  static std::vector<std::unique_ptr<Gpu>> gpus;
  static std::once_flag once;
  std::call_once(once, [] {
    VkInstance inst = instance();
    if (!inst) return;
    uint32_t n = 0;
    if (vkEnumeratePhysicalDevices(inst, &n, nullptr) != VK_SUCCESS || n == 0) return;
    std::vector<VkPhysicalDevice> pds(n);
    vkEnumeratePhysicalDevices(inst, &n, pds.data());
    for (VkPhysicalDevice pd : pds) {
      uint32_t nq = 0;
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, nullptr);
      std::vector<VkQueueFamilyProperties> families(nq);
      vkGetPhysicalDeviceQueueFamilyProperties(pd, &nq, families.data());
      for (uint32_t i = 0; i < nq; ++i) {
        if (!(families[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
        auto g = describe(pd, i);
        g->timestamp_bits = families[i].timestampValidBits;
        g->index = static_cast<int>(gpus.size());
        gpus.push_back(std::move(g));
        break;
      }
    }
  });
  return gpus;
}

Gpu &open_gpu(int index) {
  auto &all = all_gpus();
  if (index < 0 || index >= static_cast<int>(all.size()))
    throw tile::Error("error: no Vulkan device vulkan:" + std::to_string(index) +
                      " on this machine");
  Gpu &g = *all[index];
  std::lock_guard<std::recursive_mutex> lock(g.mutex);
  if (g.device) return g;
  g.device = create_device(g);
  vkGetDeviceQueue(g.device, g.queue_family, 0, &g.queue);
  VkCommandPoolCreateInfo pool{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
  pool.queueFamilyIndex = g.queue_family;
  pool.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  check(vkCreateCommandPool(g.device, &pool, nullptr, &g.pool), g.name() + ": vkCreateCommandPool");
  VkPipelineCacheCreateInfo cache{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  check(vkCreatePipelineCache(g.device, &cache, nullptr, &g.cache),
        g.name() + ": vkCreatePipelineCache");
  return g;
}

namespace {

constexpr const char *kSpirvKind = "vulkan-spirv";

std::string spirv_key(const Gpu &g, const KernelSource &src) {
  return "api " + std::to_string(g.api_version) + "\n" + src.source;
}

// SPIR-V of `src` from the kernel cache; empty when it has none.
std::vector<uint32_t> stored_spirv(const Gpu &g, const KernelSource &src, BinaryStore *binaries) {
  if (binaries)
    if (auto found = binaries->find(kSpirvKind, spirv_key(g, src));
        found && !found->empty() && found->size() % 4 == 0) {
      std::vector<uint32_t> words(found->size() / 4);
      std::memcpy(words.data(), found->data(), found->size());
      if (words[0] == 0x07230203u)
        return words;  // the SPIR-V magic number; anything else is rebuilt
    }
  return {};
}

// A kernel that binds more buffers than the device allows is refused before its pipeline is made:
// lavapipe (32 storage buffers a kernel) crashed on a shader with 41. Uniform texel buffers count
// against the sampled images' limit.
void check_bindings(const Gpu &g, const KernelSource &src) {
  const VkPhysicalDeviceLimits &limits = g.props.limits;
  const auto storage = static_cast<uint32_t>(src.buffers);
  const auto texels = static_cast<uint32_t>(src.texel_params.size());
  auto refuse = [&](uint32_t count, const std::string &what, uint32_t limit) {
    throw tile::Error("error: " + g.label() + ": kernel " + src.name + " binds " +
                      std::to_string(count) + " " + what + "; the device binds at most " +
                      std::to_string(limit) + " to a kernel");
  };
  if (storage > limits.maxPerStageDescriptorStorageBuffers)
    refuse(storage, "storage buffers", limits.maxPerStageDescriptorStorageBuffers);
  if (texels > limits.maxPerStageDescriptorSampledImages)
    refuse(texels, "texel buffer views", limits.maxPerStageDescriptorSampledImages);
  if (storage + texels > limits.maxPerStageResources)
    refuse(storage + texels, "buffers and views", limits.maxPerStageResources);
}

// The pipeline of `spirv`; may run on any thread (Vulkan's create calls and a pipeline cache
// without VK_PIPELINE_CACHE_CREATE_EXTERNALLY_SYNCHRONIZED_BIT may be used concurrently).
Pipeline make_pipeline(const Gpu &g, const KernelSource &src, uint32_t local_size,
                       const std::vector<uint32_t> &spirv) {
  check_bindings(g, src);
  Pipeline p;
  VkShaderModuleCreateInfo mi{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  mi.codeSize = spirv.size() * sizeof(uint32_t);
  mi.pCode = spirv.data();
  check(vkCreateShaderModule(g.device, &mi, nullptr, &p.module),
        g.name() + ": vkCreateShaderModule");

  // One storage buffer per kernel parameter, then the texel buffer views.
  auto storage = static_cast<uint32_t>(src.buffers);
  auto bindings = storage + static_cast<uint32_t>(src.texel_params.size());
  std::vector<VkDescriptorSetLayoutBinding> b(bindings);
  for (uint32_t i = 0; i < bindings; ++i) {
    b[i].binding = i;
    b[i].descriptorType =
        i < storage ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo li{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  li.bindingCount = bindings;
  li.pBindings = b.data();
  check(vkCreateDescriptorSetLayout(g.device, &li, nullptr, &p.set_layout),
        g.name() + ": vkCreateDescriptorSetLayout");
  VkPipelineLayoutCreateInfo pli{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p.set_layout;
  check(vkCreatePipelineLayout(g.device, &pli, nullptr, &p.layout),
        g.name() + ": vkCreatePipelineLayout");

  uint32_t values[2] = {local_size, static_cast<uint32_t>(src.invocations)};
  VkSpecializationMapEntry entries[2] = {{kLocalSizeId, 0, sizeof(uint32_t)},
                                         {kCountId, sizeof(uint32_t), sizeof(uint32_t)}};
  VkSpecializationInfo spec{2, entries, sizeof values, values};
  VkComputePipelineCreateInfo ci{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  ci.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = p.module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = &spec;
  ci.layout = p.layout;
  check(vkCreateComputePipelines(g.device, g.cache, 1, &ci, nullptr, &p.pipeline),
        g.name() + ": vkCreateComputePipelines for kernel " + src.name);
  return p;
}

}  // namespace

// Pipelines this process made before are reused; the SPIR-V of the others comes from the kernel
// cache or from shaderc, and they are made on every core (NVIDIA's driver took 55 s for Xception's
// pipelines one after another, 9 s on 16 cores).
// Lookups and stores in the kernel cache stay on this thread.
std::vector<const Pipeline *> pipelines_for(Gpu &g, const std::vector<PipelineRequest> &requests,
                                            BinaryStore *binaries) {
  struct Job {
    size_t request;
    std::string key;
    std::vector<uint32_t> spirv;
    bool compiled = false;
    Pipeline pipeline;
    std::exception_ptr error;
  };
  std::vector<Job> jobs;
  std::set<std::string> queued;
  auto key_of = [](const PipelineRequest &r) {
    return std::to_string(r.local_size) + "/" + std::to_string(r.source->invocations) + "\n" +
           r.source->source;
  };
  for (size_t i = 0; i < requests.size(); ++i) {
    std::string key = key_of(requests[i]);
    if (g.pipelines.count(key) || !queued.insert(key).second) continue;
    jobs.push_back({i, std::move(key), stored_spirv(g, *requests[i].source, binaries)});
  }
  clike::build_on_all_cores(jobs.size(), [&](size_t j) {
    Job &job = jobs[j];
    const PipelineRequest &r = requests[job.request];
    try {
      if (job.spirv.empty()) {
        job.spirv =
            compile_glsl(r.source->source, g.api_version, g.label() + ": kernel " + r.source->name);
        job.compiled = true;
      }
      job.pipeline = make_pipeline(g, *r.source, r.local_size, job.spirv);
    } catch (...) {
      job.error = std::current_exception();
    }
  });

  std::exception_ptr first_error;
  for (auto &job : jobs) {
    if (job.error) {
      if (!first_error) first_error = job.error;
      continue;
    }
    if (job.compiled) {
      ++g.shader_compiles;
      if (binaries)
        binaries->store(
            kSpirvKind, spirv_key(g, *requests[job.request].source),
            std::string(reinterpret_cast<const char *>(job.spirv.data()), job.spirv.size() * 4));
    }
    g.pipelines.emplace(job.key, job.pipeline);
    g.cache_dirty = true;
  }
  if (first_error) std::rethrow_exception(first_error);
  std::vector<const Pipeline *> out;
  for (const auto &r : requests) out.push_back(&g.pipelines.at(key_of(r)));
  return out;
}

void load_pipeline_cache(Gpu &g, BinaryStore *binaries) {
  if (!binaries || !g.cache_loaded.insert(binaries->path()).second) return;
  std::optional<std::string> data = binaries->find(kPipelineCacheKind, cache_key_of(g));
  if (!data) return;
  if (!is_pipeline_cache_of(*data, g.props.vendorID, g.props.deviceID, g.props.pipelineCacheUUID)) {
    std::cerr << "tessera: warning: ignoring the stored Vulkan pipeline cache of " << g.label()
              << ": not a pipeline cache of this device and driver\n";
    return;
  }
  VkPipelineCacheCreateInfo info{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  info.initialDataSize = data->size();
  info.pInitialData = data->data();
  VkPipelineCache stored = VK_NULL_HANDLE;
  if (vkCreatePipelineCache(g.device, &info, nullptr, &stored) != VK_SUCCESS) {
    std::cerr << "tessera: warning: ignoring the stored Vulkan pipeline cache of " << g.label()
              << ": the driver rejects it\n";
    return;
  }
  vkMergePipelineCaches(g.device, g.cache, 1, &stored);
  vkDestroyPipelineCache(g.device, stored, nullptr);
}

void save_pipeline_cache(Gpu &g, BinaryStore *binaries) {
  if (!binaries || !g.cache_dirty) return;
  g.cache_dirty = false;
  size_t size = 0;
  if (vkGetPipelineCacheData(g.device, g.cache, &size, nullptr) != VK_SUCCESS || size == 0) return;
  std::string data(size, '\0');
  if (vkGetPipelineCacheData(g.device, g.cache, &size, data.data()) != VK_SUCCESS) return;
  data.resize(size);
  binaries->store(kPipelineCacheKind, cache_key_of(g), data);
}

}  // namespace tessera::vulkan
