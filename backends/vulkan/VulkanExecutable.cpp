#include "backends/vulkan/VulkanExecutable.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "backends/clike/ProgramRun.h"
#include "backends/vulkan/GlslSource.h"
#include "tile/Diagnostics.h"

namespace tessera::vulkan {

namespace {

// Invocations per work-group: 64 (a multiple of every subgroup size), capped by the device, and on
// a CPU device smaller where that leaves too few work-groups to keep every core busy.
uint32_t local_size_for(const Gpu &g, int64_t invocations) {
  const auto &lim = g.props.limits;
  uint32_t size = std::min({64u, lim.maxComputeWorkGroupInvocations, lim.maxComputeWorkGroupSize[0]});
  auto groups = [&](uint32_t s) { return (invocations + s - 1) / s; };
  while (size > g.subgroup_size && groups(size) < 4 * g.cores) size /= 2;
  return static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(size, invocations)));
}

class VulkanProgram : public VulkanExecutable {
 public:
  VulkanProgram(Gpu &g, tile::BoundProgram program, compiler::LoweredProgram lowered)
      : g_(g), program_(std::move(program)), lowered_(std::move(lowered)),
        written_whole_(compiler::written_whole_first(lowered_)) {
    try {
      build();
    } catch (...) {
      release();
      throw;
    }
  }
  ~VulkanProgram() override { release(); }

  int kernel_count() const override { return static_cast<int>(lowered_.steps.size()); }

  std::byte *mapped(const std::string &buffer) override {
    auto it = mems_.find(buffer);
    TESSERA_INTERNAL_ASSERT(it != mems_.end(), "no buffer " + buffer);
    return static_cast<std::byte *>(it->second.mapped);
  }
  void dispatch() override {
    std::lock_guard<std::mutex> lock(run_mutex_);
    for (const auto &[step, cb] : segment_at_) submit(cb);
  }

  bool can_profile() const override { return true; }

  TensorMap run(const TensorMap &inputs) override {
    std::lock_guard<std::mutex> lock(run_mutex_);
    timer_.restart();
    clike::write_inputs(program_, inputs, io_);
    // Tile's unwritten elements are 0: outputs and temporaries start zeroed on every run, except
    // those their first kernel overwrites whole.
    for (auto &[name, m] : mems_)
      if (m.role != compiler::BufferInfo::Role::Input && !written_whole_.count(name))
        timer_.time(StepKind::Fill, name, [&m = m] { std::memset(m.mapped, 0, m.bytes); });
    for (size_t i = 0; i < lowered_.steps.size(); ++i) {
      const auto &step = lowered_.steps[i];
      if (step.kind == compiler::Step::Kind::Host) {
        clike::run_host_step(program_, step.host_statement, io_, timer_);
        continue;
      }
      if (timer_.enabled()) {
        submit_alone(i);
        continue;
      }
      if (auto it = segment_at_.find(i); it != segment_at_.end()) submit(it->second);
    }
    return clike::read_outputs(program_, inputs, io_);
  }

 private:
  struct Mem {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBufferView texels = VK_NULL_HANDLE;  // its R32G32B32A32_SFLOAT view, made when a kernel reads one
    void *mapped = nullptr;
    size_t bytes = 0;
    compiler::BufferInfo::Role role;
  };

  uint32_t memory_type(uint32_t bits) const {
    // Host-visible, coherent memory (device-local too where there is such: lavapipe, integrated GPUs).
    VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int fallback = -1;
    for (uint32_t i = 0; i < g_.memory.memoryTypeCount; ++i) {
      if (!(bits & (1u << i)) || (g_.memory.memoryTypes[i].propertyFlags & want) != want) continue;
      if (g_.memory.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) return i;
      if (fallback < 0) fallback = static_cast<int>(i);
    }
    if (fallback < 0) throw tile::Error("error: " + g_.label() + " has no host-visible coherent memory");
    return static_cast<uint32_t>(fallback);
  }

  void allocate(const compiler::BufferInfo &b) {
    size_t bytes = b.elements * tile::dtype_size(b.dtype);
    uint64_t range = g_.props.limits.maxStorageBufferRange;
    if (bytes > range || b.elements > std::numeric_limits<int32_t>::max())
      throw tile::Error("error: " + g_.label() + ": tensor '" + b.name + "' is " + std::to_string(bytes) +
                        " bytes, more than one storage buffer can bind on this device (maxStorageBufferRange " +
                        std::to_string(range) + " bytes)");
    Mem m;
    m.bytes = bytes;
    m.role = b.role;
    VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
    bi.size = std::max<size_t>(16, (bytes + 15) / 16 * 16);
    bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;
    bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    check(vkCreateBuffer(g_.device, &bi, nullptr, &m.buffer), g_.name() + ": vkCreateBuffer for " + b.name);
    mems_[b.name] = m;  // released by release() from here on
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(g_.device, m.buffer, &req);
    VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = memory_type(req.memoryTypeBits);
    check(vkAllocateMemory(g_.device, &ai, nullptr, &mems_[b.name].memory),
          g_.name() + ": vkAllocateMemory of " + std::to_string(req.size) + " bytes for " + b.name);
    Mem &mm = mems_[b.name];
    check(vkBindBufferMemory(g_.device, mm.buffer, mm.memory, 0), g_.name() + ": vkBindBufferMemory");
    check(vkMapMemory(g_.device, mm.memory, 0, VK_WHOLE_SIZE, 0, &mm.mapped), g_.name() + ": vkMapMemory");
    // All ones (NaN, -1) in a buffer never zero-filled: a kernel that claimed to overwrite it whole
    // but did not shows on the first run rather than as a stale earlier result.
    if (written_whole_.count(b.name)) std::memset(mm.mapped, 0xff, bytes);
  }

  // The texel buffer view of buffer `m` (its size is a multiple of 16 bytes: whole texels).
  VkBufferView texel_view(const std::string &name, Mem &m) {
    if (m.texels) return m.texels;
    VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
    vi.buffer = m.buffer;
    vi.format = VK_FORMAT_R32G32B32A32_SFLOAT;
    vi.range = VK_WHOLE_SIZE;
    check(vkCreateBufferView(g_.device, &vi, nullptr, &m.texels), g_.name() + ": vkCreateBufferView for " + name);
    return m.texels;
  }

  struct Dispatch {
    const vulkan::Pipeline *pipeline;
    std::vector<int> texel_params;
    VkDescriptorSet set;
    uint32_t x, y, z;
  };

  void build() {
    for (const auto &b : lowered_.buffers) allocate(b);
    const auto &lim = g_.props.limits;
    auto &dispatches = dispatches_;
    uint32_t descriptors = 0, texel_descriptors = 0;
    {
      std::lock_guard<std::recursive_mutex> lock(g_.mutex);
      for (size_t i = 0; i < lowered_.steps.size(); ++i) {
        const auto &step = lowered_.steps[i];
        if (step.kind != compiler::Step::Kind::Kernel) continue;
        vulkan::KernelSource src = vulkan::kernel_source(step.kernel, lim.maxTexelBufferElements);
        vulkan::check_features(src, g_.features, g_.label());
        const auto &launch = src.launch;
        uint32_t local = 1;
        std::array<uint64_t, 3> groups{1, 1, 1};
        if (launch.dims > 0 && !launch.driver_local) {
          // The schedule's work-group shape, as it is.
          if (launch.workgroup_size() > lim.maxComputeWorkGroupInvocations)
            throw tile::Error("error: " + g_.label() + ": kernel " + step.kernel.name + " has work-groups of " +
                              std::to_string(launch.workgroup_size()) + " invocations, more than the device's " +
                              std::to_string(lim.maxComputeWorkGroupInvocations));
          for (int d = 0; d < 3; ++d) {
            if (launch.local[d] > lim.maxComputeWorkGroupSize[d] || launch.groups[d] > lim.maxComputeWorkGroupCount[d])
              throw tile::Error("error: " + g_.label() + ": kernel " + step.kernel.name + " needs " +
                                std::to_string(launch.groups[d]) + " work-groups of " + std::to_string(launch.local[d]) +
                                " in dimension " + std::to_string(d) + ", more than the device can dispatch");
            groups[d] = static_cast<uint64_t>(launch.groups[d]);
          }
          if (groups[0] * groups[1] * groups[2] == 0) continue;
        } else {
          if (src.invocations <= 0) continue;
          if (src.invocations > std::numeric_limits<uint32_t>::max())
            throw tile::Error("error: " + g_.label() + ": kernel " + step.kernel.name + " has " +
                              std::to_string(src.invocations) + " invocations, more than 2^32");
          local = local_size_for(g_, src.invocations);
          uint64_t count = (src.invocations + local - 1) / local;
          groups[0] = std::min<uint64_t>(count, lim.maxComputeWorkGroupCount[0]);
          groups[1] = (count + groups[0] - 1) / groups[0];
          if (groups[1] > lim.maxComputeWorkGroupCount[1])
            throw tile::Error("error: " + g_.label() + ": kernel " + step.kernel.name + " needs " +
                              std::to_string(count) + " work-groups, more than the device can dispatch");
        }
        const vulkan::Pipeline &p = vulkan::pipeline_for(g_, src, local);
        dispatches.push_back({i, {&p, src.texel_params, VK_NULL_HANDLE, static_cast<uint32_t>(groups[0]),
                                  static_cast<uint32_t>(groups[1]), static_cast<uint32_t>(groups[2])}});
        descriptors += static_cast<uint32_t>(step.kernel.params.size());
        texel_descriptors += static_cast<uint32_t>(src.texel_params.size());
      }
      vulkan::save_pipeline_cache(g_);
    }
    if (dispatches.empty()) return;

    VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(1u, descriptors)},
                                     {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, texel_descriptors}};
    VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    pi.maxSets = static_cast<uint32_t>(dispatches.size());
    pi.poolSizeCount = texel_descriptors > 0 ? 2 : 1;
    pi.pPoolSizes = sizes;
    check(vkCreateDescriptorPool(g_.device, &pi, nullptr, &pool_), g_.name() + ": vkCreateDescriptorPool");
    for (auto &[i, d] : dispatches) {
      VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
      ai.descriptorPool = pool_;
      ai.descriptorSetCount = 1;
      ai.pSetLayouts = &d.pipeline->set_layout;
      check(vkAllocateDescriptorSets(g_.device, &ai, &d.set), g_.name() + ": vkAllocateDescriptorSets");
      const auto &params = lowered_.steps[i].kernel.params;
      std::vector<VkDescriptorBufferInfo> infos(params.size());
      std::vector<VkBufferView> views(d.texel_params.size());
      std::vector<VkWriteDescriptorSet> writes(params.size() + views.size());
      for (size_t j = 0; j < params.size(); ++j) {
        auto it = mems_.find(params[j].name);
        TESSERA_INTERNAL_ASSERT(it != mems_.end(), "kernel uses unknown buffer " + params[j].name);
        infos[j] = {it->second.buffer, 0, VK_WHOLE_SIZE};
        writes[j] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        writes[j].dstSet = d.set;
        writes[j].dstBinding = static_cast<uint32_t>(j);
        writes[j].descriptorCount = 1;
        writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[j].pBufferInfo = &infos[j];
      }
      for (size_t j = 0; j < views.size(); ++j) {
        const std::string &name = params[d.texel_params[j]].name;
        views[j] = texel_view(name, mems_.at(name));
        VkWriteDescriptorSet &w = writes[params.size() + j];
        w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
        w.dstSet = d.set;
        w.dstBinding = static_cast<uint32_t>(params.size() + j);
        w.descriptorCount = 1;
        w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
        w.pTexelBufferView = &views[j];
      }
      vkUpdateDescriptorSets(g_.device, static_cast<uint32_t>(writes.size()), writes.data(), 0, nullptr);
    }

    // One command buffer per run of kernel steps between host steps, recorded once.
    size_t next = 0;
    while (next < dispatches.size()) {
      size_t first_step = dispatches[next].first, end = next;
      while (end < dispatches.size()) {
        bool host_between = false;
        for (size_t s = dispatches[next].first; s < dispatches[end].first; ++s)
          host_between |= lowered_.steps[s].kind == compiler::Step::Kind::Host;
        if (host_between) break;
        ++end;
      }
      segment_at_[first_step] = record(next, end);
      next = end;
    }
    VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    check(vkCreateFence(g_.device, &fi, nullptr, &fence_), g_.name() + ": vkCreateFence");
  }

  // A command buffer running dispatches_[first, end) in order, between the host's writes before it
  // and its reads after.
  VkCommandBuffer record(size_t first, size_t end) {
    VkCommandBuffer cb = VK_NULL_HANDLE;
    VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
    ai.commandPool = g_.pool;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    std::lock_guard<std::recursive_mutex> lock(g_.mutex);  // the pool is shared
    check(vkAllocateCommandBuffers(g_.device, &ai, &cb), g_.name() + ": vkAllocateCommandBuffers");
    commands_.push_back(cb);
    VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    check(vkBeginCommandBuffer(cb, &bi), g_.name() + ": vkBeginCommandBuffer");
    barrier(cb, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
    for (size_t k = first; k < end; ++k) {
      const Dispatch &d = dispatches_[k].second;
      if (k > first)  // each kernel reads what the ones before it wrote
        barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT,
                VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT);
      vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline->pipeline);
      vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline->layout, 0, 1, &d.set, 0, nullptr);
      vkCmdDispatch(cb, d.x, d.y, d.z);
    }
    barrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_ACCESS_SHADER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
            VK_ACCESS_HOST_READ_BIT);
    check(vkEndCommandBuffer(cb), g_.name() + ": vkEndCommandBuffer");
    return cb;
  }

  // A profiled run submits each kernel alone, so that each is timed; these command buffers are
  // recorded on the first profiled run. A kernel with nothing to dispatch has none.
  void submit_alone(size_t step) {
    if (alone_.empty())
      for (size_t k = 0; k < dispatches_.size(); ++k) alone_[dispatches_[k].first] = record(k, k + 1);
    if (auto it = alone_.find(step); it != alone_.end())
      timer_.time(StepKind::Kernel, lowered_.steps[step].kernel.name, [&] { submit(it->second); });
  }

  static void barrier(VkCommandBuffer cb, VkPipelineStageFlags src_stage, VkAccessFlags src, VkPipelineStageFlags dst_stage,
                      VkAccessFlags dst) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask = src;
    mb.dstAccessMask = dst;
    vkCmdPipelineBarrier(cb, src_stage, dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  void submit(VkCommandBuffer cb) {
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &cb;
    {
      std::lock_guard<std::recursive_mutex> lock(g_.mutex);  // the queue is shared
      check(vkQueueSubmit(g_.queue, 1, &si, fence_), g_.name() + ": vkQueueSubmit");
    }
    check(vkWaitForFences(g_.device, 1, &fence_, VK_TRUE, std::numeric_limits<uint64_t>::max()),
          g_.name() + ": vkWaitForFences");
    check(vkResetFences(g_.device, 1, &fence_), g_.name() + ": vkResetFences");
  }

  // Device memory is mapped: transfers are copies.
  clike::BufferIO make_io() {
    clike::BufferIO io;
    io.write = [this](const std::string &name, const HostTensor &t) {
      auto m = mems_.find(name);
      if (m == mems_.end()) return;  // an input no kernel reads
      timer_.time(StepKind::Transfer, name, [&] { std::memcpy(m->second.mapped, t.data(), t.bytes()); });
    };
    io.read = [this](const std::string &name, HostTensor &t) {
      timer_.time(StepKind::Transfer, name, [&] { std::memcpy(t.data(), mems_.at(name).mapped, t.bytes()); });
    };
    return io;
  }

  void release() {
    if (fence_) vkDestroyFence(g_.device, fence_, nullptr);
    if (!commands_.empty()) {
      std::lock_guard<std::recursive_mutex> lock(g_.mutex);
      vkFreeCommandBuffers(g_.device, g_.pool, static_cast<uint32_t>(commands_.size()), commands_.data());
    }
    if (pool_) vkDestroyDescriptorPool(g_.device, pool_, nullptr);
    for (auto &[n, m] : mems_) {
      if (m.texels) vkDestroyBufferView(g_.device, m.texels, nullptr);
      if (m.buffer) vkDestroyBuffer(g_.device, m.buffer, nullptr);
      if (m.memory) vkFreeMemory(g_.device, m.memory, nullptr);
    }
    fence_ = VK_NULL_HANDLE;
    commands_.clear();
    pool_ = VK_NULL_HANDLE;
    mems_.clear();
  }

  Gpu &g_;
  tile::BoundProgram program_;
  compiler::LoweredProgram lowered_;
  std::set<std::string> written_whole_;  // need no fill before a run
  std::map<std::string, Mem> mems_;
  clike::BufferIO io_ = make_io();
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> commands_;
  std::vector<std::pair<size_t, Dispatch>> dispatches_;  // step index, what it dispatches
  std::map<size_t, VkCommandBuffer> segment_at_;  // first kernel step of a segment -> its commands
  std::map<size_t, VkCommandBuffer> alone_;       // kernel step -> its commands alone (profiled runs)
  VkFence fence_ = VK_NULL_HANDLE;
  std::mutex run_mutex_;
};


}  // namespace

std::unique_ptr<VulkanExecutable> make_executable(Gpu &gpu, tile::BoundProgram program,
                                                  compiler::LoweredProgram lowered) {
  return std::make_unique<VulkanProgram>(gpu, std::move(program), std::move(lowered));
}

}  // namespace tessera::vulkan
