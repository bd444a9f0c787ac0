#include "backends/llvm/CpuBackend.h"

#include "backends/llvm/HostCaches.h"
#include "backends/llvm/Jit.h"
#include "backends/llvm/ThreadPool.h"
#include "runtime/HostMemory.h"

namespace tessera {

namespace llvm_backend {

compiler::Target host_target() {
  compiler::Target t;
  t.backend = "llvm";
  t.cores = pool_threads();
  t.vector_bits = host_cpu().vector_bits;
  t.l1_bytes = host_caches().l1d_bytes;
  t.l2_bytes = host_caches().l2_bytes;
  t.has_fp16 = true;  // computed in float, stored as half
  t.has_fp64 = true;
  return t;
}

namespace {

std::string join(const std::vector<std::string> &v, const char *sep) {
  std::string s;
  for (const auto &x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

/// One JIT module holding every kernel of a program; a launch calls the kernel on the thread that
/// runs the program (its parallel loops go to the pool).
class CpuKernels : public CompiledKernels {
 public:
  explicit CpuKernels(const std::vector<const compiler::Kernel *> &kernels, BinaryStore *binaries)
      : jit_(JitModule::compile(kernels, binaries)) {
    for (const auto *k : kernels) fns_.push_back(jit_->lookup(k->name));
  }
  void launch(size_t index, const std::vector<DeviceBuffer *> &args) override {
    pointers_.clear();
    for (DeviceBuffer *b : args) pointers_.push_back(host_data(*b));
    fns_.at(index)(pointers_.data());
  }

 private:
  std::unique_ptr<JitModule> jit_;
  std::vector<KernelFn> fns_;
  std::vector<void *> pointers_;
};

class CpuBackend : public HostMemoryBackend {
 public:
  DeviceInfo info() const override {
    const auto &cpu = host_cpu();
    const auto &caches = host_caches();
    DeviceInfo d{"cpu",
                 "llvm",
                 "LLVM 15 JIT for " + cpu.name + " (" + std::to_string(pool_threads()) +
                     " threads)",
                 {}};
    d.facts["cpu"] = cpu.name;
    d.facts["features"] = join(cpu.features, ",");
    d.facts["cores"] = std::to_string(pool_threads());
    d.facts["vector_bits"] = std::to_string(cpu.vector_bits);
    d.facts["l1d_bytes"] = std::to_string(caches.l1d_bytes);
    d.facts["l2_bytes"] = std::to_string(caches.l2_bytes);
    d.facts["l3_bytes"] = std::to_string(caches.l3_bytes);
    d.max_tensor_bytes = host_memory_bytes();
    return d;
  }
  compiler::Target target() const override { return host_target(); }
  std::unique_ptr<CompiledKernels> build(const std::vector<const compiler::Kernel *> &kernels,
                                         BinaryStore *binaries) override {
    return std::make_unique<CpuKernels>(kernels, binaries);
  }
  std::string source(const std::vector<const compiler::Kernel *> &kernels) override {
    return kernels_ir(kernels, true);
  }
};

}  // namespace

}  // namespace llvm_backend

Backend &cpu_backend() {
  static auto *backend =
      new llvm_backend::CpuBackend;  // lives to the end: device tensors may outlive statics
  return *backend;
}

}  // namespace tessera
