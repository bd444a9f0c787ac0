// Tuning on a real Vulkan device (lavapipe in CI; skipped without one): the kernel bench against
// hand-computed products, and a tuned compile that matches the interpreter and is then served from
// the kernel cache without trials.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

#include "backends/Registry.h"
#include "backends/vulkan/VulkanBackend.h"
#include "compiler/Lower.h"
#include "runtime/KernelBench.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/backends/GpuTestValues.h"
#include "tests/unit/backends/vulkan/LavapipeLike.h"
#include "tile/Diagnostics.h"

namespace tessera::vulkan {
namespace {

#define REQUIRE_DEVICE() \
  if (vulkan_device_count() == 0) GTEST_SKIP() << "no Vulkan device on this machine"

using tessera::test::bytes_of;
using tessera::test::hand_matmul;
using tessera::test::matmul;
using tessera::test::values;
using test::lavapipe_like;

// Sizes with partial work-groups and partial register tiles.
TEST(VulkanKernelBench, GpuScheduledMatmulMatchesHandComputation) {
  REQUIRE_DEVICE();
  const int64_t m = 41, k = 7, n = 37;
  auto lowered = compiler::lower(matmul(m, k, n), lavapipe_like());
  ASSERT_EQ(lowered.steps.size(), 1u);
  const compiler::Kernel &kernel = lowered.steps[0].kernel;
  ASSERT_FALSE(lowered.steps[0].schedule.workgroup.empty()) << "expected a GPU schedule";
  auto a = values(m * k, 1), b = values(k * n, 2);
  std::vector<std::vector<std::byte>> inputs;
  for (const auto &p : kernel.params)
    if (!p.is_output) inputs.push_back(bytes_of(p.name == "A" ? a : b));
  auto result =
      tessera::make_kernel_bench(vulkan_backend(0), nullptr)->measure(kernel, inputs, 1, 3);
  ASSERT_EQ(result.seconds.size(), 3u);
  for (double s : result.seconds) EXPECT_GT(s, 0);
  ASSERT_EQ(result.outputs.size(), 1u);
  ASSERT_EQ(result.outputs[0].size(), size_t(m * n * 4));
  std::vector<float> c(m * n);
  std::memcpy(c.data(), result.outputs[0].data(), c.size() * 4);
  auto want = hand_matmul(a, b, m, k, n);
  for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(c[i], want[i]) << "element " << i;
}

TEST(VulkanKernelBench, WrongInputSizeIsAnError) {
  REQUIRE_DEVICE();
  auto lowered = compiler::lower(matmul(4, 3, 5), lavapipe_like());
  const compiler::Kernel &kernel = lowered.steps[0].kernel;
  EXPECT_THROW(tessera::make_kernel_bench(vulkan_backend(0), nullptr)
                   ->measure(kernel, {bytes_of({1.0f})}, 0, 1),
               tile::Error);
}

class VulkanTuning : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera-vulkan-tune-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(VulkanTuning, OnlineTunesThenCachedServesFromTheCache) {
  REQUIRE_DEVICE();
  auto bound = matmul(33, 20, 24);
  TensorMap inputs;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (const auto &[name, type] : bound.inputs) {
    HostTensor t(type);
    for (int64_t i = 0; i < t.elements(); ++i) t.as<float>()[i] = dist(rng);
    inputs[name] = t;
  }
  CompileOptions options;
  options.policy = TunePolicy::Full;
  options.cache_path = (dir_ / "cache.db").string();
  options.budget = TuneBudget{4, 20};
  auto exe = builtin_devices().create("vulkan:0")->compile(bound, options);
  const auto &report = exe->report();
  ASSERT_EQ(report.kernels.size(), 1u);
  EXPECT_EQ(report.kernels[0].origin, "tuned");
  EXPECT_GT(report.tuning_trials, 0);
  EXPECT_EQ(report.tuning_trials, report.kernels[0].trials);

  auto got = exe->run(inputs);
  auto want = interpret(bound, inputs);
  const auto &c = want.at("C");
  for (int64_t i = 0; i < c.elements(); ++i)
    ASSERT_NEAR(got.at("C").as<float>()[i], c.as<float>()[i], 1e-4) << i;

  options.policy = TunePolicy::Cached;
  auto again = builtin_devices().create("vulkan:0")->compile(bound, options);
  EXPECT_EQ(again->report().tuning_trials, 0);
  EXPECT_EQ(again->report().cache_hits, 1);
  EXPECT_EQ(again->report().kernels.at(0).origin, "cache");
  auto got2 = again->run(inputs);
  for (int64_t i = 0; i < c.elements(); ++i)
    ASSERT_EQ(got2.at("C").as<float>()[i], got.at("C").as<float>()[i]) << i;
}

}  // namespace
}  // namespace tessera::vulkan
