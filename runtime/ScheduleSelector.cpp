#include "runtime/ScheduleSelector.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "compiler/Finish.h"
#include "compiler/tune/Canonical.h"
#include "compiler/tune/SearchSpace.h"
#include "runtime/Backend.h"
#include "runtime/KernelBench.h"
#include "runtime/KernelCache.h"
#include "runtime/TunePolicyNames.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using Clock = std::chrono::steady_clock;

/// Schedules this process has settled on, by full cache key: a kernel repeated in a model (or
/// compiled again) is tuned once even when no cache file can be used.
struct Settled {
  std::mutex mutex;
  std::map<std::string, compiler::Schedule> by_key;
};
Settled &settled() {
  static Settled s;
  return s;
}

std::string memo_key(const CacheKey &key) {
  return key.device + "\n" + key.version + "\n" + key.kernel;
}

}  // namespace

std::optional<TunePolicy> tune_policy_named(std::string_view name) {
  if (name == "online") return TunePolicy::Online;
  if (name == "full") return TunePolicy::Full;
  if (name == "cached") return TunePolicy::Cached;
  if (name == "off") return TunePolicy::Off;
  return std::nullopt;
}

const char *tune_policy_name(TunePolicy policy) {
  switch (policy) {
    case TunePolicy::Online: return "online";
    case TunePolicy::Full: return "full";
    case TunePolicy::Cached: return "cached";
    case TunePolicy::Off: return "off";
  }
  return "?";
}

TunePolicy tune_policy_from_env() {
  const char *v = std::getenv("TESSERA_TUNE");
  std::string s = v ? v : "";
  if (s.empty()) return TunePolicy::Online;
  if (auto policy = tune_policy_named(s)) return *policy;
  throw tile::Error("error: TESSERA_TUNE must be online, full, cached or off (it is '" + s + "')");
}

double tune_share_from_env() {
  const char *v = std::getenv("TESSERA_TUNE_SHARE");
  if (!v || !*v) return 0.2;
  char *end = nullptr;
  double share = std::strtod(v, &end);
  if (*end || !(share >= 0) || std::isinf(share))
    throw tile::Error(std::string("error: TESSERA_TUNE_SHARE must be a number >= 0 (it is '") + v +
                      "')");
  return share;
}

CacheKey schedule_key(const compiler::PlannedStep &step, const compiler::Kernel &model,
                      const std::string &fingerprint) {
  return {compiler::tune::canonical_text(step.nest, model.params) +
              "\n// cost model: " + step.model.to_json() +
              "\n// search space: " + std::to_string(compiler::tune::kSearchSpaceVersion) + "\n",
          fingerprint, TESSERA_VERSION};
}

void settle_schedule(KernelCache *cache, const CacheKey &key, const compiler::Schedule &schedule,
                     const CacheEntry &entry) {
  {
    std::lock_guard<std::mutex> lock(settled().mutex);
    settled().by_key[memo_key(key)] = schedule;
  }
  if (!cache) return;
  try {
    cache->store(key, entry);
  } catch (const std::exception &err) {
    std::cerr << "tessera: warning: could not store a tuned schedule in " << cache->path() << ": "
              << err.what() << "\n";
  }
}

ScheduleSelector::ScheduleSelector(Backend &backend, const CompileOptions &options,
                                   KernelCache *cache, int kernels)
    : backend_(backend), target_(backend.target()),
      fingerprint_(device_fingerprint(backend.info())), options_(options),
      policy_(options.policy ? *options.policy : tune_policy_from_env()), cache_(cache),
      kernels_(kernels) {
  if (policy_ == TunePolicy::Off) cache_ = nullptr;
}

ScheduleSelector::~ScheduleSelector() = default;

compiler::Schedule ScheduleSelector::choose(const tile::BoundProgram &program,
                                            const compiler::PlannedStep &step) {
  ++index_;
  KernelReport entry;
  entry.name = step.name;
  entry.flops = compiler::tune::nest_flops(step.nest);
  entry.origin = "model";
  entry.schedule = step.model.to_json();
  if (policy_ == TunePolicy::Off) {
    report_.kernels.push_back(entry);
    return step.model;
  }
  const compiler::Kernel model_kernel = compiler::step_kernel(program, step, step.model);
  const CacheKey key = schedule_key(step, model_kernel, fingerprint_);
  entry.hash = KernelCache::hash(key.kernel);

  std::optional<compiler::Schedule> found;
  const bool look = !(options_.retune && policy_ == TunePolicy::Full);
  if (look) {
    std::lock_guard<std::mutex> lock(settled().mutex);
    auto it = settled().by_key.find(memo_key(key));
    if (it != settled().by_key.end()) found = it->second;
  }
  if (!found && cache_ && look)
    if (auto hit = find(key)) {
      try {
        found = compiler::Schedule::from_json(hit->schedule);
        entry.seconds = hit->seconds;
        entry.untuned_seconds = hit->untuned_seconds;
      } catch (const tile::Error &e) {
        std::cerr << "tessera: warning: kernel cache " << cache_->path()
                  << " holds an unreadable schedule for " << step.name << " (" << e.what()
                  << "); ignoring it\n";
      }
    }
  if (found) {
    ++report_.cache_hits;
    entry.origin = "cache";
    entry.schedule = found->to_json();
    report_.kernels.push_back(entry);
    return *found;
  }
  ++report_.cache_misses;
  compiler::Schedule chosen = step.model;
  bool over_total = options_.total_seconds > 0 && report_.tune_seconds >= options_.total_seconds;
  if (policy_ == TunePolicy::Full && !over_total) chosen = tune(program, step, key, entry);
  report_.kernels.push_back(entry);
  return chosen;
}

std::optional<CacheEntry> ScheduleSelector::find(const CacheKey &key) {
  try {
    return cache_->find(key);
  } catch (const std::exception &e) {
    std::cerr << "tessera: warning: kernel cache " << cache_->path()
              << " could not be read: " << e.what() << "\n";
    return std::nullopt;
  }
}

compiler::Schedule ScheduleSelector::tune(const tile::BoundProgram &program,
                                          const compiler::PlannedStep &step, const CacheKey &key,
                                          KernelReport &entry) {
  // Candidates' code is not kept: only the winner is built again, for the program, and stored.
  if (!bench_) bench_ = make_kernel_bench(backend_, nullptr);
  const auto start = Clock::now();
  auto on_trial = [&](const compiler::tune::Trial &t, const compiler::tune::TuneResult &so_far) {
    if (!options_.progress) return;
    TuneProgress p;
    p.index = index_;
    p.count = std::max(kernels_, index_);
    p.kernel = step.name;
    p.trials_so_far = static_cast<int>(so_far.trials.size());
    p.best_seconds = so_far.best_seconds;
    p.trial_error = t.error;
    options_.progress(p);
  };
  const TuneBudget budget = options_.budget.value_or(TuneBudget{});
  const compiler::Kernel untuned =
      compiler::finish_kernel(compiler::step_kernel(program, step, step.model), target_);
  auto result = compiler::tune::tune_kernel(step.nest, untuned, step.model, target_, *bench_,
                                            {budget.max_trials, budget.max_seconds}, on_trial);
  double spent = std::chrono::duration<double>(Clock::now() - start).count();
  report_.tune_seconds += spent;
  report_.tuning_trials += static_cast<int>(result.trials.size());
  entry.origin = "tuned";
  entry.trials = static_cast<int>(result.trials.size());
  entry.untuned_seconds = result.untuned_seconds;
  entry.seconds = result.best_seconds;
  entry.schedule = result.best.to_json();
  CacheEntry e;
  e.kernel_name = step.name;
  e.schedule = entry.schedule;
  e.seconds = result.best_seconds;
  e.untuned_seconds = result.untuned_seconds;
  e.trials = entry.trials;
  e.flops = entry.flops;
  settle_schedule(cache_, key, result.best, e);
  return result.best;
}

}  // namespace tessera
