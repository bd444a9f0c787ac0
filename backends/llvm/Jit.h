// JIT compilation of loop IR kernels for the host CPU (LLVM 15 ORC LLJIT, a short pipeline for the
// host's features: Jit.cpp says why). No LLVM types in this header: LLVM headers are heavy to
// compile.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/IR.h"

namespace tessera {
class BinaryStore;
}

namespace tessera::llvm_backend {

/// A compiled kernel: buffers[i] is the base of the kernel's params[i].
using KernelFn = void (*)(void **buffers);

/// The kernels of one executable in one LLJIT that lives as long as this object: twins (the same
/// canonical text) compiled once, the rest split into modules compiled in parallel on the pool.
class JitModule {
 public:
  ~JitModule();
  /// Throws tile::Error when a kernel cannot be compiled. With `objects`, object code compiled
  /// before for the same kernels is loaded instead of compiled, and new object code is stored.
  static std::unique_ptr<JitModule> compile(const std::vector<const compiler::Kernel *> &kernels,
                                            BinaryStore *objects = nullptr);
  KernelFn lookup(const std::string &kernel_name) const;

 private:
  struct Impl;
  explicit JitModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// What the JIT did in this process.
struct JitStats {
  int kernels_compiled = 0;  // distinct kernels compiled to object code
  int objects_loaded = 0;    // modules whose object code came from a BinaryStore
};
JitStats jit_stats();

/// The LLVM IR of `kernels` as text: after the optimization pipeline for the host when `optimize`,
/// else as generated.
std::string kernels_ir(const std::vector<const compiler::Kernel *> &kernels, bool optimize);

/// The CPU the JIT compiles for: the host as LLVM sees it, or the one `TESSERA_CPU` names (an LLVM
/// CPU name such as haswell or znver3) when its features are a subset of the host's, so that one
/// machine can build and time another kind's code (AVX2 kernels on an AVX-512 host). The caches'
/// sizes stay the host's. A bad name, or a CPU with features the host lacks, is an error at the
/// first use.
struct HostCpu {
  std::string name;                   // "skylake-avx512"
  std::vector<std::string> features;  // enabled features, "avx512f", ...
  std::vector<std::string> disabled;  // the other features the host query names
  int vector_bits = 128;              // widest float vector the features allow
};
const HostCpu &host_cpu();

}  // namespace tessera::llvm_backend
