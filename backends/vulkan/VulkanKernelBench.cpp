#include "backends/vulkan/VulkanKernelBench.h"

#include <chrono>
#include <cstring>

#include "backends/vulkan/VulkanExecutable.h"
#include "tile/Diagnostics.h"

namespace tessera::vulkan {

namespace {

using compiler::tune::Measurement;

class VulkanKernelBench : public compiler::tune::KernelBench {
 public:
  explicit VulkanKernelBench(int index) : g_(open_gpu(index)) {}

  Measurement measure(const compiler::Kernel &kernel, const std::vector<std::vector<std::byte>> &inputs, int warmup,
                      int runs) override {
    // The kernel as a one-step program over its params: the device's own buffers and dispatch.
    compiler::LoweredProgram program;
    for (const auto &p : kernel.params)
      program.buffers.push_back({p.name, p.dtype, p.elements,
                                 p.is_output ? compiler::BufferInfo::Role::Output : compiler::BufferInfo::Role::Input});
    compiler::Step step;
    step.kind = compiler::Step::Kind::Kernel;
    step.kernel = kernel;
    program.steps.push_back(std::move(step));
    auto exe = make_executable(g_, tile::BoundProgram{}, std::move(program));

    size_t next_input = 0;
    for (const auto &p : kernel.params) {
      if (p.is_output) continue;
      size_t bytes = p.elements * tile::dtype_size(p.dtype);
      if (next_input >= inputs.size() || inputs[next_input].size() != bytes)
        throw tile::Error("error: kernel bench: input '" + p.name + "' of kernel " + kernel.name + " needs " +
                          std::to_string(bytes) + " bytes");
      if (bytes > 0) std::memcpy(exe->mapped(p.name), inputs[next_input].data(), bytes);
      ++next_input;
    }

    Measurement result;
    for (int run = 0; run < warmup + runs; ++run) {
      // Outputs start at zero (Tile's unwritten elements); the zeroing is not timed.
      for (const auto &p : kernel.params)
        if (p.is_output) std::memset(exe->mapped(p.name), 0, p.elements * tile::dtype_size(p.dtype));
      auto start = std::chrono::steady_clock::now();
      exe->dispatch();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (run >= warmup) result.seconds.push_back(seconds);
    }
    for (const auto &p : kernel.params) {
      if (!p.is_output) continue;
      const std::byte *data = exe->mapped(p.name);
      result.outputs.emplace_back(data, data + p.elements * tile::dtype_size(p.dtype));
    }
    return result;
  }

 private:
  Gpu &g_;
};

}  // namespace

std::unique_ptr<compiler::tune::KernelBench> make_kernel_bench(int index) {
  return std::make_unique<VulkanKernelBench>(index);
}

}  // namespace tessera::vulkan
