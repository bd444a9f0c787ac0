// How the JIT compiles a program's kernels: twins (the same canonical text under other names)
// once, the rest in modules compiled in parallel, each module's object code kept in a BinaryStore.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/llvm/Jit.h"
#include "compiler/IR.h"
#include "runtime/BinaryStore.h"
#include "runtime/KernelCache.h"

namespace tessera::llvm_backend {
namespace {

using namespace compiler;  // NOLINT: test brevity
using tile::DType;

constexpr int kN = 40;

// out[i] = in[i] * scale, over buffers and a loop variable of the caller's names.
Kernel scale_kernel(const std::string &name, const std::string &in, const std::string &out,
                    const std::string &i, float scale) {
  Expr iv = Var::make(Type::i32(), i);
  Stmt body =
      For::make(i, IntImm::make(Type::i32(), 0), IntImm::make(Type::i32(), kN), ForKind::Serial,
                Store::make(out, iv,
                            Binary::make(Binary::Op::Mul, Load::make({DType::Float32, 1}, in, iv),
                                         FloatImm::make({DType::Float32, 1}, scale))));
  return {name, {{out, DType::Float32, kN, true}, {in, DType::Float32, kN, false}}, body};
}

// Runs `fn` on 0, 1, 2, ... and returns its output.
std::vector<float> run(KernelFn fn) {
  std::vector<float> in(kN), out(kN, -1);
  for (int i = 0; i < kN; ++i) in[i] = static_cast<float>(i);
  void *args[] = {out.data(), in.data()};
  fn(args);
  return out;
}

void expect_scaled(KernelFn fn, float scale, const std::string &what) {
  std::vector<float> out = run(fn);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(out[i], i * scale) << what << " at " << i;
}

TEST(Jit, TwinsCompileOnceAndRunUnderEveryName) {
  Kernel a = scale_kernel("a", "x", "y", "i", 2), b = scale_kernel("b", "p", "q", "j", 2);
  Kernel c = scale_kernel("c", "x", "y", "i", 3);
  JitStats before = jit_stats();
  auto jit = JitModule::compile({&a, &b, &c});
  EXPECT_EQ(jit_stats().kernels_compiled, before.kernels_compiled + 2);
  expect_scaled(jit->lookup("a"), 2, "a");
  expect_scaled(jit->lookup("b"), 2, "b");
  expect_scaled(jit->lookup("c"), 3, "c");
}

// More kernels than modules: every module compiled on the pool, every kernel found.
std::vector<Kernel> many_kernels() {
  std::vector<Kernel> ks;
  for (int k = 0; k < 50; ++k)
    ks.push_back(scale_kernel("k" + std::to_string(k), "x", "y", "i", static_cast<float>(k)));
  return ks;
}

TEST(Jit, ManyKernelsCompileInParallelModules) {
  std::vector<Kernel> ks = many_kernels();
  std::vector<const Kernel *> ptrs;
  for (const auto &k : ks) ptrs.push_back(&k);
  auto jit = JitModule::compile(ptrs);
  for (int k = 0; k < 50; ++k) expect_scaled(jit->lookup(ks[k].name), k, ks[k].name);
}

// A second compile of the same kernels loads every module's object code and compiles nothing.
TEST(Jit, ModulesComeBackFromTheBinaryStore) {
  namespace fs = std::filesystem;
  std::string dir = (fs::temp_directory_path() / "tessera-jit-test-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  auto cache = KernelCache::open(dir + "/cache.db");
  BinaryStore store(*cache, "test-device");
  std::vector<Kernel> ks = many_kernels();
  std::vector<const Kernel *> ptrs;
  for (const auto &k : ks) ptrs.push_back(&k);
  JitStats first = jit_stats();
  JitModule::compile(ptrs, &store);
  JitStats second = jit_stats();
  EXPECT_EQ(second.kernels_compiled, first.kernels_compiled + 50);
  EXPECT_EQ(second.objects_loaded, first.objects_loaded);
  auto jit = JitModule::compile(ptrs, &store);
  EXPECT_EQ(jit_stats().kernels_compiled, second.kernels_compiled);
  EXPECT_GT(jit_stats().objects_loaded, second.objects_loaded);
  for (int k = 0; k < 50; ++k) expect_scaled(jit->lookup(ks[k].name), k, ks[k].name);
  cache.reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tessera::llvm_backend
