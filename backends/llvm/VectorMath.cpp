#include "backends/llvm/VectorMath.h"

#include <dlfcn.h>

#include <algorithm>
#include <set>

#include "backends/llvm/Jit.h"

namespace tessera::llvm_backend {

namespace {

// What the kernels call and libmvec (glibc 2.35 on) has, in float and double, one or two
// arguments. sqrt, floor and the like are instructions, not calls.
const std::set<std::string> &libmvec_functions() {
  static const std::set<std::string> names = {"exp",  "log",  "pow",  "sin",  "cos",  "tan", "asin",
                                              "acos", "atan", "sinh", "cosh", "tanh", "erf"};
  return names;
}

int isa_bits(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::Sse: return 128;
    case VectorIsa::Avx:
    case VectorIsa::Avx2: return 256;
    case VectorIsa::Avx512: return 512;
  }
  return 128;
}

// The Vector Function ABI's ISA letter for a register width on this host: 256-bit vectors are
// 'd' with AVX2 (FMA, integer lanes) and 'c' with AVX only.
char isa_letter(int bits, VectorIsa isa) {
  if (bits == 512) return 'e';
  if (bits == 256) return isa == VectorIsa::Avx ? 'c' : 'd';
  return 'b';
}

}  // namespace

std::optional<VectorFunction> vector_function(const std::string &name, tile::DType dtype, int arity,
                                              int lanes, VectorIsa isa) {
  if (!libmvec_functions().count(name) || arity < 1 || arity > 2) return std::nullopt;
  int elem_bits = dtype == tile::DType::Float32 ? 32 : dtype == tile::DType::Float64 ? 64 : 0;
  if (elem_bits == 0 || lanes < 2) return std::nullopt;
  for (int bits = isa_bits(isa); bits >= 128; bits /= 2) {
    int chunk = bits / elem_bits;
    if (lanes % chunk != 0) continue;
    std::string symbol = "_ZGV";
    symbol += isa_letter(bits, isa);
    symbol += "N" + std::to_string(chunk) + std::string(arity, 'v') + "_" + name;
    if (dtype == tile::DType::Float32) symbol += "f";
    return VectorFunction{symbol, chunk};
  }
  return std::nullopt;
}

std::optional<VectorIsa> host_vector_math() {
  static const std::optional<VectorIsa> isa = []() -> std::optional<VectorIsa> {
    // Loaded for good and global, so that the JIT's search of the process finds its symbols.
    void *lib = dlopen("libmvec.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!lib || !dlsym(lib, "_ZGVbN4v_erff")) return std::nullopt;
    const auto &f = host_cpu().features;
    auto has = [&](const char *x) { return std::find(f.begin(), f.end(), x) != f.end(); };
    if (has("avx512f")) return VectorIsa::Avx512;
    if (has("avx2")) return VectorIsa::Avx2;
    if (has("avx")) return VectorIsa::Avx;
    return VectorIsa::Sse;
  }();
  return isa;
}

std::string host_vector_math_name() {
  auto isa = host_vector_math();
  if (!isa) return "scalar libm";
  switch (*isa) {
    case VectorIsa::Sse: return "libmvec sse";
    case VectorIsa::Avx: return "libmvec avx";
    case VectorIsa::Avx2: return "libmvec avx2";
    case VectorIsa::Avx512: return "libmvec avx512";
  }
  return "libmvec";
}

}  // namespace tessera::llvm_backend
