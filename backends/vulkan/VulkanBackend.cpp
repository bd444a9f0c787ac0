#include "backends/vulkan/VulkanBackend.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>

#include "backends/vulkan/GlslSource.h"
#include "backends/vulkan/VulkanContext.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using vulkan::check;
using vulkan::Gpu;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

/// Which memory a buffer takes: a tensor's where the device has memory enough that the host maps
/// (`tensor_placement`), a tensor's in device-local memory the host does not map
/// (TESSERA_VULKAN_MEMORY=device), or a staging buffer's for moving data between the two
/// (`staging_memory_type`).
enum class Memory { Tensor, DeviceTensor, Staging };

/// A VkBuffer range: a buffer of its own, or a view into one; mapped where the host can map it.
class VkBuf : public DeviceBuffer {
 public:
  VkBuf(Backend &backend, Gpu &g, size_t bytes, Memory memory = Memory::Tensor);
  VkBuf(Backend &backend, std::shared_ptr<DeviceBuffer> parent, size_t offset, size_t bytes);
  ~VkBuf() override;

  /// Its R32G32B32A32_SFLOAT texel view, made on first use.
  VkBufferView texels();
  /// The bytes a descriptor binds: whole texels, within the owner (views are 64-byte aligned
  /// slots).
  VkDeviceSize range() const { return round_up(std::max<size_t>(bytes(), 1), 16); }

  Gpu &g;
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  std::byte *mapped = nullptr;  // null: transfers go through a staging buffer
  bool host_cached = false;     // the host reads it through its caches

 private:
  VkDeviceMemory memory_ = VK_NULL_HANDLE;  // owner only
  VkBufferView texels_ = VK_NULL_HANDLE;
  std::shared_ptr<DeviceBuffer> parent_;
};

VkBuf &vk(DeviceBuffer &b) { return static_cast<VkBuf &>(b); }

bool has(const Gpu &g, uint32_t type, VkMemoryPropertyFlags flags) {
  return (g.memory.memoryTypes[type].propertyFlags & flags) == flags;
}

/// The first memory type among `bits` with `flags`, -1 if none.
int type_with(const Gpu &g, uint32_t bits, VkMemoryPropertyFlags flags) {
  for (uint32_t i = 0; i < g.memory.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && has(g, i, flags)) return static_cast<int>(i);
  return -1;
}

VkDeviceSize heap_of(const Gpu &g, int type) {
  return g.memory.memoryHeaps[g.memory.memoryTypes[type].heapIndex].size;
}

struct Placement {
  int type = -1;
  bool map = true;
};

/// Where a tensor lives. Device-local memory the host maps, where its heap is at least half the
/// largest device-local one: lavapipe's and integrated GPUs' memory, a discrete GPU's whole memory
/// through a resizable BAR (the H200's), and then transfers are copies. A discrete GPU without one
/// maps only 256 MB of its memory, which a network's weights outgrow (BERT-base's 440 MB): tensors
/// then live in device-local memory the host does not map, and transfers go through a staging
/// buffer. Host-visible memory of any kind where the device has no device-local memory.
Placement tensor_placement(const Gpu &g, uint32_t bits, bool device_only) {
  const VkMemoryPropertyFlags local = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT,
                              mappable = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                         VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int device = -1;  // the device-local type of the largest heap, unmapped ones first
  for (uint32_t i = 0; i < g.memory.memoryTypeCount; ++i)
    if ((bits & (1u << i)) && has(g, i, local) &&
        (device < 0 || heap_of(g, i) > heap_of(g, device) ||
         (heap_of(g, i) == heap_of(g, device) && has(g, device, mappable) &&
          !has(g, i, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT))))
      device = static_cast<int>(i);
  if (device_only && device >= 0) return {device, false};
  int both = type_with(g, bits, local | mappable);
  if (both >= 0 && (device < 0 || 2 * heap_of(g, both) >= heap_of(g, device))) return {both, true};
  if (device >= 0) return {device, has(g, device, mappable)};
  int any = type_with(g, bits, mappable);
  if (any < 0) throw tile::Error("error: " + g.label() + " has no memory a tensor can live in");
  return {any, true};
}

/// Host-visible, coherent memory for staging transfers, cached by the host where there is such: a
/// discrete GPU's device memory mapped through its BAR is uncached for the host, which reads it at
/// PCIe round-trip speed (the H200's: 60 MB/s, 6.4 ms for BERT-base's 393 KB output). -1: none.
int staging_memory_type(const Gpu &g, uint32_t bits) {
  VkMemoryPropertyFlags coherent =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int cached = type_with(g, bits, coherent | VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  return cached >= 0 ? cached : type_with(g, bits, coherent);
}

VkBuf::VkBuf(Backend &backend, Gpu &gpu, size_t bytes, Memory memory)
    : DeviceBuffer(backend, bytes), g(gpu) {
  VkBufferCreateInfo bi{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bi.size = round_up(std::max<size_t>(bytes, 1), 16);
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
             VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(vkCreateBuffer(g.device, &bi, nullptr, &buffer),
        g.name() + ": vkCreateBuffer of " + std::to_string(bytes) + " bytes");
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(g.device, buffer, &req);
  VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  ai.allocationSize = req.size;
  try {
    Placement place = memory == Memory::Staging
                          ? Placement{staging_memory_type(g, req.memoryTypeBits), true}
                          : tensor_placement(g, req.memoryTypeBits, memory == Memory::DeviceTensor);
    if (place.type < 0) throw tile::Error("error: " + g.label() + " has no host-visible memory");
    ai.memoryTypeIndex = static_cast<uint32_t>(place.type);
    check(vkAllocateMemory(g.device, &ai, nullptr, &memory_),
          g.name() + ": vkAllocateMemory of " + std::to_string(req.size) + " bytes");
    check(vkBindBufferMemory(g.device, buffer, memory_, 0), g.name() + ": vkBindBufferMemory");
    if (place.map) {
      void *p = nullptr;
      check(vkMapMemory(g.device, memory_, 0, VK_WHOLE_SIZE, 0, &p), g.name() + ": vkMapMemory");
      mapped = static_cast<std::byte *>(p);
      host_cached = has(g, place.type, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
    }
  } catch (...) {
    if (memory_) vkFreeMemory(g.device, memory_, nullptr);
    vkDestroyBuffer(g.device, buffer, nullptr);
    throw;
  }
}

VkBuf::VkBuf(Backend &backend, std::shared_ptr<DeviceBuffer> parent, size_t off, size_t bytes)
    : DeviceBuffer(backend, bytes), g(vk(*parent).g), parent_(std::move(parent)) {
  VkBuf &p = vk(*parent_);
  buffer = p.buffer;
  offset = p.offset + off;
  mapped = p.mapped ? p.mapped + off : nullptr;
  host_cached = p.host_cached;
}

VkBufferView VkBuf::texels() {
  if (texels_) return texels_;
  VkBufferViewCreateInfo vi{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
  vi.buffer = buffer;
  vi.format = VK_FORMAT_R32G32B32A32_SFLOAT;
  vi.offset = offset;
  vi.range = range();
  check(vkCreateBufferView(g.device, &vi, nullptr, &texels_), g.name() + ": vkCreateBufferView");
  return texels_;
}

// Invocations per work-group: 64 (a multiple of every subgroup size), capped by the device, and
// smaller where that leaves too few work-groups to keep every core busy (lavapipe's CPU threads,
// NVIDIA's multiprocessors; a device that does not tell counts as one).
uint32_t local_size_for(const Gpu &g, int64_t invocations) {
  const auto &lim = g.props.limits;
  uint32_t size =
      std::min({64u, lim.maxComputeWorkGroupInvocations, lim.maxComputeWorkGroupSize[0]});
  auto groups = [&](uint32_t s) { return (invocations + s - 1) / s; };
  while (size > g.subgroup_size && groups(size) < 4 * g.cores) size /= 2;
  return static_cast<uint32_t>(std::max<int64_t>(1, std::min<int64_t>(size, invocations)));
}

class VulkanBackend;

/// Pipelines and descriptor sets of a program's kernels; a launch records a dispatch into the
/// backend's open command buffer.
class VkKernels : public CompiledKernels {
 public:
  VkKernels(VulkanBackend &backend, const std::vector<const compiler::Kernel *> &kernels,
            BinaryStore *binaries);
  ~VkKernels() override;
  void launch(size_t index, const std::vector<DeviceBuffer *> &args) override;

 private:
  struct Dispatch {
    const vulkan::Pipeline *pipeline = nullptr;  // null: nothing to dispatch
    std::vector<int> texel_params;
    std::array<uint32_t, 3> groups{1, 1, 1};
    VkDescriptorSet set = VK_NULL_HANDLE;
    std::vector<uint64_t> bound;  // the buffer ids the set was written with
    uint64_t recorded_in = 0;     // the command buffer serial that last used the set
  };
  void bind(Dispatch &d, const std::vector<DeviceBuffer *> &args);

  VulkanBackend &backend_;
  Gpu &g_;
  std::vector<Dispatch> dispatches_;
  VkDescriptorPool pool_ = VK_NULL_HANDLE;
};

/// A Vulkan device as one in-order stream: fills, copies and dispatches are recorded into command
/// buffers, each submitted when it holds a batch of dispatches or when the host waits (a transfer
/// or finish()).
class VulkanBackend : public Backend {
 public:
  explicit VulkanBackend(int index) : g_(vulkan::open_gpu(index)) {
    const auto &lim = g_.props.limits;
    align_ = std::max<size_t>(
        {64, lim.minStorageBufferOffsetAlignment, lim.minTexelBufferOffsetAlignment});
    // staged: every read goes through the staging buffer, as on a discrete GPU (the tests' way
    // to run that path on lavapipe, whose memory is all host-cached).
    const char *readback = std::getenv("TESSERA_VULKAN_READBACK");
    std::string mode = readback ? readback : "";
    if (!mode.empty() && mode != "auto" && mode != "staged")
      throw tile::Error("error: TESSERA_VULKAN_READBACK is '" + mode +
                        "'; expected auto (stage reads of memory the host reads uncached) or "
                        "staged (stage every read)");
    stage_every_read_ = mode == "staged";
    // device: tensors in device-local memory the host does not map, as on a discrete GPU without a
    // resizable BAR (the tests' way to run the staged transfers on lavapipe).
    const char *memory = std::getenv("TESSERA_VULKAN_MEMORY");
    std::string where = memory ? memory : "";
    if (!where.empty() && where != "auto" && where != "device")
      throw tile::Error("error: TESSERA_VULKAN_MEMORY is '" + where +
                        "'; expected auto (tensors in memory the host maps where the device has "
                        "enough of it) or device (tensors in device-local memory, transfers "
                        "staged)");
    tensor_memory_ = where == "device" ? Memory::DeviceTensor : Memory::Tensor;
    // Told in the description, not the facts: the facts are the kernel cache's device fingerprint,
    // and where tensors live changes no kernel.
    Placement place = tensor_placement(g_, ~0u, tensor_memory_ == Memory::DeviceTensor);
    memory_note_ =
        std::string("; tensors in ") +
        (has(g_, place.type, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) ? "device-local" : "host") +
        (place.map ? " memory, mapped" : " memory, transfers staged");
    submit_every_ = submit_every_from_env();
  }

  // A tensor lives in one heap and is bound whole as one storage buffer.
  DeviceInfo info() const override {
    VkDeviceSize heap = 0;
    for (uint32_t i = 0; i < g_.memory.memoryHeapCount; ++i)
      heap = std::max(heap, g_.memory.memoryHeaps[i].size);
    return {g_.name(), "vulkan", vulkan_device_description(g_.index) + memory_note_, g_.facts,
            static_cast<int64_t>(
                std::min<VkDeviceSize>({heap, g_.props.limits.maxStorageBufferRange, INT64_MAX}))};
  }
  compiler::Target target() const override {
    compiler::Target t;
    t.backend = "vulkan";
    t.cores = g_.cores;
    // The invocations are the SIMD lanes (lavapipe's too): one float each. Wide-vector schedules
    // made elementwise kernels inline every helper 16-32 times (llvmpipe took minutes to compile
    // them); contractions get their tall register tiles from the GPU cost model instead.
    t.vector_bits = 32;
    t.local_memory_bytes = g_.props.limits.maxComputeSharedMemorySize;
    t.max_workgroup_size = static_cast<int>(g_.props.limits.maxComputeWorkGroupInvocations);
    t.subgroup_size = static_cast<int>(g_.subgroup_size);
    t.cpu_invocations = g_.props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    t.pad_guarded_reads = t.cpu_invocations;
    t.merge_small_steps = t.cpu_invocations;
    t.guards_in_taps = t.cpu_invocations;
    t.has_fp16 = g_.features.float16;
    t.has_fp64 = g_.features.float64;
    t.narrow_indices = true;
    t.unswitch_guards = true;
    t.hoist_loads = true;
    t.grouped_read_limit = g_.props.limits.maxTexelBufferElements;
    return t;
  }

  std::shared_ptr<DeviceBuffer> allocate(size_t bytes) override {
    return std::make_shared<VkBuf>(*this, g_, bytes, tensor_memory_);
  }
  std::shared_ptr<DeviceBuffer> view(const std::shared_ptr<DeviceBuffer> &parent, size_t offset,
                                     size_t bytes) override {
    return std::make_shared<VkBuf>(*this, parent, offset, bytes);
  }
  size_t view_alignment() const override { return align_; }

  void fill(DeviceBuffer &b, uint8_t byte) override {
    VkBuf &v = vk(b);
    uint32_t word = 0x01010101u * byte;
    vkCmdFillBuffer(commands(), v.buffer, v.offset, round_up(std::max<size_t>(v.bytes(), 1), 4),
                    word);
  }
  void copy(DeviceBuffer &from, DeviceBuffer &to, size_t bytes) override {
    if (bytes == 0) return;
    VkBufferCopy region{vk(from).offset, vk(to).offset, bytes};
    vkCmdCopyBuffer(commands(), vk(from).buffer, vk(to).buffer, 1, &region);
  }
  // Where memory is mapped, transfers are copies once the queue is idle. Else, and where the host
  // would read it uncached, the device copies between it and a host-cached staging buffer.
  void write(DeviceBuffer &b, const void *host, size_t bytes) override {
    finish();
    if (bytes == 0) return;
    VkBuf &to = vk(b);
    if (to.mapped) {
      std::memcpy(to.mapped, host, bytes);
      return;
    }
    VkBuf &from = staging(bytes);
    std::memcpy(from.mapped, host, bytes);
    VkBufferCopy region{0, to.offset, bytes};
    vkCmdCopyBuffer(commands(), from.buffer, to.buffer, 1, &region);
    finish();  // the staging buffer is free again
  }
  void read(DeviceBuffer &b, void *host, size_t bytes) override {
    VkBuf &from = vk(b);
    if (bytes == 0) return finish();
    if (from.mapped && from.host_cached && !stage_every_read_) {
      finish();
      std::memcpy(host, from.mapped, bytes);
      return;
    }
    VkBuf &to = staging(bytes);
    VkBufferCopy region{from.offset, 0, bytes};
    vkCmdCopyBuffer(commands(), from.buffer, to.buffer, 1, &region);
    finish();
    std::memcpy(host, to.mapped, bytes);
  }
  /// Submits what is recorded and waits until the device has run everything submitted, and the
  /// host sees what it wrote.
  void finish() override {
    if (open_) {
      barrier(open_, VK_PIPELINE_STAGE_HOST_BIT,
              VK_ACCESS_HOST_READ_BIT | VK_ACCESS_HOST_WRITE_BIT);
      submit();
    }
    if (in_flight_.empty()) return;
    // A fence signals once its batch and every batch submitted before it have run: the last one
    // would do, but waiting for all is as cheap and leaves nothing to reason about.
    std::vector<VkFence> fences;
    for (const auto &f : in_flight_) fences.push_back(f.fence);
    check(vkWaitForFences(g_.device, static_cast<uint32_t>(fences.size()), fences.data(), VK_TRUE,
                          std::numeric_limits<uint64_t>::max()),
          g_.name() + ": vkWaitForFences");
    check(vkResetFences(g_.device, static_cast<uint32_t>(fences.size()), fences.data()),
          g_.name() + ": vkResetFences");
    for (const auto &f : in_flight_) {
      check(vkResetCommandBuffer(f.commands, 0), g_.name() + ": vkResetCommandBuffer");
      spare_commands_.push_back(f.commands);
      spare_fences_.push_back(f.fence);
    }
    in_flight_.clear();
    completed_ = serial_ - 1;
  }
  /// Called after each dispatch recorded: a batch of `submit_every_` goes to the device without
  /// waiting, so that it runs while the host records the next. Submitting only when the host
  /// waits, a network's 300 dispatches started on the device once the last was recorded.
  void dispatched() {
    if (submit_every_ > 0 && ++dispatches_open_ >= submit_every_) submit();
  }

  // Two timestamps around the work, each written when everything before it has finished.
  std::optional<double> time_on_device(const std::function<void()> &enqueue) override {
    if (!timestamps()) return std::nullopt;
    finish();
    VkCommandBuffer cb = commands();
    vkCmdResetQueryPool(cb, queries_, 0, 2);
    vkCmdWriteTimestamp(cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 0);
    enqueue();
    vkCmdWriteTimestamp(commands(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
    finish();
    uint64_t ticks[2] = {0, 0};
    check(vkGetQueryPoolResults(g_.device, queries_, 0, 2, sizeof ticks, ticks, sizeof ticks[0],
                                VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
          g_.name() + ": vkGetQueryPoolResults");
    uint64_t mask = g_.timestamp_bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << g_.timestamp_bits) - 1;
    uint64_t elapsed = ((ticks[1] & mask) - (ticks[0] & mask)) & mask;
    return static_cast<double>(elapsed) * g_.props.limits.timestampPeriod * 1e-9;
  }

  std::unique_ptr<CompiledKernels> build(const std::vector<const compiler::Kernel *> &kernels,
                                         BinaryStore *binaries) override {
    return std::make_unique<VkKernels>(*this, kernels, binaries);
  }
  std::string source(const std::vector<const compiler::Kernel *> &kernels) override {
    std::string out;
    for (const auto *k : kernels) {
      vulkan::KernelSource src = vulkan::kernel_source(*k, g_.nan_preserve);
      const auto &l = src.launch;
      std::string shape =
          l.dims > 0 && !l.driver_local
              ? "work-groups " + std::to_string(l.groups[0]) + "x" + std::to_string(l.groups[1]) +
                    "x" + std::to_string(l.groups[2]) + " of " + std::to_string(l.local[0]) + "x" +
                    std::to_string(l.local[1]) + "x" + std::to_string(l.local[2])
              : "invocations " + std::to_string(src.invocations);
      out += "// kernel " + src.name + ", " + shape + "\n" + src.source;
    }
    return out;
  }

  /// The open command buffer, begun on first use; every command in it waits for the ones before,
  /// those of earlier batches too (a barrier's first scope is everything earlier in submission
  /// order on the queue).
  VkCommandBuffer commands() {
    if (!open_) {
      if (!spare_commands_.empty()) {
        open_ = spare_commands_.back();
        spare_commands_.pop_back();
      } else {
        VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
        ai.commandPool = g_.pool;
        ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
        ai.commandBufferCount = 1;
        std::lock_guard<std::recursive_mutex> lock(g_.mutex);  // the pool is shared
        check(vkAllocateCommandBuffers(g_.device, &ai, &open_),
              g_.name() + ": vkAllocateCommandBuffers");
      }
      VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
      bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
      check(vkBeginCommandBuffer(open_, &bi), g_.name() + ": vkBeginCommandBuffer");
    }
    barrier(open_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                VK_ACCESS_TRANSFER_WRITE_BIT);
    return open_;
  }
  /// Counts command buffers: the open one (or the next) is serial(); every one up to
  /// completed() has run.
  uint64_t serial() const { return serial_; }
  uint64_t completed() const { return completed_; }
  Gpu &gpu() { return g_; }

 private:
  struct Submitted {
    VkCommandBuffer commands;
    VkFence fence;
  };

  /// Dispatches per batch: TESSERA_VULKAN_SUBMIT_EVERY, 0 for one batch per wait of the host.
  static int submit_every_from_env() {
    const char *text = std::getenv("TESSERA_VULKAN_SUBMIT_EVERY");
    if (!text || !*text) return kSubmitEvery;
    char *end = nullptr;
    long n = std::strtol(text, &end, 10);
    if (*end || n < 0 || n > 1'000'000)
      throw tile::Error(std::string("error: TESSERA_VULKAN_SUBMIT_EVERY is '") + text +
                        "'; expected the dispatches per submission, 0 to 1000000 (0: submit "
                        "only when the host waits)");
    return static_cast<int>(n);
  }

  /// Ends the open command buffer and submits it without waiting.
  void submit() {
    if (!open_) return;
    check(vkEndCommandBuffer(open_), g_.name() + ": vkEndCommandBuffer");
    VkFence fence = VK_NULL_HANDLE;
    if (!spare_fences_.empty()) {
      fence = spare_fences_.back();
      spare_fences_.pop_back();
    } else {
      VkFenceCreateInfo fi{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
      check(vkCreateFence(g_.device, &fi, nullptr, &fence), g_.name() + ": vkCreateFence");
    }
    VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
    si.commandBufferCount = 1;
    si.pCommandBuffers = &open_;
    {
      std::lock_guard<std::recursive_mutex> lock(g_.mutex);  // the queue is shared
      VkResult r = vkQueueSubmit(g_.queue, 1, &si, fence);
      if (r != VK_SUCCESS) spare_fences_.push_back(fence);
      check(r, g_.name() + ": vkQueueSubmit");
    }
    in_flight_.push_back({open_, fence});
    open_ = VK_NULL_HANDLE;
    dispatches_open_ = 0;
    ++serial_;
  }

  // Everything before (compute, transfers, host writes) finishes and is visible to `dst_stage`.
  static void barrier(VkCommandBuffer cb, VkPipelineStageFlags dst_stage, VkAccessFlags dst) {
    VkMemoryBarrier mb{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    mb.srcAccessMask =
        VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_WRITE_BIT;
    mb.dstAccessMask = dst;
    vkCmdPipelineBarrier(cb,
                         VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT |
                             VK_PIPELINE_STAGE_HOST_BIT,
                         dst_stage, 0, 1, &mb, 0, nullptr, 0, nullptr);
  }

  /// The query pool of time_on_device, made on first use; false where the queue has no
  /// timestamps.
  bool timestamps() {
    if (queries_) return true;
    if (g_.timestamp_bits == 0 || g_.props.limits.timestampPeriod <= 0) return false;
    VkQueryPoolCreateInfo qi{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    check(vkCreateQueryPool(g_.device, &qi, nullptr, &queries_), g_.name() + ": vkCreateQueryPool");
    return true;
  }

  /// The staging buffer for a transfer of `bytes`, grown on demand (to twice what was asked, so
  /// that growing outputs do not reallocate it every run).
  VkBuf &staging(size_t bytes) {
    if (staging_ && staging_->bytes() >= bytes) return *staging_;
    finish();  // the old staging buffer may be in recorded work
    size_t size = std::max(bytes, staging_ ? 2 * staging_->bytes() : bytes);
    staging_.reset();
    staging_ = std::make_unique<VkBuf>(*this, g_, size, Memory::Staging);
    return *staging_;
  }

  Gpu &g_;
  size_t align_ = 64;
  // A batch of 16 dispatches takes the H200 about 0.1-0.3 ms to run in a network (BERT's 319 in
  // 7-12 ms), longer than submitting it costs the host.
  static constexpr int kSubmitEvery = 16;
  int submit_every_ = kSubmitEvery, dispatches_open_ = 0;
  VkCommandBuffer open_ = VK_NULL_HANDLE;
  std::vector<Submitted> in_flight_;
  std::vector<VkCommandBuffer> spare_commands_;
  std::vector<VkFence> spare_fences_;
  uint64_t serial_ = 1, completed_ = 0;
  bool stage_every_read_ = false;
  Memory tensor_memory_ = Memory::Tensor;
  std::string memory_note_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  std::unique_ptr<VkBuf> staging_;  // last: destroyed first, while the queue's objects live
};

// Recorded work may still use the buffer: it runs first (nothing runs when nothing is recorded).
VkBuf::~VkBuf() {
  try {
    std::lock_guard<std::recursive_mutex> lock(backend().mutex());
    static_cast<VulkanBackend &>(backend()).finish();
  } catch (const std::exception &) {
    // A device that fails here has failed the run that used the buffer already.
  }
  if (texels_) vkDestroyBufferView(g.device, texels_, nullptr);
  if (parent_) return;
  vkDestroyBuffer(g.device, buffer, nullptr);
  vkFreeMemory(g.device, memory_, nullptr);
}

VkKernels::VkKernels(VulkanBackend &backend, const std::vector<const compiler::Kernel *> &kernels,
                     BinaryStore *binaries)
    : backend_(backend), g_(backend.gpu()) {
  const auto &lim = g_.props.limits;
  uint32_t descriptors = 0, texel_descriptors = 0, sets = 0;
  {
    std::lock_guard<std::recursive_mutex> lock(g_.mutex);
    vulkan::load_pipeline_cache(g_, binaries);
    // The pipelines are made together once every kernel is checked (pipelines_for).
    std::deque<vulkan::KernelSource> sources;  // stable addresses for the requests
    std::vector<vulkan::PipelineRequest> requests;
    std::vector<size_t> wanted;  // the dispatch of each request
    for (const auto *k : kernels) {
      Dispatch d;
      for (const auto &p : k->params) {
        uint64_t bytes = static_cast<uint64_t>(p.elements) * tile::dtype_size(p.dtype);
        if (bytes > lim.maxStorageBufferRange || p.elements > std::numeric_limits<int32_t>::max())
          throw tile::Error("error: " + g_.label() + ": tensor '" + p.name + "' of kernel " +
                            k->name + " is " + std::to_string(bytes) +
                            " bytes, more than one storage buffer can bind on this device "
                            "(maxStorageBufferRange " +
                            std::to_string(lim.maxStorageBufferRange) + " bytes)");
      }
      vulkan::KernelSource src = vulkan::kernel_source(*k, g_.nan_preserve);
      vulkan::check_features(src, g_.features, g_.label());
      const auto &launch = src.launch;
      uint32_t local = 1;
      std::array<uint64_t, 3> groups{1, 1, 1};
      bool empty = false;
      if (launch.dims > 0 && !launch.driver_local) {
        // The schedule's work-group shape, as it is.
        if (launch.workgroup_size() > lim.maxComputeWorkGroupInvocations)
          throw tile::Error("error: " + g_.label() + ": kernel " + k->name +
                            " has work-groups of " + std::to_string(launch.workgroup_size()) +
                            " invocations, more than the device's " +
                            std::to_string(lim.maxComputeWorkGroupInvocations));
        for (int i = 0; i < 3; ++i) {
          if (launch.local[i] > lim.maxComputeWorkGroupSize[i] ||
              launch.groups[i] > lim.maxComputeWorkGroupCount[i])
            throw tile::Error("error: " + g_.label() + ": kernel " + k->name + " needs " +
                              std::to_string(launch.groups[i]) + " work-groups of " +
                              std::to_string(launch.local[i]) + " in dimension " +
                              std::to_string(i) + ", more than the device can dispatch");
          groups[i] = static_cast<uint64_t>(launch.groups[i]);
        }
        empty = groups[0] * groups[1] * groups[2] == 0;
      } else if (src.invocations <= 0) {
        empty = true;
      } else {
        if (src.invocations > std::numeric_limits<uint32_t>::max())
          throw tile::Error("error: " + g_.label() + ": kernel " + k->name + " has " +
                            std::to_string(src.invocations) + " invocations, more than 2^32");
        local = local_size_for(g_, src.invocations);
        uint64_t count = (src.invocations + local - 1) / local;
        groups[0] = std::min<uint64_t>(count, lim.maxComputeWorkGroupCount[0]);
        groups[1] = (count + groups[0] - 1) / groups[0];
        if (groups[1] > lim.maxComputeWorkGroupCount[1])
          throw tile::Error("error: " + g_.label() + ": kernel " + k->name + " needs " +
                            std::to_string(count) +
                            " work-groups, more than the device can dispatch");
      }
      if (!empty) {
        const vulkan::KernelSource &kept = sources.emplace_back(std::move(src));
        requests.push_back({&kept, local});
        wanted.push_back(dispatches_.size());
        d.texel_params = kept.texel_params;
        for (int i = 0; i < 3; ++i) d.groups[i] = static_cast<uint32_t>(groups[i]);
        descriptors += static_cast<uint32_t>(k->params.size());
        texel_descriptors += static_cast<uint32_t>(kept.texel_params.size());
        ++sets;
      }
      dispatches_.push_back(std::move(d));
    }
    std::vector<const vulkan::Pipeline *> pipelines = vulkan::pipelines_for(g_, requests, binaries);
    for (size_t i = 0; i < wanted.size(); ++i) dispatches_[wanted[i]].pipeline = pipelines[i];
    vulkan::save_pipeline_cache(g_, binaries);
  }
  if (sets == 0) return;
  VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(1u, descriptors)},
                                   {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, texel_descriptors}};
  VkDescriptorPoolCreateInfo pi{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pi.maxSets = sets;
  pi.poolSizeCount = texel_descriptors > 0 ? 2 : 1;
  pi.pPoolSizes = sizes;
  check(vkCreateDescriptorPool(g_.device, &pi, nullptr, &pool_),
        g_.name() + ": vkCreateDescriptorPool");
  for (auto &d : dispatches_) {
    if (!d.pipeline) continue;
    VkDescriptorSetAllocateInfo ai{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
    ai.descriptorPool = pool_;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &d.pipeline->set_layout;
    check(vkAllocateDescriptorSets(g_.device, &ai, &d.set),
          g_.name() + ": vkAllocateDescriptorSets");
  }
}

VkKernels::~VkKernels() {
  try {
    std::lock_guard<std::recursive_mutex> lock(backend_.mutex());
    backend_.finish();  // no recorded dispatch may use the sets any more
  } catch (const std::exception &) {
    // A device that fails here has failed the run that recorded the dispatches already.
  }
  if (pool_) vkDestroyDescriptorPool(g_.device, pool_, nullptr);
}

// Writes the set of `d` for `args` when they differ from what it holds. A set that recorded work
// uses (open or submitted) cannot change until that has run.
void VkKernels::bind(Dispatch &d, const std::vector<DeviceBuffer *> &args) {
  std::vector<uint64_t> ids;
  for (auto *a : args) ids.push_back(a->id());
  if (ids == d.bound) return;
  if (d.recorded_in > backend_.completed()) backend_.finish();
  std::vector<VkDescriptorBufferInfo> infos(args.size());
  std::vector<VkBufferView> views(d.texel_params.size());
  std::vector<VkWriteDescriptorSet> writes(args.size() + views.size());
  for (size_t j = 0; j < args.size(); ++j) {
    VkBuf &b = vk(*args[j]);
    infos[j] = {b.buffer, b.offset, b.range()};
    writes[j] = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    writes[j].dstSet = d.set;
    writes[j].dstBinding = static_cast<uint32_t>(j);
    writes[j].descriptorCount = 1;
    writes[j].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[j].pBufferInfo = &infos[j];
  }
  for (size_t j = 0; j < views.size(); ++j) {
    views[j] = vk(*args.at(d.texel_params[j])).texels();
    VkWriteDescriptorSet &w = writes[args.size() + j];
    w = {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = d.set;
    w.dstBinding = static_cast<uint32_t>(args.size() + j);
    w.descriptorCount = 1;
    w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    w.pTexelBufferView = &views[j];
  }
  vkUpdateDescriptorSets(g_.device, static_cast<uint32_t>(writes.size()), writes.data(), 0,
                         nullptr);
  d.bound = std::move(ids);
}

void VkKernels::launch(size_t index, const std::vector<DeviceBuffer *> &args) {
  Dispatch &d = dispatches_.at(index);
  if (!d.pipeline) return;
  bind(d, args);
  VkCommandBuffer cb = backend_.commands();
  vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline->pipeline);
  vkCmdBindDescriptorSets(cb, VK_PIPELINE_BIND_POINT_COMPUTE, d.pipeline->layout, 0, 1, &d.set, 0,
                          nullptr);
  vkCmdDispatch(cb, d.groups[0], d.groups[1], d.groups[2]);
  d.recorded_in = backend_.serial();
  backend_.dispatched();
}

}  // namespace

int vulkan_device_count() { return static_cast<int>(vulkan::all_gpus().size()); }

std::string vulkan_device_description(int index) {
  const Gpu &g = *vulkan::all_gpus().at(index);
  return "Vulkan " + g.facts.at("device") + " (" + g.facts.at("vendor") + ", " +
         g.facts.at("driver_version") + ", Vulkan " + g.facts.at("api_version") + ")";
}

Backend &vulkan_backend(int index) {
  static std::mutex mutex;
  static auto *backends = new std::map<int, VulkanBackend *>;  // live to the end, as the devices do
  std::lock_guard<std::mutex> lock(mutex);
  auto &b = (*backends)[index];
  if (!b) b = new VulkanBackend(index);
  return *b;
}

}  // namespace tessera
