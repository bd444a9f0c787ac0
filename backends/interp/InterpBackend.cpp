#include "backends/interp/InterpBackend.h"

#include "runtime/HostMemory.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

class InterpBackend : public HostMemoryBackend {
 public:
  DeviceInfo info() const override {
    return {"interp",
            "interp",
            "reference interpreter (exact Tile semantics, slow)",
            {{"threads", "1"}},
            host_memory_bytes()};
  }
  compiler::Target target() const override {
    compiler::Target t;
    t.backend = "interp";
    return t;
  }
  bool runs_kernels() const override { return false; }
  std::unique_ptr<CompiledKernels> build(const std::vector<const compiler::Kernel *> &,
                                         BinaryStore *) override {
    TESSERA_INTERNAL_ASSERT(false, "the interpreter builds no kernels");
    return nullptr;
  }
  std::string source(const std::vector<const compiler::Kernel *> &) override { return ""; }
};

}  // namespace

Backend &interp_backend() {
  static auto *backend = new InterpBackend;  // lives to the end: device tensors may outlive statics
  return *backend;
}

}  // namespace tessera
