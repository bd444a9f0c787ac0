// `tessera lower --emit loops --device D` (Device::loops) shows exactly the finished loops that
// device D compiles and runs (Executable::loops), on every device; the devices' finishing passes
// show in them.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "backends/Registry.h"
#include "compiler/GpuCostModel.h"
#include "runtime/Backend.h"
#include "tile/Bind.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

tile::TensorType f32(std::vector<int64_t> shape) {
  return {tile::DType::Float32, std::move(shape)};
}

std::string read(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Case {
  std::string file;
  std::map<std::string, tile::TensorType> types;
};

std::vector<Case> cases() {
  const std::string demo = std::string(TESSERA_SOURCE_DIR) + "/examples/demo/";
  return {
      {demo + "matmul.tile", {{"A", f32({64, 32})}, {"B", f32({32, 48})}}},
      {demo + "conv2d_same.tile", {{"I", f32({1, 12, 12, 8})}, {"K", f32({3, 3, 8, 16})}}},
      {demo + "max_pool.tile", {{"I", f32({2, 16, 16, 4})}}},
      {demo + "softmax.tile", {{"X", f32({8, 100})}}},
      // prng_step runs on the host between kernels
      {std::string(TESSERA_SHARED_DIR) + "/corpus/plaidml/prng.tile",
       {{"X_I_0", {tile::DType::UInt32, {3, 2048}}}}},
  };
}

class LowerForDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto names = builtin_devices().names();
    if (std::find(names.begin(), names.end(), GetParam()) == names.end())
      GTEST_SKIP() << "no device " << GetParam() << " on this machine";
    device = builtin_devices().create(GetParam());
  }
  std::unique_ptr<Device> device;
};

TEST_P(LowerForDevice, ShowsTheLoopsTheDeviceRuns) {
  for (const auto &c : cases()) {
    std::string text = read(c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    tile::Program program = tile::parse_program(text, c.file);
    tile::BoundProgram bound = tile::bind(program, c.types);
    std::string shown = device->loops(bound);
    EXPECT_FALSE(shown.empty()) << c.file;
    EXPECT_EQ(shown, device->compile(bound)->loops()) << c.file << " on " << GetParam();
  }
}

TEST(LowerForDevice, GpuDevicesShowTheirFinishingPasses) {
  auto names = builtin_devices().names();
  auto bound = tile::bind(
      tile::parse_program(
          "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }"),
      {{"A", f32({64, 32})}, {"B", f32({32, 48})}});
  std::string cpu = builtin_devices().create("cpu")->loops(bound);
  EXPECT_EQ(cpu.find(": int32"), std::string::npos)
      << cpu;  // the CPU keeps 64-bit index arithmetic
  for (const char *gpu : {"opencl:0", "vulkan:0"}) {
    if (std::find(names.begin(), names.end(), gpu) == names.end()) continue;
    auto device = builtin_devices().create(gpu);
    std::string loops = device->loops(bound);
    EXPECT_NE(loops, cpu) << gpu;
    // GPUs (and lavapipe's SIMD lanes) narrow to 32 bits; an OpenCL CPU device of wide vectors
    // (PoCL) keeps the CPU's 64-bit addresses, which needed a sign extension per load narrowed.
    bool wide = compiler::wide_vector_target(device->backend().target());
    EXPECT_EQ(loops.find(": int32 in [") != std::string::npos, !wide)
        << gpu << (wide ? ": indices narrowed\n" : ": indices not narrowed\n") << loops;
  }
  // Vulkan reads float32 inputs through texel views, four at a time.
  if (std::find(names.begin(), names.end(), "vulkan:0") != names.end()) {
    std::string loops = builtin_devices().create("vulkan:0")->loops(bound);
    EXPECT_NE(loops.find("A: float32[2048] in grouped"), std::string::npos) << loops;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, LowerForDevice,
                         ::testing::Values("cpu", "opencl:0", "vulkan:0", "interp"),
                         [](const auto &info) {
                           std::string s = info.param;
                           for (auto &c : s)
                             if (c == ':') c = '_';
                           return s;
                         });

}  // namespace
}  // namespace tessera
