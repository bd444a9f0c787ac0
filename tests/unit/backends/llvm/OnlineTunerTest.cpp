// Tuning between runs (TESSERA_TUNE=online) on the `cpu` device: nothing is timed before the run
// has earned it, every run's results are right whatever is being tried, a wrong tuned kernel never
// replaces the compiled one, swaps happen between runs, and decisions reach the kernel cache.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "backends/Registry.h"
#include "backends/llvm/CpuBackend.h"
#include "compiler/Lower.h"
#include "compiler/tune/SearchSpace.h"
#include "runtime/KernelCache.h"
#include "runtime/OnlineTuner.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

tile::TensorType f32(std::vector<int64_t> shape) {
  return {tile::DType::Float32, std::move(shape)};
}

// Conv + bias + relu twice under other names: two steps that run one kernel (twins).
const char *kTwinConvs =
    "function (I[N, H, W, C], K[3, 3, C, F], B[F], J[N, H, W, C]) -> (R, S) {\n"
    "  O[n, x, y, f : N, H - 2, W - 2, F] = +(I[n, x + i, y + j, c] * K[i, j, c, f]);\n"
    "  R = relu(O + B);\n"
    "  Q[m, u, v, g : N, H - 2, W - 2, F] = +(J[m, u + a, v + b, d] * K[a, b, d, g]);\n"
    "  S = relu(Q + B);\n"
    "}\n";
// The same with max for sum: its kernel is a wrong stand-in for the first's.
const char *kTwinMaxes =
    "function (I[N, H, W, C], K[3, 3, C, F], B[F], J[N, H, W, C]) -> (R, S) {\n"
    "  O[n, x, y, f : N, H - 2, W - 2, F] = >(I[n, x + i, y + j, c] * K[i, j, c, f]);\n"
    "  R = relu(O + B);\n"
    "  Q[m, u, v, g : N, H - 2, W - 2, F] = >(J[m, u + a, v + b, d] * K[a, b, d, g]);\n"
    "  S = relu(Q + B);\n"
    "}\n";

/// Each test has images of its own height: a kernel settled in this process is not tuned again,
/// even under another cache file.
std::map<std::string, tile::TensorType> types(int64_t height) {
  return {{"I", f32({1, height, 12, 8})},
          {"K", f32({3, 3, 8, 32})},
          {"B", f32({32})},
          {"J", f32({1, height, 12, 8})}};
}

tile::BoundProgram bound(const char *text, int64_t height) {
  return tile::bind(tile::parse_program(text), types(height));
}

TensorMap random_inputs(int64_t height, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  TensorMap inputs;
  for (const auto &[name, type] : types(height)) {
    HostTensor t(type);
    for (int64_t i = 0; i < t.elements(); ++i) t.as<float>()[i] = dist(rng);
    inputs[name] = t;
  }
  return inputs;
}

void expect_matches_interp(const tile::BoundProgram &program, const TensorMap &inputs,
                           const TensorMap &got, const std::string &when) {
  auto want = interpret(program, inputs);
  for (const char *name : {"R", "S"})
    for (int64_t i = 0; i < want.at(name).elements(); ++i)
      ASSERT_NEAR(got.at(name).as<float>()[i], want.at(name).as<float>()[i], 1e-4)
          << when << ": " << name << "[" << i << "]";
}

/// Runs `exe` `runs` times on fresh inputs, each run's results checked against the interpreter.
void run_checked(Executable &exe, int64_t height, int runs, unsigned seed = 0) {
  const auto program = bound(kTwinConvs, height);
  for (int run = 0; run < runs; ++run) {
    TensorMap inputs = random_inputs(height, seed + run);
    expect_matches_interp(program, inputs, exe.run(inputs), "run " + std::to_string(run + 1));
  }
}

/// A schedule of the search space other than the cost model's.
std::optional<compiler::Schedule> another_schedule(const compiler::PlannedStep &step) {
  for (const auto &s : compiler::tune::candidates(step.nest, llvm_backend::host_target()))
    if (!(s == step.model)) return s;
  return std::nullopt;
}

class OnlineTuning : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera-online-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    options_.policy = TunePolicy::Online;
    options_.cache_path = (dir_ / "cache.db").string();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Executable> compile(const char *text, int64_t height) {
    return builtin_devices().create("cpu")->compile(bound(text, height), options_);
  }

  std::filesystem::path dir_;
  CompileOptions options_;
};

// A run too short to pay for a search times nothing: not at compile, not between runs.
TEST_F(OnlineTuning, NothingIsTimedBeforeTheRunsPayForIt) {
  auto exe = compile(kTwinConvs, 10);
  EXPECT_EQ(exe->report().tuning_trials, 0);
  EXPECT_EQ(exe->report().cache_misses, 2);
  for (const auto &k : exe->report().kernels) EXPECT_EQ(k.origin, "model");
  for (int run = 0; run < 3; ++run) exe->run(random_inputs(10, run));
  OnlineReport r = exe->tuning();
  EXPECT_EQ(r.runs, 3);
  EXPECT_EQ(r.trials, 0);
  EXPECT_EQ(r.tune_seconds, 0);
  EXPECT_TRUE(r.kernels.empty());
}

// With budget to spare, the conv kernel (both twins as one) is tuned, tried in the runs and either
// swapped or kept; every run's results are right; the decision is in the cache, where the next
// compile finds it.
TEST_F(OnlineTuning, TriesATunedKernelInTheRunsAndStoresTheDecision) {
  options_.online_share = 1e6;
  options_.online_hooks = std::make_shared<OnlineTunerHooks>();
  options_.online_hooks->search = another_schedule;
  auto exe = compile(kTwinConvs, 11);
  const auto program = bound(kTwinConvs, 11);
  run_checked(*exe, 11, 12);
  OnlineReport r = exe->tuning();
  ASSERT_GE(r.kernels.size(), 1u);
  const OnlineKernel &conv = r.kernels[0];
  EXPECT_EQ(conv.steps, 2);
  EXPECT_TRUE(conv.outcome == "swapped" || conv.outcome == "kept") << conv.outcome;
  EXPECT_GT(conv.seconds_before, 0);
  EXPECT_GT(conv.seconds_after, 0);
  if (conv.outcome == "swapped") {
    // Profiled run 2, checked run 3, then 6 alternating runs: the swap comes before run 10.
    EXPECT_EQ(conv.first_run, 10);
    EXPECT_EQ(
        conv.schedule,
        another_schedule(compiler::plan_program(program, llvm_backend::host_target()).steps[0])
            ->to_json());
  }

  auto again = compile(kTwinConvs, 11);
  ASSERT_FALSE(again->report().kernels.empty());
  EXPECT_EQ(again->report().kernels[0].origin, "cache");
  EXPECT_EQ(again->report().kernels[0].schedule, conv.schedule);
  TensorMap inputs = random_inputs(11, 99);
  expect_matches_interp(program, inputs, again->run(inputs), "from the cache");
}

// A tuned kernel that computes something else is caught on the program's own data in its first
// run (whose results stay right), never swapped in, and the cache keeps the cost model's schedule.
TEST_F(OnlineTuning, AWrongTunedKernelIsNeverSwappedIn) {
  options_.online_share = 1e6;
  options_.online_hooks = std::make_shared<OnlineTunerHooks>();
  auto tried = std::make_shared<compiler::Schedule>();
  options_.online_hooks->search = [tried](const compiler::PlannedStep &step) {
    *tried = *another_schedule(step);
    return *tried;
  };
  const auto wrong = bound(kTwinMaxes, 12);
  const auto wrong_plan = compiler::plan_program(wrong, llvm_backend::host_target());
  options_.online_hooks->alter = [&, tried](compiler::Kernel &k) {
    for (const auto &step : wrong_plan.steps)
      if (step.name == k.name)
        k = compiler::finished_step(wrong, step, *tried, llvm_backend::host_target()).kernel;
  };
  auto exe = compile(kTwinConvs, 12);
  const auto program = bound(kTwinConvs, 12);
  run_checked(*exe, 12, 12);
  OnlineReport r = exe->tuning();
  ASSERT_GE(r.kernels.size(), 1u);
  EXPECT_EQ(r.kernels[0].outcome.rfind("wrong: ", 0), 0u) << r.kernels[0].outcome;
  const auto model = compiler::plan_program(program, llvm_backend::host_target()).steps[0].model;
  EXPECT_EQ(r.kernels[0].schedule, model.to_json());
  auto again = compile(kTwinConvs, 12);
  EXPECT_EQ(again->report().kernels[0].origin, "cache");
  EXPECT_EQ(again->report().kernels[0].schedule, model.to_json());
}

// Runs from two threads while kernels are tried and swapped: each run sees one set of kernels.
TEST_F(OnlineTuning, RunsFromTwoThreadsStayRightWhileTuning) {
  options_.online_share = 1e6;
  options_.online_hooks = std::make_shared<OnlineTunerHooks>();
  options_.online_hooks->search = another_schedule;
  auto exe = compile(kTwinConvs, 13);
  auto work = [&](unsigned seed) { run_checked(*exe, 13, 10, seed); };
  std::thread a(work, 100), b(work, 200);
  a.join();
  b.join();
  EXPECT_EQ(exe->tuning().runs, 20);
  EXPECT_FALSE(exe->tuning().kernels.empty());
}

TEST(TuneShare, ComesFromTheEnvironment) {
  setenv("TESSERA_TUNE_SHARE", "0.5", 1);
  EXPECT_EQ(tune_share_from_env(), 0.5);
  for (const char *bad : {"lots", "-1", "0.2x", "inf"}) {
    setenv("TESSERA_TUNE_SHARE", bad, 1);
    EXPECT_THROW(
        try { tune_share_from_env(); } catch (const tile::Error &e) {
          EXPECT_NE(std::string(e.what()).find("TESSERA_TUNE_SHARE must be a number >= 0"),
                    std::string::npos);
          throw;
        },
        tile::Error);
  }
  unsetenv("TESSERA_TUNE_SHARE");
  EXPECT_EQ(tune_share_from_env(), 0.2);
}

}  // namespace
}  // namespace tessera
