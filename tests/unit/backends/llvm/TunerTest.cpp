// The tuner on the `cpu` device: candidates are timed through the runtime's kernel bench, a wrong
// or unbuildable candidate never wins, budgets hold, identical kernels share one canonical text,
// and a program compiled with tuning still matches the interpreter.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>

#include "backends/Registry.h"
#include "backends/llvm/CpuBackend.h"
#include "compiler/IRPrinter.h"
#include "compiler/Lower.h"
#include "compiler/tune/Canonical.h"
#include "compiler/tune/Tuner.h"
#include "runtime/KernelBench.h"
#include "runtime/KernelCache.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using compiler::tune::Trial;

struct Captured {
  compiler::ContractionNest nest;
  compiler::Kernel kernel;
  compiler::Schedule model;
};

tile::BoundProgram bind_text(const std::string &text,
                             const std::map<std::string, tile::TensorType> &types) {
  return tile::bind(tile::parse_program(text), types);
}

tile::TensorType f32(std::vector<int64_t> shape) {
  return {tile::DType::Float32, std::move(shape)};
}

/// The scheduled kernels of `program` as lowering hands them to a tuner.
std::vector<Captured> capture(const tile::BoundProgram &program) {
  std::vector<Captured> out;
  compiler::LowerOptions o;
  o.choose = [&](const compiler::ContractionNest &n, const compiler::Kernel &k,
                 const compiler::Schedule &s) {
    out.push_back({n, k, s});
    return s;
  };
  compiler::lower(program, llvm_backend::host_target(), o);
  return out;
}

const char *kMatmul =
    "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

/// A bench that passes the first kernel through and tampers with every later one: `wrong` makes
/// its output differ in one element while claiming it ran in a nanosecond; otherwise it fails to
/// build.
class Saboteur : public compiler::tune::KernelBench {
 public:
  explicit Saboteur(bool wrong) : wrong_(wrong) {}
  compiler::tune::Measurement measure(const compiler::Kernel &k,
                                      const std::vector<std::vector<std::byte>> &in, int warmup,
                                      int runs) override {
    if (!untuned_) untuned_ = k.body;  // the tuner times the untuned kernel first
    if (k.body == untuned_) return real_->measure(k, in, warmup, runs);
    if (!wrong_) throw tile::Error("error: the driver rejected the kernel (simulated)");
    auto m = real_->measure(k, in, warmup, runs);
    float v;
    std::memcpy(&v, m.outputs[0].data() + 4 * 17, 4);
    v += 0.5f;
    std::memcpy(m.outputs[0].data() + 4 * 17, &v, 4);
    for (auto &s : m.seconds) s = 1e-9;
    return m;
  }

 private:
  std::unique_ptr<compiler::tune::KernelBench> real_ = make_kernel_bench(cpu_backend(), nullptr);
  bool wrong_;
  compiler::Stmt untuned_;
};

/// A bench with made-up times over real runs (outputs stay right): the untuned kernel always takes
/// 1 ms; every other kernel takes `first` the first time it is timed and `later` ever after.
class FixedTimes : public compiler::tune::KernelBench {
 public:
  FixedTimes(double first, double later) : first_(first), later_(later) {}
  compiler::tune::Measurement measure(const compiler::Kernel &k,
                                      const std::vector<std::vector<std::byte>> &in, int warmup,
                                      int runs) override {
    if (!untuned_) untuned_ = k.body;  // the tuner times the untuned kernel first
    auto m = real_->measure(k, in, warmup, runs);
    double t = k.body == untuned_                                   ? 1e-3
               : timed_.insert(compiler::print_stmt(k.body)).second ? first_
                                                                    : later_;
    for (auto &s : m.seconds) s = t;
    return m;
  }

 private:
  std::unique_ptr<compiler::tune::KernelBench> real_ = make_kernel_bench(cpu_backend(), nullptr);
  double first_, later_;
  compiler::Stmt untuned_;
  std::set<std::string> timed_;
};

TEST(Tuner, AWinnerThatWasLuckyOnceIsNotKept) {
  // Every candidate looks twice as fast in its trial and is slower when timed again beside the
  // untuned kernel: the cost model's schedule stays, with the confirmation's times.
  auto k = capture(bind_text(kMatmul, {{"A", f32({48, 64})}, {"B", f32({64, 96})}})).at(0);
  FixedTimes lucky(0.5e-3, 1.5e-3);
  auto r = compiler::tune::tune_kernel(k.nest, k.kernel, k.model, llvm_backend::host_target(),
                                       lucky, {4, 30});
  ASSERT_EQ(r.trials.size(), 4u);
  EXPECT_DOUBLE_EQ(r.trials[1].seconds, 0.5e-3);
  EXPECT_EQ(r.best, k.model);
  EXPECT_DOUBLE_EQ(r.best_seconds, 1e-3);
  EXPECT_DOUBLE_EQ(r.untuned_seconds, 1e-3);
  // One that stays faster is kept.
  FixedTimes faster(0.5e-3, 0.5e-3);
  auto f = compiler::tune::tune_kernel(k.nest, k.kernel, k.model, llvm_backend::host_target(),
                                       faster, {4, 30});
  EXPECT_FALSE(f.best == k.model);
  EXPECT_DOUBLE_EQ(f.best_seconds, 0.5e-3);
}

TEST(Tuner, AWrongCandidateNeverWins) {
  auto k = capture(bind_text(kMatmul, {{"A", f32({48, 64})}, {"B", f32({64, 96})}})).at(0);
  Saboteur bench(true);
  auto r = compiler::tune::tune_kernel(k.nest, k.kernel, k.model, llvm_backend::host_target(),
                                       bench, {5, 30});
  ASSERT_EQ(r.trials.size(), 5u);
  EXPECT_EQ(r.trials[0].outcome, Trial::Outcome::Ok);
  for (size_t i = 1; i < r.trials.size(); ++i) {
    EXPECT_EQ(r.trials[i].outcome, Trial::Outcome::Wrong);
    EXPECT_NE(r.trials[i].error.find("C[17]"), std::string::npos) << r.trials[i].error;
  }
  EXPECT_EQ(r.best, k.model);
}

TEST(Tuner, ACandidateThatFailsToBuildIsRecorded) {
  auto k = capture(bind_text(kMatmul, {{"A", f32({48, 64})}, {"B", f32({64, 96})}})).at(0);
  Saboteur bench(false);
  auto r = compiler::tune::tune_kernel(k.nest, k.kernel, k.model, llvm_backend::host_target(),
                                       bench, {3, 30});
  ASSERT_EQ(r.trials.size(), 3u);
  EXPECT_EQ(r.trials[1].outcome, Trial::Outcome::BuildFailed);
  EXPECT_NE(r.trials[1].error.find("simulated"), std::string::npos);
  EXPECT_EQ(r.best, k.model);
}

TEST(Tuner, TimesDistinctCandidatesWithinTheBudget) {
  auto k = capture(bind_text(kMatmul, {{"A", f32({64, 128})}, {"B", f32({128, 128})}})).at(0);
  auto bench = make_kernel_bench(cpu_backend(), nullptr);
  auto r = compiler::tune::tune_kernel(k.nest, k.kernel, k.model, llvm_backend::host_target(),
                                       *bench, {4, 30});
  ASSERT_EQ(r.trials.size(), 4u);
  EXPECT_EQ(r.trials[0].schedule, k.model);
  for (size_t i = 0; i < r.trials.size(); ++i) {
    EXPECT_EQ(r.trials[i].outcome, Trial::Outcome::Ok) << r.trials[i].error;
    for (size_t j = 0; j < i; ++j) EXPECT_FALSE(r.trials[i].schedule == r.trials[j].schedule);
  }
  EXPECT_LE(r.best_seconds, r.untuned_seconds);
  auto none = compiler::tune::tune_kernel(k.nest, k.kernel, k.model, llvm_backend::host_target(),
                                          *bench, {8, 0});
  EXPECT_EQ(none.trials.size(), 1u);  // no seconds left after the untuned kernel
}

TEST(Tuner, FlopsOfAMatmul) {
  auto k = capture(bind_text(kMatmul, {{"A", f32({4, 5})}, {"B", f32({5, 6})}})).at(0);
  EXPECT_EQ(compiler::tune::nest_flops(k.nest), 2.0 * 4 * 5 * 6);
}

TEST(CanonicalText, IgnoresNamesButNotShapes) {
  auto a = capture(bind_text(kMatmul, {{"A", f32({8, 16})}, {"B", f32({16, 32})}})).at(0);
  auto b =
      capture(
          bind_text("function (X[P, Q], Y[Q, R]) -> (Z) { Z[p, r : P, R] = +(X[p, q] * Y[q, r]); }",
                    {{"X", f32({8, 16})}, {"Y", f32({16, 32})}}))
          .at(0);
  auto c = capture(bind_text(kMatmul, {{"A", f32({8, 16})}, {"B", f32({16, 48})}})).at(0);
  std::string ta = compiler::tune::canonical_text(a.nest, a.kernel.params);
  EXPECT_EQ(ta, compiler::tune::canonical_text(b.nest, b.kernel.params));
  EXPECT_NE(ta, compiler::tune::canonical_text(c.nest, c.kernel.params));
  EXPECT_EQ(ta.find("A"), std::string::npos) << ta;  // no program names survive
}

class TunedCompile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera-tuner-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

// Conv + bias + relu, twice under other names: the first kernel is tuned, the second is the same
// kernel (one canonical text) and is served without trials; the results match interp.
TEST_F(TunedCompile, MatchesInterpAndTunesIdenticalKernelsOnce) {
  const char *text =
      "function (I[N, H, W, C], K[3, 3, C, F], B[F], J[N, H, W, C]) -> (R, S) {\n"
      "  O[n, x, y, f : N, H - 2, W - 2, F] = +(I[n, x + i, y + j, c] * K[i, j, c, f]);\n"
      "  R = relu(O + B);\n"
      "  Q[m, u, v, g : N, H - 2, W - 2, F] = +(J[m, u + a, v + b, d] * K[a, b, d, g]);\n"
      "  S = relu(Q + B);\n"
      "}\n";
  std::map<std::string, tile::TensorType> types{{"I", f32({1, 10, 12, 8})},
                                                {"K", f32({3, 3, 8, 32})},
                                                {"B", f32({32})},
                                                {"J", f32({1, 10, 12, 8})}};
  auto bound = bind_text(text, types);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  TensorMap inputs;
  for (const auto &[name, type] : types) {
    HostTensor t(type);
    for (int64_t i = 0; i < t.elements(); ++i) t.as<float>()[i] = dist(rng);
    inputs[name] = t;
  }
  CompileOptions options;
  options.policy = TunePolicy::Full;
  options.cache_path = (dir_ / "cache.db").string();
  options.budget = TuneBudget{4, 10};
  auto exe = builtin_devices().create("cpu")->compile(bound, options);
  const auto &report = exe->report();
  ASSERT_EQ(report.kernels.size(), 2u);
  EXPECT_EQ(report.kernels[0].origin, "tuned");
  EXPECT_GT(report.kernels[0].trials, 1);
  EXPECT_EQ(report.kernels[1].origin, "cache");
  EXPECT_EQ(report.kernels[1].hash, report.kernels[0].hash);
  EXPECT_EQ(report.cache_hits, 1);
  EXPECT_EQ(report.tuning_trials, report.kernels[0].trials);

  auto got = exe->run(inputs);
  auto want = interpret(bound, inputs);
  for (const char *name : {"R", "S"})
    for (int64_t i = 0; i < want.at(name).elements(); ++i)
      ASSERT_NEAR(got.at(name).as<float>()[i], want.at(name).as<float>()[i], 1e-4)
          << name << "[" << i << "]";

  // Policy cached: no trials, every kernel from the cache, the object code too (stored by the
  // first compile, loaded instead of compiled); the same results.
  EXPECT_EQ(KernelCache::open(*options.cache_path)->stats().binaries, 1);
  options.policy = TunePolicy::Cached;
  auto again = builtin_devices().create("cpu")->compile(bound, options);
  EXPECT_EQ(again->report().tuning_trials, 0);
  EXPECT_EQ(again->report().cache_hits, 2);
  EXPECT_EQ(KernelCache::open(*options.cache_path)->stats().binaries, 1);
  auto got2 = again->run(inputs);
  for (const char *name : {"R", "S"})
    for (int64_t i = 0; i < want.at(name).elements(); ++i)
      ASSERT_EQ(got2.at(name).as<float>()[i], got.at(name).as<float>()[i])
          << name << "[" << i << "]";
}

TEST(TunePolicy, ComesFromTheEnvironment) {
  setenv("TESSERA_TUNE", "cached", 1);
  EXPECT_EQ(tune_policy_from_env(), TunePolicy::Cached);
  setenv("TESSERA_TUNE", "sometimes", 1);
  try {
    tune_policy_from_env();
    FAIL() << "no error";
  } catch (const tile::Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "TESSERA_TUNE must be online, full, cached or off (it is 'sometimes')"),
              std::string::npos);
  }
  unsetenv("TESSERA_TUNE");
  EXPECT_EQ(tune_policy_from_env(), TunePolicy::Online);
}

}  // namespace
}  // namespace tessera
