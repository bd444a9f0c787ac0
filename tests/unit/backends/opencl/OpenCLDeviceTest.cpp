// The OpenCL device and the tuner's kernel bench on it on a real device (PoCL in CI; skipped
// without one): GPU schedules against hand-computed products, program binaries reused through the
// kernel cache (and a bad binary falling back to a source build), the driver's build log in errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>

#include "backends/opencl/OpenCLBackend.h"
#include "backends/opencl/OpenCLSource.h"
#include "compiler/GpuCostModel.h"
#include "compiler/Lower.h"
#include "runtime/Device.h"
#include "runtime/KernelBench.h"
#include "runtime/KernelCache.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/backends/DeviceClock.h"
#include "tests/unit/backends/EveryHelperKernel.h"
#include "tests/unit/backends/GpuTestValues.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera::opencl {
namespace {

using compiler::Kernel;

#define REQUIRE_DEVICE() \
  if (opencl_device_count() == 0) GTEST_SKIP() << "no OpenCL device on this machine"

// A wide-vector OpenCL target like PoCL's (what the cost model sees there).
compiler::Target pocl_like() {
  compiler::Target t;
  t.backend = "opencl";
  t.cores = 2;
  t.vector_bits = 512;
  t.local_memory_bytes = 1 << 20;
  t.max_workgroup_size = 4096;
  t.narrow_indices = true;
  return t;
}

using tessera::test::bytes_of;
using tessera::test::hand_matmul;
using tessera::test::matmul;
using tessera::test::values;

// Runs a lowered m x k x n matmul kernel on opencl:0 (`runs` timed runs after `warmup`) on
// small-integer operands from `seed` and checks every element against the hand computation.
compiler::tune::Measurement expect_matmul_matches(const Kernel &kernel, int64_t m, int64_t k,
                                                  int64_t n, uint32_t seed, int warmup = 0,
                                                  int runs = 1) {
  auto a = values(m * k, seed), b = values(k * n, seed + 1);
  std::vector<std::vector<std::byte>> inputs;
  for (const auto &p : kernel.params)
    if (!p.is_output) inputs.push_back(bytes_of(p.name == "A" ? a : b));
  auto result =
      tessera::make_kernel_bench(opencl_backend(0), nullptr)->measure(kernel, inputs, warmup, runs);
  EXPECT_EQ(result.outputs.size(), 1u);
  EXPECT_EQ(result.outputs.at(0).size(), size_t(m * n * 4));
  std::vector<float> c(m * n);
  std::memcpy(c.data(), result.outputs.at(0).data(),
              std::min(c.size() * 4, result.outputs[0].size()));
  auto want = hand_matmul(a, b, m, k, n);
  for (int64_t i = 0; i < m * n; ++i)
    if (c[i] != want[i]) {
      ADD_FAILURE() << "element " << i << " is " << c[i] << ", not " << want[i];
      break;
    }
  return result;
}

// Sizes with partial work-groups and partial register tiles (41 rows, 48 columns: 3 float16).
TEST(OpenCLKernelBench, GpuScheduledMatmulMatchesHandComputation) {
  REQUIRE_DEVICE();
  const int64_t m = 41, k = 7, n = 48;
  auto lowered = compiler::lower(matmul(m, k, n), pocl_like());
  ASSERT_EQ(lowered.steps.size(), 1u);
  const Kernel &kernel = lowered.steps[0].kernel;
  ASSERT_FALSE(lowered.steps[0].schedule.workgroup.empty()) << "expected a GPU schedule";
  auto result = expect_matmul_matches(kernel, m, k, n, 1, 1, 3);
  ASSERT_EQ(result.seconds.size(), 3u);
  for (double s : result.seconds) EXPECT_GT(s, 0);
}

// The schedule a SIMT GPU gets (16x16 work-items, 4x4 scalar accumulators, A and B tiles staged in
// local memory between barriers), run on this device: OpenCL's semantics are the same everywhere.
TEST(OpenCLKernelBench, LocalMemoryStagedMatmulMatchesHandComputation) {
  REQUIRE_DEVICE();
  const int64_t m = 64, k = 40, n = 128;
  compiler::Target simt = pocl_like();
  simt.vector_bits = 32;
  simt.max_workgroup_size = 256;
  simt.local_memory_bytes = 32 << 10;
  auto lowered = compiler::lower(matmul(m, k, n), simt);
  const Kernel &kernel = lowered.steps.at(0).kernel;
  ASSERT_TRUE(lowered.steps[0].schedule.use_local_memory) << lowered.steps[0].schedule.to_json();
  KernelSource src = kernel_source(kernel);
  EXPECT_NE(src.source.find("__local float"), std::string::npos) << src.source;
  EXPECT_NE(src.source.find("barrier(CLK_LOCAL_MEM_FENCE)"), std::string::npos) << src.source;
  expect_matmul_matches(kernel, m, k, n, 6);
}

// A reduction long enough for a panel: each work-item copies its 32 columns of B into a private
// array, then computes 8 row tiles of 8 rows from it (GpuCostModel's panel_tiles_per_item).
TEST(OpenCLKernelBench, PanelMatmulMatchesHandComputation) {
  REQUIRE_DEVICE();
  const int64_t m = 256, k = 300, n = 64;
  auto lowered = compiler::lower(matmul(m, k, n), pocl_like());
  const Kernel &kernel = lowered.steps.at(0).kernel;
  EXPECT_EQ(lowered.steps[0].schedule.tiles_per_item, 8) << lowered.steps[0].schedule.to_json();
  EXPECT_NE(kernel_source(kernel).source.find("float pack_B[9600];"), std::string::npos)
      << kernel_source(kernel).source;
  expect_matmul_matches(kernel, m, k, n, 8);
}

// A full reduction: one work-group splits it and combines partial sums through local memory.
TEST(OpenCLKernelBench, FullReductionSplitAcrossAWorkGroup) {
  REQUIRE_DEVICE();
  auto p = tile::parse_program("function (X[N]) -> (S) { S[] = +(X[i]); }");
  auto lowered =
      compiler::lower(tile::bind(p, {{"X", {tile::DType::Float32, {1000}}}}), pocl_like());
  const Kernel &kernel = lowered.steps.at(0).kernel;
  EXPECT_NE(kernel_source(kernel).source.find("barrier(CLK_LOCAL_MEM_FENCE)"), std::string::npos);
  auto x = values(1000, 3);
  auto result =
      tessera::make_kernel_bench(opencl_backend(0), nullptr)->measure(kernel, {bytes_of(x)}, 0, 2);
  float sum = 0, got = 0;
  for (float v : x) sum += v;
  std::memcpy(&got, result.outputs.at(0).data(), 4);
  EXPECT_EQ(got, sum);
}

// The split reductions a SIMT GPU gets for few outputs (GpuCostModel's reduction_split: a
// work-group per output, its work-items splitting the reduction, a barrier tree in local memory),
// run here: 10 row sums of 300 with a fused epilogue, and 10 row maxima (every work-item's share of
// a row is below the row's maximum but one).
TEST(OpenCLKernelBench, ReductionsSplitPerOutputMatchHandComputation) {
  REQUIRE_DEVICE();
  compiler::Target simt = pocl_like();
  simt.vector_bits = 32;
  simt.cores = 1;
  simt.max_workgroup_size = 256;
  simt.local_memory_bytes = 32 << 10;
  const int64_t rows = 10, n = 300;
  auto x = values(rows * n, 4);
  for (float &v : x) v -= 50;  // negative values: a maximum's identity matters
  auto run = [&](const std::string &text) {
    auto lowered = compiler::lower(
        tile::bind(tile::parse_program(text), {{"X", {tile::DType::Float32, {2, 5, n}}}}), simt);
    const Kernel &kernel = lowered.steps.at(0).kernel;
    EXPECT_TRUE(lowered.steps[0].schedule.split_reduction) << lowered.steps[0].schedule.to_json();
    EXPECT_NE(kernel_source(kernel).source.find("barrier(CLK_LOCAL_MEM_FENCE)"), std::string::npos);
    auto result = tessera::make_kernel_bench(opencl_backend(0), nullptr)
                      ->measure(kernel, {bytes_of(x)}, 0, 2);
    std::vector<float> got(rows);
    std::memcpy(got.data(), result.outputs.at(0).data(), rows * 4);
    return got;
  };
  auto sums = run("function (X[A, B, K]) -> (M) { S[a, b : A, B] = +(X[a, b, k]); M = S * 0.5; }");
  auto maxima = run("function (X[A, B, K]) -> (R) { R[a, b : A, B] = >(X[a, b, k]); }");
  for (int64_t i = 0; i < rows; ++i) {
    float sum = 0, max = -1e30f;
    for (int64_t k = 0; k < n; ++k) sum += x[i * n + k], max = std::max(max, x[i * n + k]);
    EXPECT_EQ(sums[i], sum * 0.5f) << "row " << i;
    EXPECT_EQ(maxima[i], max) << "row " << i;
  }
}

TEST(OpenCLKernelBench, BuildFailureShowsTheDriverLog) {
  REQUIRE_DEVICE();
  // A local variable named like a parameter: valid loop IR, but OpenCL C rejects the redefinition.
  compiler::Type f{tile::DType::Float32, 1};
  Kernel k{"clash",
           {{"C", tile::DType::Float32, 1, true}, {"A", tile::DType::Float32, 1, false}},
           compiler::LetStmt::make(
               "A", compiler::FloatImm::make(f, 1),
               compiler::Store::make("C", compiler::IntImm::make(0), compiler::Var::make(f, "A")))};
  try {
    tessera::make_kernel_bench(opencl_backend(0), nullptr)->measure(k, {bytes_of({1.0f})}, 0, 1);
    FAIL() << "expected a build failure";
  } catch (const tile::Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("failed to build"), std::string::npos) << what;
    EXPECT_NE(what.find("redefinition"), std::string::npos)
        << what;  // clang's diagnostic, from the build log
  }
}

// Every helper of the OpenCL C library (OpenCLHelpers.h), for every dtype the printer asks it for,
// builds and runs.
TEST(OpenCLKernelBench, EveryHelperBuilds) {
  REQUIRE_DEVICE();
  bool fp64 = Device(opencl_backend(0)).info().facts.at("fp64") == "yes";
  Kernel k = tessera::test::every_helper_kernel(fp64, true);
  std::vector<std::vector<std::byte>> inputs;
  size_t outputs = 0;
  for (const auto &p : k.params)
    if (p.is_output)
      ++outputs;
    else
      inputs.emplace_back(p.elements * tile::dtype_bits(p.dtype) / 8);
  auto result = tessera::make_kernel_bench(opencl_backend(0), nullptr)->measure(k, inputs, 0, 1);
  EXPECT_EQ(result.outputs.size(), outputs);
}

TEST(OpenCLDevice, TimesEnqueuedWorkOnItsOwnClock) {
  REQUIRE_DEVICE();
  if (!tessera::test::expect_device_clock_times_enqueued_work(opencl_backend(0)))
    GTEST_SKIP() << "this OpenCL device has no profiling queue";
}

// Max pool, min and relu over vectors of floats (16 channels a vector on PoCL) are one helper
// call on floatN, not one per lane; NaN still propagates and infinities stay, lane by lane.
TEST(OpenCLDevice, VectorMaxMinAndReluKeepNaNAsInterpDoes) {
  REQUIRE_DEVICE();
  auto bound = tile::bind(tile::parse_program(R"(function (I[H, W, C]) -> (P, M, R) {
        P[x, y, c : 4, 4, 32] = >(I[2 * x + i, 2 * y + j, c]), i < 2, j < 2;
        M = min(I, 0.25);
        R = relu(I);
      })"),
                          {{"I", {tile::DType::Float32, {8, 8, 32}}}});
  HostTensor in({tile::DType::Float32, {8, 8, 32}});
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t e = 0; e < in.elements(); ++e)
    in.set_double(e, e % 37 == 0   ? std::nan("")
                     : e % 53 == 0 ? -INFINITY
                     : e % 59 == 0 ? INFINITY
                                   : double(u(rng)));
  Device device(opencl_backend(0));
  CompileOptions options;
  options.policy = TunePolicy::Off;
  compiler::Target target = opencl_backend(0).target();
  if (compiler::wide_vector_target(target)) {
    auto lowered = compiler::lower(bound, target);
    std::vector<std::string> calls = {"fmax_nan", "fmin_nan", "relu"};
    for (size_t s = 0; s < calls.size(); ++s) {
      std::string source = kernel_source(lowered.steps.at(s).kernel).source;
      std::string vector = "float" + std::to_string(lowered.steps[s].schedule.vector_width);
      EXPECT_NE(source.find("tsr_" + calls[s] + "_" + vector + "("), std::string::npos) << source;
    }
  }
  auto got = device.compile(bound, options)->run({{"I", in}});
  TensorMap want = interpret(bound, {{"I", in}});
  for (const char *out : {"P", "M", "R"})
    for (int64_t e = 0; e < want.at(out).elements(); ++e) {
      double w = want.at(out).get_double(e), g = got.at(out).get_double(e);
      ASSERT_TRUE(std::isnan(w) ? std::isnan(g) : g == w)
          << out << "[" << e << "] is " << g << ", interp gives " << w;
    }
}

// float32 erf is a helper (Abramowitz & Stegun 7.1.26, as GLSL's), on whole vectors where the
// device has them: within 5e-7 of the true erf from -6 to 6 (the formula's 1.5e-7 and float32's
// rounding: numpy's float32 evaluation of it is off by up to 4.2e-7 there), odd, exact at 0, +-1 at
// the infinities and NaN at NaN; float64 keeps OpenCL's built-in.
TEST(OpenCLDevice, Float32ErfIsAVectorHelperWithinItsBound) {
  REQUIRE_DEVICE();
  auto bound = tile::bind(tile::parse_program("function (X[N]) -> (Y) { Y = erf(X); }"),
                          {{"X", {tile::DType::Float32, {4096}}}});
  HostTensor in({tile::DType::Float32, {4096}});
  for (int64_t e = 0; e < in.elements(); ++e)
    in.set_double(e, e == 0   ? 0.0
                     : e == 1 ? INFINITY
                     : e == 2 ? -INFINITY
                     : e == 3 ? std::nan("")
                              : -6 + 12.0 * e / 4096);
  compiler::Target target = opencl_backend(0).target();
  std::string source = kernel_source(compiler::lower(bound, target).steps.at(0).kernel).source;
  EXPECT_NE(source.find("tsr_erf_float"), std::string::npos) << source;
  if (compiler::wide_vector_target(target)) {
    EXPECT_NE(source.find("tsr_erf_float16("), std::string::npos) << source;
  }
  CompileOptions options;
  options.policy = TunePolicy::Off;
  auto got = Device(opencl_backend(0)).compile(bound, options)->run({{"X", in}}).at("Y");
  EXPECT_EQ(got.get_double(0), 0.0);
  EXPECT_EQ(got.get_double(1), 1.0);
  EXPECT_EQ(got.get_double(2), -1.0);
  EXPECT_TRUE(std::isnan(got.get_double(3)));
  for (int64_t e = 4; e < in.elements(); ++e) {
    double x = in.get_double(e);
    ASSERT_NEAR(got.get_double(e), std::erf(x), 5e-7) << "erf(" << x << ")";
    int64_t mirror = 4096 - e;  // -x, where it is in the tensor
    if (mirror >= 4) {
      ASSERT_EQ(got.get_double(mirror), -got.get_double(e)) << "erf(" << x << ")";
    }
  }

  auto wide = tile::bind(tile::parse_program("function (X[N]) -> (Y) { Y = erf(X); }"),
                         {{"X", {tile::DType::Float64, {64}}}});
  if (Device(opencl_backend(0)).info().facts.at("fp64") == "yes") {
    EXPECT_EQ(
        kernel_source(compiler::lower(wide, target).steps.at(0).kernel).source.find("tsr_erf"),
        std::string::npos);
  }
}

// A run's inputs are enqueued without waiting and its first read waits for them and the steps
// (Backend::write_async): run after run of 4 MB inputs that change, each result is the sum of that
// run's inputs, also when another executable's run comes between.
TEST(OpenCLDevice, RunsWriteInputsWithoutWaitingAndReadTheirOwnResults) {
  REQUIRE_DEVICE();
  const int64_t n = 1 << 20;
  auto type = tile::TensorType{tile::DType::Float32, {n}};
  auto sum = tile::bind(tile::parse_program("function (A[N], B[N]) -> (S) { S = add(A, B); }"),
                        {{"A", type}, {"B", type}});
  Device device(opencl_backend(0));
  CompileOptions options;
  options.policy = TunePolicy::Off;
  auto add = device.compile(sum, options), other = device.compile(sum, options);
  for (int run = 0; run < 8; ++run) {
    TensorMap in = {{"A", HostTensor(type)}, {"B", HostTensor(type)}};
    float *a = in["A"].as<float>(), *b = in["B"].as<float>();
    for (int64_t e = 0; e < n; ++e) a[e] = float(run * 7 + e % 1000), b[e] = float(e % 13 - run);
    TensorMap got = add->run(in);
    if (run % 2) other->run({{"A", in["B"]}, {"B", in["B"]}});
    const float *s = got.at("S").as<float>();
    for (int64_t e = 0; e < n; ++e)
      ASSERT_EQ(s[e], a[e] + b[e]) << "run " << run << ", element " << e;
  }
}

TEST(OpenCLDevice, ProgramBinariesAreReusedAndABadOneIsRebuilt) {
  REQUIRE_DEVICE();
  auto dir = std::filesystem::temp_directory_path() /
             ("tessera-opencl-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "cache.db").string();
  CompileOptions options;
  options.cache_path = path;
  options.policy =
      TunePolicy::Cached;  // no tuning, but the cache is used (policy off never opens it)
  auto device = std::make_unique<Device>(opencl_backend(0));
  const int64_t m = 5, k = 3, n = 16;  // a shape no other test builds
  auto a = values(m * k, 4), b = values(k * n, 5);
  TensorMap inputs;
  inputs["A"] = HostTensor({tile::DType::Float32, {m, k}});
  inputs["B"] = HostTensor({tile::DType::Float32, {k, n}});
  std::memcpy(inputs["A"].data(), a.data(), a.size() * 4);
  std::memcpy(inputs["B"].data(), b.data(), b.size() * 4);
  auto want = hand_matmul(a, b, m, k, n);
  auto check_run = [&](Executable &exe) {
    auto out = exe.run(inputs);
    const float *c = out.at("C").as<float>();
    for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(c[i], want[i]) << "element " << i;
  };

  opencl_forget_programs(0);
  auto before = opencl_program_stats(0);
  check_run(*device->compile(matmul(m, k, n), options));
  auto built = opencl_program_stats(0);
  EXPECT_EQ(built.source_builds, before.source_builds + 1);
  EXPECT_EQ(KernelCache::open(path)->stats().binaries, 1);

  // As a second process would: nothing built in memory, the binary comes from the cache.
  std::vector<std::string> keys = opencl_forget_programs(0);
  ASSERT_EQ(keys.size(), 1u);
  check_run(*device->compile(matmul(m, k, n), options));
  auto loaded = opencl_program_stats(0);
  EXPECT_EQ(loaded.source_builds, built.source_builds);
  EXPECT_EQ(loaded.binary_loads, built.binary_loads + 1);

  // A corrupt binary under the same key: the driver rejects it and the source is built again.
  opencl_forget_programs(0);
  std::string fingerprint = device_fingerprint(device->info());
  KernelCache::open(path)->store_binary("opencl-program", keys[0], fingerprint, TESSERA_VERSION,
                                        "not a binary");
  check_run(*device->compile(matmul(m, k, n), options));
  EXPECT_EQ(opencl_program_stats(0).source_builds, loaded.source_builds + 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tessera::opencl
