#include "compiler/tune/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "compiler/ApplySchedule.h"
#include "compiler/Finish.h"
#include "compiler/tune/SearchSpace.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler::tune {

namespace {

using Clock = std::chrono::steady_clock;
using tile::DType;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

template <typename T>
T load(const std::byte *p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

double element(DType t, const std::byte *p, size_t i) {
  switch (t) {
    case DType::Bool: return static_cast<double>(load<uint8_t>(p, i) != 0);
    case DType::Int8: return load<int8_t>(p, i);
    case DType::Int16: return load<int16_t>(p, i);
    case DType::Int32: return load<int32_t>(p, i);
    case DType::Int64: return static_cast<double>(load<int64_t>(p, i));
    case DType::UInt8: return load<uint8_t>(p, i);
    case DType::UInt16: return load<uint16_t>(p, i);
    case DType::UInt32: return load<uint32_t>(p, i);
    case DType::UInt64: return static_cast<double>(load<uint64_t>(p, i));
    case DType::Float16: return static_cast<double>(load<_Float16>(p, i));
    case DType::Float32: return load<float>(p, i);
    case DType::Float64: return load<double>(p, i);
  }
  return 0;
}

template <typename T>
void fill(std::vector<std::byte> &bytes, size_t n, uint64_t seed, T (*make)(uint64_t)) {
  bytes.resize(n * sizeof(T));
  for (size_t i = 0; i < n; ++i) {
    T v = make(seed + i);
    std::memcpy(bytes.data() + i * sizeof(T), &v, sizeof(T));
  }
}

/// splitmix64: deterministic inputs without a library's engine (whose sequence may change).
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
double unit(uint64_t i) { return double(mix(i) >> 11) / double(1ULL << 53); }

/// Inputs in [0.5, 1.5) for floats (no cancellation, so a wrong candidate cannot hide behind a
/// sum near zero) and small non-negative integers (valid as gather indices and shift counts).
std::vector<std::byte> make_input(const BufferParam &p, uint64_t seed) {
  std::vector<std::byte> b;
  size_t n = static_cast<size_t>(p.elements);
  switch (p.dtype) {
    case DType::Float16:
      fill<_Float16>(b, n, seed, [](uint64_t i) { return static_cast<_Float16>(0.5 + unit(i)); });
      break;
    case DType::Float32:
      fill<float>(b, n, seed, [](uint64_t i) { return static_cast<float>(0.5 + unit(i)); });
      break;
    case DType::Float64: fill<double>(b, n, seed, [](uint64_t i) { return 0.5 + unit(i); }); break;
    default: {
      b.assign(n * tile::dtype_size(p.dtype), std::byte{0});
      for (size_t i = 0; i < n; ++i)
        b[i * tile::dtype_size(p.dtype)] = static_cast<std::byte>(mix(seed + i) % 4);
    }
  }
  return b;
}

/// The fastest run: on a machine shared with other processes a slower run measures them as much
/// as the kernel, and a median moves with their load between one candidate's runs and the next's.
double fastest(const std::vector<double> &v) {
  TESSERA_INTERNAL_ASSERT(!v.empty(), "a measurement without runs");
  return *std::min_element(v.begin(), v.end());
}

}  // namespace

// Floats compare relative to the output's largest magnitude: reassociated sums differ in the last
// bits.
std::string output_difference(const Kernel &k, const Measurement &ref, const Measurement &got) {
  size_t out = 0;
  for (const auto &p : k.params) {
    if (!p.is_output) continue;
    const auto &a = ref.outputs.at(out), &b = got.outputs.at(out);
    ++out;
    if (a.size() != b.size()) return p.name + ": output of " + std::to_string(b.size()) + " bytes";
    bool floating = tile::is_float(p.dtype);
    double tol = p.dtype == DType::Float16 ? 1e-2 : p.dtype == DType::Float32 ? 1e-4 : 1e-9;
    double scale = 0;
    size_t n = static_cast<size_t>(p.elements);
    if (floating)
      for (size_t i = 0; i < n; ++i) {
        double x = element(p.dtype, a.data(), i);
        if (std::isfinite(x)) scale = std::max(scale, std::fabs(x));
      }
    for (size_t i = 0; i < n; ++i) {
      double x = element(p.dtype, a.data(), i), y = element(p.dtype, b.data(), i);
      bool same = floating ? (std::isnan(x) && std::isnan(y)) || x == y ||
                                 std::fabs(x - y) <= tol * std::max(scale, 1e-30)
                           : x == y;
      if (!same)
        return p.name + "[" + std::to_string(i) + "] = " + std::to_string(y) + ", untuned gives " +
               std::to_string(x);
    }
  }
  return "";
}

namespace {

/// The winner of many trials is partly the luckiest: one undisturbed moment on a shared machine
/// makes a candidate look faster than it is (ResNet convs tuned under load ran 1.2x slower in a
/// benchmark than the model's schedule they had beaten in their trials). So the winner and the
/// untuned kernel are timed again in alternation, and the winner stays only when it still beats
/// the untuned kernel by kConfirmMargin; the result carries the confirmation's times.
constexpr int kConfirmRounds = 2;
constexpr double kConfirmMargin = 0.03;

/// The finished kernel of `nest` under `s`, with the untuned kernel's name and params.
Kernel candidate(const ContractionNest &nest, const Kernel &untuned, const Schedule &s,
                 const Target &target) {
  return finish_kernel(Kernel{untuned.name, untuned.params, apply_schedule(nest, s)}, target);
}

void confirm_winner(const ContractionNest &nest, const Kernel &untuned, const Schedule &model,
                    const std::vector<std::vector<std::byte>> &inputs, int runs,
                    const Target &target, KernelBench &bench, TuneResult &result) {
  Kernel winner = candidate(nest, untuned, result.best, target);
  double u = std::numeric_limits<double>::infinity(), w = u;
  for (int round = 0; round < kConfirmRounds; ++round) {
    u = std::min(u, fastest(bench.measure(untuned, inputs, 1, runs).seconds));
    w = std::min(w, fastest(bench.measure(winner, inputs, 1, runs).seconds));
  }
  result.untuned_seconds = u;
  if (w < u * (1 - kConfirmMargin)) {
    result.best_seconds = w;
  } else {
    result.best = model;
    result.best_seconds = u;
  }
}

}  // namespace

double nest_flops(const ContractionNest &nest) {
  double points = 1;
  for (const auto &ix : nest.indices) points *= double(ix.extent);
  return nest.indices.size() > nest.outputs() ? 2 * points : points;
}

TuneResult tune_kernel(const ContractionNest &nest, const Kernel &untuned, const Schedule &model,
                       const Target &target, KernelBench &bench, const Budget &budget,
                       const TrialCallback &on_trial) {
  const auto start = Clock::now();
  std::vector<std::vector<std::byte>> inputs;
  for (size_t i = 0; i < untuned.params.size(); ++i)
    if (!untuned.params[i].is_output)
      inputs.push_back(make_input(untuned.params[i], 1000003ULL * (i + 1)));

  TuneResult result;
  Measurement reference = bench.measure(untuned, inputs, 1, 3);
  // Enough runs that one of them is undisturbed, few enough to stay in budget; the untuned kernel
  // gets as many as every candidate (a fastest of more runs is lower).
  int runs = std::clamp(static_cast<int>(0.02 / std::max(fastest(reference.seconds), 1e-6)), 3, 15);
  if (runs > 3) {
    Measurement more = bench.measure(untuned, inputs, 0, runs - 3);
    reference.seconds.insert(reference.seconds.end(), more.seconds.begin(), more.seconds.end());
  }
  result.untuned_seconds = result.best_seconds = fastest(reference.seconds);
  result.best = model;
  result.trials.push_back({model, Trial::Outcome::Ok, result.untuned_seconds, ""});
  if (on_trial) on_trial(result.trials.back(), result);

  for (const auto &s : candidates(nest, target)) {
    // A trial is not begun when one more like those so far would overrun the time budget.
    const double spent = seconds_since(start);
    const double per_trial = spent / static_cast<double>(result.trials.size());
    if (static_cast<int>(result.trials.size()) >= budget.max_trials ||
        spent + per_trial > budget.max_seconds)
      break;
    if (s == model) continue;
    Trial trial{s, Trial::Outcome::Ok, 0, ""};
    try {
      Kernel k = candidate(nest, untuned, s, target);
      Measurement m = bench.measure(k, inputs, 1, runs);
      trial.seconds = fastest(m.seconds);
      trial.error = output_difference(untuned, reference, m);
      if (!trial.error.empty()) trial.outcome = Trial::Outcome::Wrong;
    } catch (const std::exception &e) {
      trial.outcome = Trial::Outcome::BuildFailed;
      trial.error = e.what();
    }
    if (trial.outcome == Trial::Outcome::Ok && trial.seconds < result.best_seconds) {
      result.best = s;
      result.best_seconds = trial.seconds;
    }
    result.trials.push_back(std::move(trial));
    if (on_trial) on_trial(result.trials.back(), result);
  }
  if (!(result.best == model))
    confirm_winner(nest, untuned, model, inputs, runs, target, bench, result);
  return result;
}

}  // namespace tessera::compiler::tune
