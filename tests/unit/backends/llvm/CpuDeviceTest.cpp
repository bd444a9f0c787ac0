// The `cpu` device end to end (parse, bind, lower, JIT, run) on small programs whose results are
// worked out by hand, and the registry's default device.
#include <gtest/gtest.h>

#include <cstring>

#include "backends/Registry.h"
#include "runtime/HostMemory.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

HostTensor vec(std::vector<float> v) {
  HostTensor t(tile::TensorType{tile::DType::Float32, {static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size(); ++i) t.as<float>()[i] = v[i];
  return t;
}

TensorMap run_cpu(const std::string &text, const TensorMap &inputs) {
  std::map<std::string, tile::TensorType> types;
  for (const auto &[n, t] : inputs) types[n] = t.type();
  auto bound = tile::bind(tile::parse_program(text), types);
  return builtin_devices().create("cpu")->compile(bound)->run(inputs);
}

// Buffers of 2 MB or more start on a huge-page boundary (advised into transparent huge pages);
// smaller ones on a cache line. Both hold what is written.
TEST(CpuDevice, LargeBuffersStartOnAHugePage) {
  auto cpu = builtin_devices().create("cpu");
  for (int64_t n : {int64_t{100}, int64_t{(2 << 20) / 4}, int64_t{3'000'000}}) {
    DeviceTensor t = cpu->allocate({tile::DType::Float32, {n}});
    auto at = reinterpret_cast<uintptr_t>(host_data(*t.buffer()));
    EXPECT_EQ(at % (n * 4 >= (2 << 20) ? 2 << 20 : 64), 0u) << n;
    std::memset(host_data(*t.buffer()), 7, n * 4);
    EXPECT_EQ(host_data(*t.buffer())[n * 4 - 1], std::byte{7});
  }
}

TEST(CpuDevice, IsTheDefaultDevice) {
  unsetenv("TESSERA_DEVICE");
  EXPECT_EQ(builtin_devices().default_name(), "cpu");
  EXPECT_EQ(builtin_devices().names().front(), "cpu");
}

// Regression: `B[0 : 1] = =(A[i])` writes B[0] three times; the cpu device silently kept the last
// value where Tile (and interp) report an error.
TEST(CpuDevice, AssignWritingAnElementTwiceIsAnError) {
  try {
    run_cpu("function (A[N]) -> (C, B) {\n  C = A * 2;\n  B[0 : 1] = =(A[i]);\n}\n",
            {{"A", vec({1, 2, 3})}});
    FAIL() << "no error";
  } catch (const tile::Error &e) {
    EXPECT_NE(std::string(e.what()).find("'=' writes element [0] of 'B' more than once"),
              std::string::npos)
        << e.what();
  }
}

// The same statement shape with a constraint leaving one point per element runs: B[0] = A[0].
TEST(CpuDevice, AssignWithOnePointPerElementRuns) {
  auto out =
      run_cpu("function (A[N]) -> (B) { B[0 : 1] = =(A[i]), i < 1; }", {{"A", vec({7, 2, 3})}});
  EXPECT_EQ(out.at("B").as<float>()[0], 7.0f);
}

// Nearest-neighbour upsampling by 2 with one `=` write per element: [a, a, b, b, c, c].
TEST(CpuDevice, UpsamplingAssign) {
  auto out = run_cpu("function (A[N]) -> (P) { P[2*j + r : 2*N] = =(A[j]), r < 2; }",
                     {{"A", vec({1, 2, 3})}});
  const float *p = out.at("P").as<float>();
  std::vector<float> got(p, p + 6);
  EXPECT_EQ(got, (std::vector<float>{1, 1, 2, 2, 3, 3}));
}

// A profile has nothing until profiling is on; then one entry per kernel in launch order, each
// timed.
TEST(CpuDevice, ProfileTimesEachKernelOnlyWhenAsked) {
  auto bound = tile::bind(tile::parse_program("function (A[N]) -> (C) {\n"
                                              "  B[i : N] = +(A[i] * A[i]);\n"
                                              "  C[0 : 1] = +(B[i]);\n}\n"),
                          {{"A", vec({1, 2, 3}).type()}});
  auto executable = builtin_devices().create("cpu")->compile(bound);
  executable->run({{"A", vec({1, 2, 3})}});
  EXPECT_TRUE(executable->profile().steps.empty());

  executable->set_profiling(true);
  auto out = executable->run({{"A", vec({1, 2, 3})}});
  EXPECT_EQ(out.at("C").as<float>()[0], 14.0f);
  std::vector<std::string> kernels;
  for (const auto &step : executable->profile().steps) {
    if (step.kind != StepKind::Kernel) continue;
    EXPECT_GT(step.seconds, 0) << step.name;
    kernels.push_back(step.name);
  }
  EXPECT_EQ(kernels, (std::vector<std::string>{"B", "C"}));
}

}  // namespace
}  // namespace tessera
