#include "runtime/Tuning.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "compiler/tune/Canonical.h"
#include "runtime/KernelCache.h"
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

/// A cache that cannot be opened is reported once per process; the run goes on without it.
std::unique_ptr<KernelCache> open_cache(const CompileOptions &options) {
  std::string path = options.cache_path ? *options.cache_path : KernelCache::default_path();
  try {
    return KernelCache::open(path);
  } catch (const std::exception &e) {
    static std::once_flag warned;
    std::call_once(warned, [&] { std::cerr << "tessera: warning: running without a kernel cache: " << e.what() << "\n"; });
    return nullptr;
  }
}

}  // namespace

TunePolicy tune_policy_from_env() {
  const char *v = std::getenv("TESSERA_TUNE");
  std::string s = v ? v : "";
  if (s.empty() || s == "online") return TunePolicy::Online;
  if (s == "cached") return TunePolicy::Cached;
  if (s == "off") return TunePolicy::Off;
  throw tile::Error("error: TESSERA_TUNE must be online, cached or off (it is '" + s + "')");
}

std::string device_fingerprint(const DeviceInfo &info) {
  std::string s = "backend=" + info.backend;
  for (const auto &[k, v] : info.facts) s += ";" + k + "=" + v;
  return s;
}

compiler::tune::Budget online_budget() { return {6, 1.0}; }

ScheduleSelector::ScheduleSelector(const DeviceInfo &device, const compiler::TargetInfo &target,
                                   compiler::tune::KernelBench *bench, const CompileOptions &options)
    : fingerprint_(device_fingerprint(device)), target_(target), bench_(bench), options_(options),
      policy_(options.policy ? *options.policy : tune_policy_from_env()) {
  if (policy_ != TunePolicy::Off) cache_ = open_cache(options);
}

ScheduleSelector::~ScheduleSelector() = default;

compiler::LowerOptions ScheduleSelector::lower_options() {
  compiler::LowerOptions o;
  o.choose = [this](const compiler::ContractionNest &n, const compiler::Kernel &k, const compiler::Schedule &s) {
    return choose(n, k, s);
  };
  return o;
}

compiler::Schedule ScheduleSelector::choose(const compiler::ContractionNest &nest, const compiler::Kernel &kernel,
                                            const compiler::Schedule &model) {
  ++index_;
  KernelReport entry;
  entry.name = kernel.name;
  entry.flops = compiler::tune::nest_flops(nest);
  entry.origin = "model";
  entry.schedule = model.to_json();
  if (policy_ == TunePolicy::Off) {
    report_.kernels.push_back(entry);
    return model;
  }
  const std::string text = compiler::tune::canonical_text(nest, kernel.params);
  entry.hash = KernelCache::hash(text);
  const CacheKey key{text, fingerprint_, TESSERA_VERSION};
  const std::string memo_key = fingerprint_ + "\n" + TESSERA_VERSION + "\n" + text;

  std::optional<compiler::Schedule> found;
  const bool look = !(options_.retune && policy_ == TunePolicy::Online && bench_);
  if (look) {
    std::lock_guard<std::mutex> lock(settled().mutex);
    auto it = settled().by_key.find(memo_key);
    if (it != settled().by_key.end()) found = it->second;
  }
  if (!found && cache_ && look)
    if (auto hit = find(key)) {
      try {
        found = compiler::Schedule::from_json(hit->schedule);
        entry.seconds = hit->seconds;
        entry.untuned_seconds = hit->untuned_seconds;
      } catch (const tile::Error &e) {
        std::cerr << "tessera: warning: kernel cache " << cache_->path() << " holds an unreadable schedule for "
                  << kernel.name << " (" << e.what() << "); ignoring it\n";
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
  compiler::Schedule chosen = model;
  bool over_total = options_.total_seconds > 0 && report_.tune_seconds >= options_.total_seconds;
  if (policy_ == TunePolicy::Online && bench_ && !over_total) chosen = tune(nest, kernel, model, key, memo_key, entry);
  report_.kernels.push_back(entry);
  return chosen;
}

std::optional<CacheEntry> ScheduleSelector::find(const CacheKey &key) {
  try {
    return cache_->find(key);
  } catch (const std::exception &e) {
    std::cerr << "tessera: warning: kernel cache " << cache_->path() << " could not be read: " << e.what() << "\n";
    return std::nullopt;
  }
}

compiler::Schedule ScheduleSelector::tune(const compiler::ContractionNest &nest, const compiler::Kernel &kernel,
                                          const compiler::Schedule &model, const CacheKey &key,
                                          const std::string &memo_key, KernelReport &entry) {
  if (options_.progress && kernels_ < 0 && program_) {
    kernels_ = 0;
    compiler::LowerOptions count;
    count.choose = [&](const compiler::ContractionNest &, const compiler::Kernel &, const compiler::Schedule &m) {
      ++kernels_;
      return m;
    };
    compiler::lower(*program_, target_, count);
  }
  const auto start = Clock::now();
  auto on_trial = [&](const compiler::tune::Trial &t, const compiler::tune::TuneResult &so_far) {
    if (!options_.progress) return;
    TuneProgress p{index_, std::max(kernels_, index_), kernel.name, &t, &so_far};
    options_.progress(p);
  };
  auto result = compiler::tune::tune_kernel(nest, kernel, model, target_, *bench_,
                                            options_.budget ? *options_.budget : online_budget(), on_trial);
  double spent = std::chrono::duration<double>(Clock::now() - start).count();
  report_.tune_seconds += spent;
  report_.tuning_trials += static_cast<int>(result.trials.size());
  entry.origin = "tuned";
  entry.trials = static_cast<int>(result.trials.size());
  entry.untuned_seconds = result.untuned_seconds;
  entry.seconds = result.best_seconds;
  entry.schedule = result.best.to_json();
  {
    std::lock_guard<std::mutex> lock(settled().mutex);
    settled().by_key[memo_key] = result.best;
  }
  if (cache_) {
    CacheEntry e;
    e.kernel_name = kernel.name;
    e.schedule = entry.schedule;
    e.seconds = result.best_seconds;
    e.untuned_seconds = result.untuned_seconds;
    e.trials = entry.trials;
    e.flops = entry.flops;
    try {
      cache_->store(key, e);
    } catch (const std::exception &err) {
      std::cerr << "tessera: warning: could not store a tuned schedule in " << cache_->path() << ": " << err.what()
                << "\n";
    }
  }
  return result.best;
}

std::unique_ptr<Executable> compile_with_schedules(
    const tile::BoundProgram &program, const DeviceInfo &device, const compiler::TargetInfo &target,
    compiler::tune::KernelBench *bench, const CompileOptions &options,
    const std::function<std::unique_ptr<Executable>(compiler::LoweredProgram, ScheduleSelector &)> &build) {
  const auto start = Clock::now();
  ScheduleSelector selector(device, target, bench, options);
  selector.count_kernels(program);
  auto exe = build(compiler::lower(program, target, selector.lower_options()), selector);
  CompileReport report = std::move(selector.report());
  report.compile_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  exe->set_report(std::move(report));
  return exe;
}

}  // namespace tessera
