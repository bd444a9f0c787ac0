#include "backends/llvm/CpuKernelBench.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backends/llvm/Jit.h"
#include "tile/Diagnostics.h"

namespace tessera::llvm_backend {

namespace {

struct Free {
  void operator()(std::byte *p) const { std::free(p); }
};
using Aligned = std::unique_ptr<std::byte, Free>;

/// 64-byte aligned like the executable's buffers, so vector loads behave as in a real run.
Aligned allocate(size_t bytes) {
  size_t rounded = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
  return Aligned(static_cast<std::byte *>(std::aligned_alloc(64, rounded)));
}

}  // namespace

compiler::tune::Measurement CpuKernelBench::measure(const compiler::Kernel &kernel,
                                                    const std::vector<std::vector<std::byte>> &inputs, int warmup,
                                                    int runs) {
  auto jit = JitModule::compile({&kernel});
  KernelFn fn = jit->lookup(kernel.name);
  std::vector<Aligned> buffers;
  std::vector<void *> args;
  std::vector<size_t> sizes;
  size_t next_input = 0;
  for (const auto &p : kernel.params) {
    size_t bytes = static_cast<size_t>(p.elements) * tile::dtype_size(p.dtype);
    buffers.push_back(allocate(bytes));
    sizes.push_back(bytes);
    args.push_back(buffers.back().get());
    if (p.is_output) continue;
    TESSERA_INTERNAL_ASSERT(next_input < inputs.size() && inputs[next_input].size() == bytes,
                            "tuner input for " + p.name + " has the wrong size");
    std::memcpy(buffers.back().get(), inputs[next_input++].data(), bytes);
  }
  auto run_once = [&] {
    for (size_t i = 0; i < kernel.params.size(); ++i)
      if (kernel.params[i].is_output) std::memset(args[i], 0, sizes[i]);
    auto start = std::chrono::steady_clock::now();
    fn(args.data());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  compiler::tune::Measurement m;
  for (int i = 0; i < warmup; ++i) run_once();
  for (int i = 0; i < runs; ++i) m.seconds.push_back(run_once());
  for (size_t i = 0; i < kernel.params.size(); ++i)
    if (kernel.params[i].is_output) {
      const auto *p = static_cast<const std::byte *>(args[i]);
      m.outputs.emplace_back(p, p + sizes[i]);
    }
  return m;
}

}  // namespace tessera::llvm_backend
