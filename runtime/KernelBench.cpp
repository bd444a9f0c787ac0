#include "runtime/KernelBench.h"

#include <string>
#include <utility>
#include <vector>

#include "compiler/IRPrinter.h"
#include "runtime/Backend.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using compiler::tune::Measurement;

class BackendBench : public compiler::tune::KernelBench {
 public:
  BackendBench(Backend &backend, BinaryStore *binaries) : backend_(backend), binaries_(binaries) {}

  Measurement measure(const compiler::Kernel &kernel,
                      const std::vector<std::vector<std::byte>> &inputs, int warmup,
                      int runs) override {
    std::lock_guard<std::recursive_mutex> lock(backend_.mutex());
    CompiledKernels &built = this->built(kernel);
    std::vector<std::shared_ptr<DeviceBuffer>> buffers;
    std::vector<DeviceBuffer *> args;
    size_t next_input = 0;
    for (const auto &p : kernel.params) {
      size_t bytes = static_cast<size_t>(p.elements) * tile::dtype_size(p.dtype);
      buffers.push_back(backend_.allocate(std::max<size_t>(bytes, 1)));
      args.push_back(buffers.back().get());
      if (p.is_output) continue;
      if (next_input >= inputs.size() || inputs[next_input].size() != bytes)
        throw tile::Error("error: kernel bench: input '" + p.name + "' of kernel " + kernel.name +
                          " needs " + std::to_string(bytes) + " bytes");
      if (bytes > 0) backend_.write(*buffers.back(), inputs[next_input].data(), bytes);
      ++next_input;
    }
    Measurement result;
    for (int run = 0; run < warmup + runs; ++run) {
      // Outputs start at zero (Tile's unwritten elements); the fill is not timed.
      for (size_t i = 0; i < kernel.params.size(); ++i)
        if (kernel.params[i].is_output) backend_.fill(*args[i], 0);
      double seconds = time_enqueued(backend_, [&] { built.launch(0, args); });
      if (run >= warmup) result.seconds.push_back(seconds);
    }
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      const auto &p = kernel.params[i];
      if (!p.is_output) continue;
      std::vector<std::byte> out(static_cast<size_t>(p.elements) * tile::dtype_size(p.dtype));
      if (!out.empty()) backend_.read(*args[i], out.data(), out.size());
      result.outputs.push_back(std::move(out));
    }
    return result;
  }

 private:
  /// The tuner measures the untuned kernel and the winner more than once (the winner's
  /// confirmation): the last few kernels built are kept, by their text.
  CompiledKernels &built(const compiler::Kernel &kernel) {
    std::string text = compiler::print_kernel(kernel);
    for (auto &[t, k] : recent_)
      if (t == text) return *k;
    if (recent_.size() >= 4) recent_.erase(recent_.begin());
    recent_.emplace_back(std::move(text), backend_.build({&kernel}, binaries_));
    return *recent_.back().second;
  }

  Backend &backend_;
  BinaryStore *binaries_;
  std::vector<std::pair<std::string, std::unique_ptr<CompiledKernels>>> recent_;
};

}  // namespace

std::unique_ptr<compiler::tune::KernelBench> make_kernel_bench(Backend &backend,
                                                               BinaryStore *binaries) {
  return std::make_unique<BackendBench>(backend, binaries);
}

}  // namespace tessera
