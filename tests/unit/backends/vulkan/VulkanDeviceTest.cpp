// The Vulkan backend's error paths (a device lacking float64, GLSL that does not compile, bad
// pipeline cache data) and, on a real device (lavapipe in CI; skipped without one), results against
// hand-computed values and the C library, and the facts `tessera devices` shows.
#include <gtest/gtest.h>
#include <vulkan/vulkan.h>

#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "backends/vulkan/GlslSource.h"
#include "backends/vulkan/PipelineCacheData.h"
#include "backends/vulkan/ShaderCompiler.h"
#include "backends/vulkan/VulkanBackend.h"
#include "backends/vulkan/VulkanContext.h"
#include "compiler/Lower.h"
#include "runtime/Device.h"
#include "runtime/KernelCache.h"
#include "tests/unit/backends/DeviceClock.h"
#include "tests/unit/backends/EveryHelperKernel.h"
#include "tests/unit/backends/vulkan/LavapipeLike.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera::vulkan {
namespace {

#define REQUIRE_DEVICE() \
  if (vulkan_device_count() == 0) GTEST_SKIP() << "no Vulkan device on this machine"

tile::BoundProgram bind(const std::string &text, tile::DType dtype, std::vector<int64_t> a,
                        std::vector<int64_t> b = {}) {
  std::map<std::string, tile::TensorType> types{{"A", {dtype, a}}};
  if (!b.empty()) types["B"] = {dtype, b};
  return tile::bind(tile::parse_program(text), types);
}

const char *kMatmul =
    "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

using test::lavapipe_like;

KernelSource first_kernel(const tile::BoundProgram &p) {
  auto lowered = compiler::lower(p, lavapipe_like());
  for (const auto &s : lowered.steps)
    if (s.kind == compiler::Step::Kind::Kernel) return kernel_source(s.kernel);
  ADD_FAILURE() << "no kernel";
  return {};
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const tile::Error &e) {
    return e.what();
  }
  return "";
}

TEST(VulkanFeatures, DeviceWithoutFloat64GivesAClearError) {
  KernelSource src = first_kernel(bind(kMatmul, tile::DType::Float64, {3, 4}, {4, 5}));
  EXPECT_TRUE(src.needs.float64);
  ShaderFeatures has;
  has.int64 = true;  // every feature but float64
  has.float16 = has.int16 = has.int8 = true;
  std::string err = error_of([&] { check_features(src, has, "vulkan:0 (llvmpipe)"); });
  EXPECT_NE(
      err.find("vulkan:0 (llvmpipe) has no float64 (shaderFloat64) support: kernel C needs it"),
      std::string::npos)
      << err;
  has.float64 = true;
  EXPECT_EQ(error_of([&] { check_features(src, has, "vulkan:0 (llvmpipe)"); }), "");
}

TEST(VulkanFeatures, Float32KernelNeedsNoFloat64) {
  KernelSource src = first_kernel(bind(kMatmul, tile::DType::Float32, {3, 4}, {4, 5}));
  EXPECT_FALSE(src.needs.float64);
  EXPECT_FALSE(src.needs.float16);
}

TEST(VulkanFeatures, Float16KernelNeedsFloat16) {
  KernelSource src = first_kernel(bind(kMatmul, tile::DType::Float16, {3, 4}, {4, 5}));
  EXPECT_TRUE(src.needs.float16);
  ShaderFeatures has;
  has.int64 = has.float64 = true;
  EXPECT_NE(error_of([&] { check_features(src, has, "vulkan:1 (gpu)"); }).find("has no float16"),
            std::string::npos);
}

// Features come from the kernel's types, not from its text: bools are stored as uint8_t (int8),
// but arithmetic on bools computes in int and needs nothing.
TEST(VulkanFeatures, BoolBuffersNeedInt8AndBoolArithmeticDoesNot) {
  KernelSource stored =
      first_kernel(bind("function (A, B) -> (C) { C = A < B; }", tile::DType::Float32, {8}, {8}));
  EXPECT_TRUE(stored.needs.int8);
  KernelSource computed =
      first_kernel(bind("function (A, B) -> (C) { C = cond((A < B) + (A > B), A, B); }",
                        tile::DType::Float32, {8}, {8}));
  EXPECT_FALSE(computed.needs.int8 || computed.needs.int16 || computed.needs.int64 ||
               computed.needs.float16 || computed.needs.float64)
      << computed.source;
  EXPECT_EQ(computed.source.find("int8_t"), std::string::npos) << computed.source;
  EXPECT_FALSE(compile_glsl(computed.source, VK_API_VERSION_1_1, "test").empty());
}

TEST(VulkanFeatures, Float64InsideAFloat32KernelNeedsFloat64) {
  KernelSource src = first_kernel(
      bind("function (A, B) -> (C) { C = as_float(as_float(A, 64) * as_float(B, 64), 32); }",
           tile::DType::Float32, {8}, {8}));
  EXPECT_TRUE(src.needs.float64);
  EXPECT_FALSE(src.needs.int64 || src.needs.int16 || src.needs.int8 || src.needs.float16);
}

TEST(VulkanFeatures, NarrowIntegersNeedTheirOwnFeature) {
  KernelSource src = first_kernel(bind(kMatmul, tile::DType::UInt16, {3, 4}, {4, 5}));
  EXPECT_TRUE(src.needs.int16);
  EXPECT_FALSE(src.needs.int8 || src.needs.int64 || src.needs.float16 || src.needs.float64);
}

TEST(VulkanGlsl, Float64SineIsAnErrorNotAFloat32Approximation) {
  std::string err = error_of(
      [] { first_kernel(bind("function (A) -> (B) { B = sin(A); }", tile::DType::Float64, {4})); });
  EXPECT_NE(err.find("GLSL has no float64 'sin'"), std::string::npos) << err;
}

TEST(VulkanGlsl, BadGlslShowsShadercLogAndTheSource) {
  std::string glsl =
      "#version 450\nlayout(local_size_x = 1) in;\nvoid main() {\n  undeclared_thing = 1;\n}\n";
  std::string err =
      error_of([&] { compile_glsl(glsl, VK_API_VERSION_1_1, "vulkan:0 (test): kernel K"); });
  EXPECT_NE(err.find("vulkan:0 (test): kernel K failed to compile (shaderc)"), std::string::npos)
      << err;
  EXPECT_NE(err.find("undeclared_thing"), std::string::npos) << err;  // shaderc's log names it
  EXPECT_NE(err.find("   4    undeclared_thing = 1;"), std::string::npos)
      << err;  // the numbered source
}

TEST(VulkanGlsl, GeneratedShaderCompiles) {
  KernelSource src = first_kernel(bind(kMatmul, tile::DType::Float32, {7, 5}, {5, 9}));
  EXPECT_FALSE(compile_glsl(src.source, VK_API_VERSION_1_1, "test").empty());
}

// Every helper of the GLSL library (GlslHelpers.h), for every dtype the printer asks it for,
// compiles: each defined once, after the helpers it calls.
TEST(VulkanGlsl, EveryHelperCompilesOnceAfterItsCallees) {
  std::string src = kernel_source(tessera::test::every_helper_kernel(true, false)).source;
  EXPECT_FALSE(compile_glsl(src, VK_API_VERSION_1_1, "test").empty());
  for (const char *fn :
       {"double tsr_exp_double(double a) {", "int8_t tsr_floordiv_int8_t(int8_t a, int8_t b) {",
        "uint64_t tsr_sat_uint64_t_double(double a) {", "float tsr_to_half_float(float a) {"}) {
    size_t at = src.find(fn);
    EXPECT_NE(at, std::string::npos) << fn;
    EXPECT_EQ(src.find(fn, at + 1), std::string::npos) << fn;
  }
  EXPECT_LT(src.find("double tsr_exp_double("), src.find("double tsr_expm1_double("));
  EXPECT_LT(src.find("double tsr_expm1_double("), src.find("double tsr_tanh_double("));
  EXPECT_LT(src.find("double tsr_log_double("), src.find("double tsr_pow_double("));
}

TEST(VulkanGlsl, AlignedFloat32ReadsFetchTexels) {
  KernelSource src = first_kernel(bind(kMatmul, tile::DType::Float32, {16, 32}, {32, 24}));
  EXPECT_EQ(src.texel_params, (std::vector<int>{1, 2}));  // A and B, after the output C
  EXPECT_NE(src.source.find("layout(set = 0, binding = 3) uniform samplerBuffer tsr_t1;"),
            std::string::npos);
  EXPECT_NE(src.source.find("texelFetch(tsr_t2, "), std::string::npos);
  EXPECT_EQ(src.source.find("A[int("), std::string::npos) << src.source;
  EXPECT_FALSE(compile_glsl(src.source, VK_API_VERSION_1_1, "test").empty());
}

TEST(VulkanGlsl, PartialRowTilesReadTheLastRowAgainInOneUnguardedReductionLoop) {
  // 37 rows in tiles of 13: the last tile's missing rows read row 36 again (clamped), so the
  // reduction loop has no guard to split on (no unguarded copy and guarded else branch), and its
  // updates come eight to an accumulator in a row.
  std::string src = first_kernel(bind(kMatmul, tile::DType::Float32, {37, 32}, {32, 128})).source;
  EXPECT_NE(src.find("for (int k_8 = 0; k_8 < 4; ++k_8) {"), std::string::npos) << src;
  EXPECT_NE(src.find("min(((i_o * 13) + 12), 36)"), std::string::npos) << src;
  EXPECT_EQ(src.find("} else {"), std::string::npos) << src;
  EXPECT_EQ(src.find("k_4 < 8"), std::string::npos) << src;
}

TEST(VulkanGlsl, UnalignedOrTooLargeReadsStayStorageBufferLoads) {
  KernelSource odd = first_kernel(bind(kMatmul, tile::DType::Float32, {7, 5}, {5, 9}));
  EXPECT_TRUE(odd.texel_params.empty());
  EXPECT_EQ(odd.source.find("texelFetch"), std::string::npos);
  // B (32 x 24 floats: 192 texels) is past a device limit of 128 texels; A (128 texels) is not.
  compiler::Target small = lavapipe_like();
  small.grouped_read_limit = 128;
  auto lowered = compiler::lower(bind(kMatmul, tile::DType::Float32, {16, 32}, {32, 24}), small);
  for (const auto &s : lowered.steps) {
    if (s.kind != compiler::Step::Kind::Kernel) continue;
    EXPECT_EQ(kernel_source(s.kernel).texel_params, (std::vector<int>{1}));
  }
}

TEST(VulkanPipelineCache, OnlyDataOfThisDeviceAndDriverIsAccepted) {
  uint8_t uuid[16] = {1, 2, 3};
  VkPipelineCacheHeaderVersionOne h{sizeof h, VK_PIPELINE_CACHE_HEADER_VERSION_ONE, 0x10005, 7, {}};
  std::memcpy(h.pipelineCacheUUID, uuid, 16);
  std::string data(sizeof h + 4, '\0');
  std::memcpy(data.data(), &h, sizeof h);
  EXPECT_TRUE(is_pipeline_cache_of(data, 0x10005, 7, uuid));
  EXPECT_FALSE(is_pipeline_cache_of(data, 0x10005, 8, uuid));  // another device
  uint8_t other[16] = {9};
  EXPECT_FALSE(is_pipeline_cache_of(data, 0x10005, 7, other));  // another driver build
  EXPECT_FALSE(is_pipeline_cache_of("not a pipeline cache", 0x10005, 7, uuid));
  EXPECT_FALSE(is_pipeline_cache_of(data.substr(0, 8), 0x10005, 7, uuid));
}

// Compiled code lives in the kernel cache's file, as every device's does: SPIR-V per kernel and the
// driver's pipeline cache data; data that is not this device's is ignored with a warning.
TEST(VulkanPipelineCache, StoredInTheKernelCache) {
  REQUIRE_DEVICE();
  auto dir =
      std::filesystem::temp_directory_path() / ("tessera-vk-cache-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Device device(vulkan_backend(0));
  Gpu &g = open_gpu(0);
  const std::string key =
      pipeline_cache_key(g.props.vendorID, g.props.deviceID, g.props.pipelineCacheUUID);
  const std::string fingerprint = device_fingerprint(device.info());
  auto program = bind(kMatmul, tile::DType::Float32, {6, 10}, {10, 14});
  CompileOptions options;
  options.policy = TunePolicy::Cached;

  options.cache_path = (dir / "a.db").string();
  device.compile(program, options);
  auto stored = KernelCache::open(*options.cache_path);
  EXPECT_TRUE(stored->find_binary(kPipelineCacheKind, key, fingerprint, TESSERA_VERSION));
  EXPECT_GE(stored->stats().binaries, 2);  // the shader's SPIR-V and the pipeline cache data

  options.cache_path = (dir / "b.db").string();
  KernelCache::open(*options.cache_path)
      ->store_binary(kPipelineCacheKind, key, fingerprint, TESSERA_VERSION, "junk");
  testing::internal::CaptureStderr();
  auto out =
      device.compile(program, options)
          ->run({{"A", HostTensor(program.type_of("A"))}, {"B", HostTensor(program.type_of("B"))}});
  std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_NE(warning.find("warning: ignoring the stored Vulkan pipeline cache of vulkan:0"),
            std::string::npos)
      << warning;
  EXPECT_EQ(out.at("C").get_double(0), 0.0);
  std::filesystem::remove_all(dir);
}

TEST(VulkanDevice, MatmulMatchesHandValues) {
  REQUIRE_DEVICE();
  auto device = std::make_unique<Device>(vulkan_backend(0));
  // Storage-buffer loads (odd sizes), then texel fetches (rows of multiples of 4), then 37 rows in
  // tiles of 13: the last tile's work-items run the guarded copy of the unswitched loop.
  for (auto [m, k_, n] : {std::array<int64_t, 3>{33, 17, 65}, std::array<int64_t, 3>{40, 36, 64},
                          std::array<int64_t, 3>{37, 32, 128}}) {
    auto p = bind(kMatmul, tile::DType::Float32, {m, k_}, {k_, n});
    HostTensor a(p.type_of("A")), b(p.type_of("B"));
    for (int64_t i = 0; i < a.elements(); ++i) a.as<float>()[i] = static_cast<float>(i % 7 - 3);
    for (int64_t i = 0; i < b.elements(); ++i) b.as<float>()[i] = static_cast<float>(i % 5 - 2);
    auto exe = device->compile(p);
    for (int run = 0; run < 2; ++run) {  // a second run starts from zeroed outputs again
      auto out = exe->run({{"A", a}, {"B", b}});
      const float *c = out.at("C").as<float>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float want = 0;
          for (int64_t k = 0; k < k_; ++k)
            want += a.as<float>()[i * k_ + k] * b.as<float>()[k * n + j];
          ASSERT_EQ(c[i * n + j], want) << m << "x" << k_ << "x" << n << ": " << i << "," << j;
        }
    }
  }
}

// A kernel of 41 buffers (40 inputs summed into one output) on a device that binds fewer to a
// kernel is a clear error, not a driver crash (lavapipe binds 32); a device that binds them runs
// it.
TEST(VulkanDevice, AKernelOfMoreBuffersThanTheDeviceBindsIsAnError) {
  REQUIRE_DEVICE();
  std::string text = "function (", sum;
  std::map<std::string, tile::TensorType> types;
  TensorMap in;
  for (int i = 0; i < 40; ++i) {
    std::string a = "A" + std::to_string(i);
    text += (i ? ", " : "") + a + "[N]";
    sum += (i ? " + " : "") + a;
    types[a] = {tile::DType::Float32, {8}};
    HostTensor t(types[a]);
    for (int64_t e = 0; e < 8; ++e) t.as<float>()[e] = static_cast<float>(i);
    in.emplace(a, std::move(t));
  }
  auto p = tile::bind(tile::parse_program(text + ") -> (O) { O = " + sum + "; }"), types);
  Device device(vulkan_backend(0));
  const uint32_t limit = all_gpus().at(0)->props.limits.maxPerStageDescriptorStorageBuffers;
  if (limit >= 41) {
    EXPECT_EQ(device.compile(p)->run(in).at("O").as<float>()[7], 780.0f);
    return;
  }
  EXPECT_EQ(error_of([&] { device.compile(p); }),
            "error: " + all_gpus().at(0)->label() +
                ": kernel O binds 41 storage buffers; the device binds at most " +
                std::to_string(limit) + " to a kernel");
}

TEST(VulkanDevice, TimesEnqueuedWorkOnItsOwnClock) {
  REQUIRE_DEVICE();
  if (!tessera::test::expect_device_clock_times_enqueued_work(vulkan_backend(0)))
    GTEST_SKIP() << "this Vulkan device's queue has no timestamps";
}

// llvmpipe makes 0 * x and 0 / x zero for every x; Tile's (and IEEE's) 0 * Inf, 0 * NaN, 0 / 0 and
// 0 / NaN are NaN, and x / 0 is +-Inf.
TEST(VulkanDevice, ProductsWithALiteralZeroKeepNaNAndInf) {
  REQUIRE_DEVICE();
  auto device = std::make_unique<Device>(vulkan_backend(0));
  auto p = tile::bind(tile::parse_program("function (A[N]) -> (M, D, Q) { M = mul(A, 0.0); "
                                          "D = div(0.0, A); Q = div(A, 0.0); }"),
                      {{"A", {tile::DType::Float32, {5}}}});
  const float inf = INFINITY, nan = NAN;
  HostTensor a(p.type_of("A"));
  const float values[] = {0.0f, inf, nan, 2.0f, -3.0f};
  std::memcpy(a.as<float>(), values, sizeof values);
  auto out = device->compile(p)->run({{"A", a}});
  auto expect = [&](const char *name, std::array<float, 5> want) {
    for (int i = 0; i < 5; ++i) {
      float got = out.at(name).as<float>()[i];
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(got)) << name << "[" << i << "] = " << got;
      else
        EXPECT_EQ(got, want[i]) << name << "[" << i << "]";
    }
  };
  expect("M", {0.0f, nan, nan, 0.0f, 0.0f});
  expect("D", {nan, 0.0f, nan, 0.0f, 0.0f});
  expect("Q", {nan, inf, nan, inf, -inf});
}

// The float64 functions GLSL lacks, computed by the dialect's helpers, against the C library.
TEST(VulkanDevice, Float64HelpersMatchTheCLibrary) {
  REQUIRE_DEVICE();
  auto device = std::make_unique<Device>(vulkan_backend(0));
  if (device->info().facts.at("fp64") != "yes") GTEST_SKIP() << "no float64 on vulkan:0";
  auto p = bind(
      "function (A, B) -> (E, L, P, S, C, T) { E = exp(A); L = log(B); P = pow(B, A); S = sinh(A); "
      "C = cosh(A); T = tanh(A); }",
      tile::DType::Float64, {64}, {64});
  HostTensor a(p.type_of("A")), b(p.type_of("B"));
  for (int i = 0; i < 64; ++i) {
    a.as<double>()[i] = (i - 32) * 0.37 + 1e-9 * i;
    b.as<double>()[i] = std::ldexp(1.0 + i / 64.0, i - 40);  // tiny to large
  }
  auto out = device->compile(p)->run({{"A", a}, {"B", b}});
  for (int i = 0; i < 64; ++i) {
    double x = a.as<double>()[i], y = b.as<double>()[i];
    auto near = [&](const char *name, double want) {
      double got = out.at(name).as<double>()[i];
      EXPECT_NEAR(got, want, 1e-13 * std::abs(want) + 1e-300) << name << " at " << x << ", " << y;
    };
    near("E", std::exp(x));
    near("L", std::log(y));
    near("P", std::pow(y, x));
    near("S", std::sinh(x));
    near("C", std::cosh(x));
    near("T", std::tanh(x));
  }
}

TEST(VulkanDevice, FactsForDevicesListing) {
  REQUIRE_DEVICE();
  auto info = Device(vulkan_backend(0)).info();
  EXPECT_EQ(info.name, "vulkan:0");
  EXPECT_EQ(info.backend, "vulkan");
  for (const char *key :
       {"vendor", "device", "driver_version", "compute_units", "local_memory_bytes",
        "max_workgroup_size", "subgroup_size", "preferred_vector_width_float", "fp16", "fp64"})
    EXPECT_TRUE(info.facts.count(key)) << key;
}

}  // namespace
}  // namespace tessera::vulkan
