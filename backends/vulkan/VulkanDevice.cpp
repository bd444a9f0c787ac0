#include "backends/vulkan/VulkanDevice.h"

#include <chrono>

#include "backends/vulkan/GlslSource.h"
#include "backends/vulkan/VulkanContext.h"
#include "backends/vulkan/VulkanExecutable.h"
#include "backends/vulkan/VulkanKernelBench.h"
#include "compiler/Lower.h"
#include "runtime/Tuning.h"

namespace tessera {

namespace {

using vulkan::Gpu;

compiler::TargetInfo target_of(const Gpu &g) {
  compiler::TargetInfo t;
  t.backend = "vulkan";
  t.cores = g.cores;
  // The invocations are the SIMD lanes (lavapipe's too): one float each. Wide-vector schedules
  // made elementwise kernels inline every helper 16-32 times (llvmpipe took minutes to compile
  // them); contractions get their tall register tiles from the GPU cost model instead.
  t.vector_bits = 32;
  t.local_memory_bytes = g.props.limits.maxComputeSharedMemorySize;
  t.max_workgroup_size = static_cast<int>(g.props.limits.maxComputeWorkGroupInvocations);
  t.subgroup_size = static_cast<int>(g.subgroup_size);
  t.has_fp16 = g.features.float16;
  t.has_fp64 = g.features.float64;
  return t;
}

class VulkanDevice : public Device {
 public:
  explicit VulkanDevice(int index) : g_(vulkan::open_gpu(index)) {}
  DeviceInfo info() const override { return {g_.name(), "vulkan", vulkan_device_description(g_.index), g_.facts}; }
  std::unique_ptr<Executable> compile(const tile::BoundProgram &program, const CompileOptions &options) override {
    auto bench = vulkan::make_kernel_bench(g_.index);
    return compile_with_schedules(program, info(), target_of(g_), bench.get(), options,
                                  [&](compiler::LoweredProgram lowered, ScheduleSelector &) -> std::unique_ptr<Executable> {
                                    return vulkan::make_executable(g_, program, std::move(lowered));
                                  });
  }
  std::string source(const tile::BoundProgram &program) override {
    std::string out;
    for (const auto &step : compiler::lower(program, target_of(g_)).steps) {
      if (step.kind == compiler::Step::Kind::Host) {
        out += "// host step: " + step.host_statement + "\n";
        continue;
      }
      vulkan::KernelSource src = vulkan::kernel_source(step.kernel, g_.props.limits.maxTexelBufferElements);
      const auto &l = src.launch;
      std::string shape = l.dims > 0 && !l.driver_local
                              ? "work-groups " + std::to_string(l.groups[0]) + "x" + std::to_string(l.groups[1]) + "x" +
                                    std::to_string(l.groups[2]) + " of " + std::to_string(l.local[0]) + "x" +
                                    std::to_string(l.local[1]) + "x" + std::to_string(l.local[2])
                              : "invocations " + std::to_string(src.invocations);
      out += "// kernel " + src.name + ", " + shape + "\n" + src.source;
    }
    return out;
  }

 private:
  Gpu &g_;
};

}  // namespace

int vulkan_device_count() { return static_cast<int>(vulkan::all_gpus().size()); }

std::string vulkan_device_description(int index) {
  const Gpu &g = *vulkan::all_gpus().at(index);
  return "Vulkan " + g.facts.at("device") + " (" + g.facts.at("vendor") + ", " + g.facts.at("driver_version") +
         ", Vulkan " + g.facts.at("api_version") + ")";
}

std::unique_ptr<Device> make_vulkan_device(int index) { return std::make_unique<VulkanDevice>(index); }

}  // namespace tessera
