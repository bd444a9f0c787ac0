// SGEMM on Tessera's `vulkan:0` beside the roofline of the same device: an FMA-throughput GLSL
// shader (independent fma chains, no memory traffic in the loop) run through the same Vulkan
// queue. items/s counters are FLOP/s. Only the run is timed (compilation happens once, before).
#include <random>
#include <string>

#include <benchmark/benchmark.h>

#include "backends/Registry.h"
#include "backends/vulkan/VulkanBackend.h"
#include "backends/vulkan/VulkanContext.h"
#include "bench/kernels/RandomMatrix.h"
#include "tile/Parser.h"

namespace {

using tessera::HostTensor;

using tessera::bench::random_matrix;

void BM_Sgemm_Vulkan(benchmark::State &state) {
  if (tessera::vulkan_device_count() == 0) return state.SkipWithError("no Vulkan device");
  int64_t n = state.range(0);
  auto program = tessera::tile::parse_program(
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }");
  auto bound = tessera::tile::bind(program, {{"A", {tessera::tile::DType::Float32, {n, n}}},
                                             {"B", {tessera::tile::DType::Float32, {n, n}}}});
  auto device = tessera::builtin_devices().create("vulkan:0");
  tessera::CompileOptions options;
  options.policy = tessera::TunePolicy::Off;  // the cost model's schedule
  auto exe = device->compile(bound, options);
  tessera::TensorMap inputs{{"A", random_matrix(n, 1)}, {"B", random_matrix(n, 2)}};
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(inputs));
  state.SetItemsProcessed(static_cast<int64_t>(2.0 * n * n * n) * state.iterations());
  state.SetLabel(device->info().facts.at("device"));
}

// The roofline: kChains independent fma chains per invocation, kIterations long.
constexpr int kChains = 16, kIterations = 2048, kLocal = 64;
constexpr uint32_t kInvocations = 8192;

std::string fma_shader() {
  std::string s =
      "#version 450\n"
      "layout(local_size_x_id = 0) in;\n"
      "layout(constant_id = 1) const uint TSR_COUNT = 1u;\n"
      "layout(std430, set = 0, binding = 0) buffer tsr_b0 { float result[]; };\n"
      "layout(std430, set = 0, binding = 1) readonly buffer tsr_b1 { float factor[]; };\n"
      "void main() {\n"
      "  uint id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * "
      "gl_WorkGroupSize.x;\n"
      "  if (id >= TSR_COUNT) return;\n"
      "  float y = factor[0], x = float(id) * 1e-6;\n";  // y loaded: nothing folds
  for (int c = 0; c < kChains; ++c)
    s += "  float a" + std::to_string(c) + " = x + " + std::to_string(c) + ".0;\n";
  s += "  for (int i = 0; i < " + std::to_string(kIterations) + "; ++i) {\n";
  for (int c = 0; c < kChains; ++c)
    s += "    a" + std::to_string(c) + " = fma(a" + std::to_string(c) + ", y, x);\n";
  s += "  }\n  result[id] = a0";
  for (int c = 1; c < kChains; ++c) s += " + a" + std::to_string(c);
  return s + ";\n}\n";
}

void BM_FmaRoofline_Vulkan(benchmark::State &state) {
  using tessera::vulkan::check;
  if (tessera::vulkan_device_count() == 0) return state.SkipWithError("no Vulkan device");
  tessera::vulkan::Gpu &g = tessera::vulkan::open_gpu(0);
  tessera::vulkan::KernelSource src;
  src.name = "fma_roofline";
  src.source = fma_shader();
  src.invocations = kInvocations;
  src.buffers = 2;
  std::lock_guard<std::recursive_mutex> lock(g.mutex);
  const tessera::vulkan::Pipeline &p =
      *tessera::vulkan::pipelines_for(g, {{&src, kLocal}}, nullptr)[0];

  // Two host-visible buffers: the results and the factor (0.999).
  VkBuffer buffers[2];
  VkDeviceMemory memory[2];
  for (int i = 0; i < 2; ++i) {
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = i == 0 ? kInvocations * sizeof(float) : 16;
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    check(vkCreateBuffer(g.device, &bi, nullptr, &buffers[i]), "vkCreateBuffer");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g.device, buffers[i], &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    VkMemoryPropertyFlags want =
        VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    for (uint32_t t = 0; t < g.memory.memoryTypeCount; ++t)
      if ((req.memoryTypeBits & (1u << t)) &&
          (g.memory.memoryTypes[t].propertyFlags & want) == want) {
        ai.memoryTypeIndex = t;
        break;
      }
    check(vkAllocateMemory(g.device, &ai, nullptr, &memory[i]), "vkAllocateMemory");
    check(vkBindBufferMemory(g.device, buffers[i], memory[i], 0), "vkBindBufferMemory");
  }
  void *mapped = nullptr;
  check(vkMapMemory(g.device, memory[1], 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  static_cast<float *>(mapped)[0] = 0.999f;
  vkUnmapMemory(g.device, memory[1]);

  VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = 1;
  pi.poolSizeCount = 1;
  pi.pPoolSizes = &size;
  VkDescriptorPool pool;
  check(vkCreateDescriptorPool(g.device, &pi, nullptr, &pool), "vkCreateDescriptorPool");
  VkDescriptorSetAllocateInfo dai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  dai.descriptorPool = pool;
  dai.descriptorSetCount = 1;
  dai.pSetLayouts = &p.set_layout;
  VkDescriptorSet set;
  check(vkAllocateDescriptorSets(g.device, &dai, &set), "vkAllocateDescriptorSets");
  VkDescriptorBufferInfo infos[2] = {{buffers[0], 0, VK_WHOLE_SIZE},
                                     {buffers[1], 0, VK_WHOLE_SIZE}};
  VkWriteDescriptorSet writes[2];
  for (int i = 0; i < 2; ++i) {
    writes[i] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[i].pBufferInfo = &infos[i];
  }
  vkUpdateDescriptorSets(g.device, 2, writes, 0, nullptr);

  VkCommandBufferAllocateInfo cai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  cai.commandPool = g.pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  VkCommandBuffer cb;
  check(vkAllocateCommandBuffers(g.device, &cai, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  check(vkBeginCommandBuffer(cb, &begin), "vkBeginCommandBuffer");
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
  vkCmdDispatch(cb, kInvocations / kLocal, 1, 1);
  check(vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  check(vkCreateFence(g.device, &fi, nullptr, &fence), "vkCreateFence");

  for (auto _ : state) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    check(vkQueueSubmit(g.queue, 1, &si, fence), "vkQueueSubmit");
    check(vkWaitForFences(g.device, 1, &fence, VK_TRUE, UINT64_MAX), "vkWaitForFences");
    check(vkResetFences(g.device, 1, &fence), "vkResetFences");
  }
  state.SetItemsProcessed(static_cast<int64_t>(2.0 * kChains * kIterations * kInvocations) *
                          state.iterations());
  state.SetLabel(g.facts.at("device"));

  vkDestroyFence(g.device, fence, nullptr);
  vkFreeCommandBuffers(g.device, g.pool, 1, &cb);
  vkDestroyDescriptorPool(g.device, pool, nullptr);
  for (int i = 0; i < 2; ++i) {
    vkDestroyBuffer(g.device, buffers[i], nullptr);
    vkFreeMemory(g.device, memory[i], nullptr);
  }
}

}  // namespace

BENCHMARK(BM_Sgemm_Vulkan)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_FmaRoofline_Vulkan)->Unit(benchmark::kMillisecond)->UseRealTime();
