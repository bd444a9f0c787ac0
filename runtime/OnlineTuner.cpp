#include "runtime/OnlineTuner.h"

#include <algorithm>
#include <chrono>

#include "compiler/Finish.h"
#include "compiler/tune/SearchSpace.h"
#include "compiler/tune/Tuner.h"
#include "runtime/BinaryStore.h"
#include "runtime/KernelBench.h"
#include "runtime/KernelCache.h"
#include "runtime/ScheduleSelector.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  TESSERA_INTERNAL_ASSERT(!v.empty(), "median of nothing");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Runs of each kernel, tuned and untuned in alternation, after the tuned one's checked run.
constexpr int kTrialRuns = 3;
/// The tuned kernel stays only when its steps are at least this much faster in the runs.
constexpr double kSwapMargin = 0.03;

/// Whether the search space holds a schedule other than the cost model's.
bool has_other_candidate(const compiler::PlannedStep &step, const compiler::Target &target) {
  for (const auto &s : compiler::tune::candidates(step.nest, target))
    if (!(s == step.model)) return true;
  return false;
}

}  // namespace

struct OnlineTuner::Group {
  std::vector<size_t> steps;  // in step order; steps[0]'s planned step is tuned for all
  std::string hash;
  double seconds = 0;  // in the profiled run
};

struct OnlineTuner::Trial {
  Group group;
  OnlineKernel kernel;
  compiler::Schedule schedule;
  std::vector<compiler::Step> tuned, untuned;  // per group step
  std::vector<Executable::Impl::Launch> untuned_launches;
  std::unique_ptr<CompiledKernels> built;
  std::vector<double> tuned_seconds, untuned_seconds;
  int runs = 0;  // runs so far: the first checks, then untuned and tuned alternate
  bool finished = false;
};

OnlineTuner::OnlineTuner(Backend &backend, const CompileOptions &options,
                         compiler::ProgramPlan plan, const CompileReport &report,
                         KernelCache *cache)
    : backend_(backend), target_(backend.target()), plan_(std::move(plan)),
      budget_(options.budget.value_or(TuneBudget{})),
      share_(options.online_share ? *options.online_share : tune_share_from_env()),
      total_seconds_(options.total_seconds), cache_(cache), hooks_(options.online_hooks) {
  size_t scheduled = 0;
  for (const auto &step : plan_.steps) {
    std::string hash;
    if (step.kind == compiler::PlannedStep::Kind::Scheduled) {
      const KernelReport &k = report.kernels.at(scheduled++);
      if (k.origin == "model") hash = k.hash;
    }
    hash_of_step_.push_back(hash);
  }
  // Until a search has been timed, a trial is taken to cost what the per-kernel budget allows it.
  trial_seconds_ = budget_.max_seconds / std::max(budget_.max_trials, 1);
  if (cache_)
    binaries_ = std::make_unique<BinaryStore>(*cache_, device_fingerprint(backend.info()));
}

OnlineTuner::~OnlineTuner() = default;

double OnlineTuner::available() const {
  double left = share_ * report_.run_seconds - report_.tune_seconds;
  if (total_seconds_ > 0) left = std::min(left, total_seconds_ - report_.tune_seconds);
  return left;
}

// A search needs the untuned kernel's timing, a candidate's, and the winner's confirmation (which
// times both again): about four trials.
bool OnlineTuner::may_spend() const { return available() >= 4 * trial_seconds_; }

double OnlineTuner::group_seconds(const Executable::Impl &exe, const Group &group) const {
  double s = 0;
  for (size_t step : group.steps) s += exe.step_seconds[step];
  return s;
}

void OnlineTuner::before_run(Executable::Impl &exe) {
  std::fill(exe.watched.begin(), exe.watched.end(), 0);
  // Kernels being tried are tried side by side: their steps are disjoint and timed each alone.
  for (auto &trial : trials_) {
    Trial &t = *trial;
    for (size_t step : t.group.steps) exe.watched[step] = 1;
    // The first run checks the tuned kernel; then untuned (odd runs) and tuned alternate.
    install(exe, t, t.runs % 2 == 0);
    if (t.runs == 0)
      for (size_t i = 0; i < t.group.steps.size(); ++i)
        exe.checks[t.group.steps[i]] = {t.untuned_launches[i], t.untuned[i], ""};
  }
  // One run times every untuned kernel in place, once tuning could afford a search.
  if (!profiled_ && report_.runs > 0 && may_spend()) {
    profiling_ = true;
    for (size_t i = 0; i < hash_of_step_.size(); ++i) exe.watched[i] = !hash_of_step_[i].empty();
  }
}

void OnlineTuner::after_run(Executable::Impl &exe, double seconds) {
  ++report_.runs;
  report_.run_seconds += seconds;
  const bool touched = profiling_ || !trials_.empty();
  // What the tuner's own runs cost beyond a plain run (waiting for timed steps, checking) counts
  // as tuning.
  if (touched && plain_seconds_ > 0)
    report_.tune_seconds += std::max(0.0, seconds - plain_seconds_);
  if (!touched) plain_seconds_ = seconds;
  if (profiling_) {
    profiling_ = false;
    profiled_ = true;
    queue_hot_kernels(exe);
  }
  for (auto &trial : trials_) {
    Trial &t = *trial;
    if (t.runs == 0) {
      for (size_t step : t.group.steps) {
        auto &check = exe.checks.at(step);
        if (!check.difference.empty() && t.kernel.outcome.empty())
          t.kernel.outcome = "wrong: " + check.difference;
      }
    } else {
      (t.runs % 2 ? t.untuned_seconds : t.tuned_seconds).push_back(group_seconds(exe, t.group));
    }
    ++t.runs;
    if (!t.kernel.outcome.empty() || t.runs > 2 * kTrialRuns) finish_trial(exe, t);
  }
  exe.checks.clear();
  std::erase_if(trials_, [](const std::unique_ptr<Trial> &t) { return t->finished; });
  if (!queue_.empty() && may_spend()) {
    // The run's results are ready: tuning that fails costs the kernel its tuning, never the run.
    try {
      search(exe);
    } catch (const std::exception &e) {
      OnlineKernel failed;
      failed.outcome = std::string("untuned: ") + e.what();
      report_.kernels.push_back(failed);
    }
  }
  std::fill(exe.watched.begin(), exe.watched.end(), 0);
}

void OnlineTuner::queue_hot_kernels(const Executable::Impl &exe) {
  std::map<std::string, Group> by_hash;
  for (size_t i = 0; i < hash_of_step_.size(); ++i) {
    if (hash_of_step_[i].empty()) continue;
    Group &g = by_hash[hash_of_step_[i]];
    g.hash = hash_of_step_[i];
    g.steps.push_back(i);
    g.seconds += exe.step_seconds[i];
  }
  for (auto &[hash, g] : by_hash)
    if (g.seconds > 0) queue_.push_back(std::move(g));
  std::sort(queue_.begin(), queue_.end(),
            [](const Group &a, const Group &b) { return a.seconds < b.seconds; });
}

// Tunes the hottest queued kernel alone, and builds the winner for every step that runs it.
void OnlineTuner::search(Executable::Impl &exe) {
  const auto start = Clock::now();
  Group group = std::move(queue_.back());
  queue_.pop_back();
  const compiler::PlannedStep &planned = plan_.steps[group.steps[0]];
  OnlineKernel kernel;
  kernel.name = planned.name;
  kernel.hash = group.hash;
  kernel.steps = static_cast<int>(group.steps.size());
  kernel.seconds_before = group.seconds;
  compiler::Schedule schedule = planned.model;
  if (hooks_ && hooks_->search) {
    schedule = hooks_->search(planned).value_or(planned.model);
  } else {
    if (!bench_) bench_ = make_kernel_bench(backend_, nullptr);
    const compiler::Kernel untuned = compiler::finish_kernel(
        compiler::step_kernel(exe.program, planned, planned.model), target_);
    try {
      // What is left of the budget, less the confirmation that follows the trials: room for the
      // untuned kernel and at least two more.
      const double seconds = std::min(budget_.max_seconds, available() - trial_seconds_);
      auto result = compiler::tune::tune_kernel(planned.nest, untuned, planned.model, target_,
                                                *bench_, {budget_.max_trials, seconds});
      schedule = result.best;
      kernel.trials = static_cast<int>(result.trials.size());
    } catch (const tile::Error &e) {
      // The untuned kernel failed to run alone (a device limit): it stays as compiled.
      kernel.outcome = std::string("untuned: ") + e.what();
    }
  }
  auto finish_search = [&] {
    double spent = seconds_since(start);
    kernel.tune_seconds += spent;
    report_.tune_seconds += spent;
    report_.trials += kernel.trials;
    search_seconds_ += spent;
    search_trials_ += std::max(kernel.trials, 1);
    trial_seconds_ = search_seconds_ / search_trials_;
  };
  if (schedule == planned.model) {
    finish_search();
    kernel.schedule = planned.model.to_json();
    // A search the budget cut short (no candidate timed) decides nothing a later process should
    // take as settled.
    if (kernel.outcome.empty() && kernel.trials == 1 && has_other_candidate(planned, target_))
      kernel.outcome = "untuned: the budget left no time for a candidate";
    if (kernel.outcome.empty()) {
      kernel.outcome = "untuned";
      settle(exe, group, planned.model, kernel);
    }
    report_.kernels.push_back(kernel);
    return;
  }
  auto trial = std::make_unique<Trial>();
  std::vector<const compiler::Kernel *> kernels;
  for (size_t step : group.steps) {
    trial->untuned.push_back(exe.lowered.steps[step]);
    trial->untuned_launches.push_back(exe.launches[exe.kernel_of_step[step]]);
    trial->tuned.push_back(
        compiler::finished_step(exe.program, plan_.steps[step], schedule, target_));
    if (hooks_ && hooks_->alter) hooks_->alter(trial->tuned.back().kernel);
  }
  for (const auto &s : trial->tuned) kernels.push_back(&s.kernel);
  try {
    trial->built = backend_.build(kernels, binaries_.get());
  } catch (const tile::Error &e) {
    finish_search();
    kernel.outcome = std::string("untuned: the tuned kernel did not build: ") + e.what();
    kernel.schedule = planned.model.to_json();
    report_.kernels.push_back(kernel);
    return;
  }
  finish_search();
  trial->group = std::move(group);
  trial->kernel = std::move(kernel);
  trial->schedule = schedule;
  trials_.push_back(std::move(trial));
}

void OnlineTuner::install(Executable::Impl &exe, const Trial &t, bool tuned) {
  for (size_t i = 0; i < t.group.steps.size(); ++i) {
    size_t step = t.group.steps[i];
    exe.lowered.steps[step] = tuned ? t.tuned[i] : t.untuned[i];
    exe.launches[exe.kernel_of_step[step]] =
        tuned ? Executable::Impl::Launch{t.built.get(), i} : t.untuned_launches[i];
  }
  exe.where_stale = true;  // the kernels' params may differ
}

// The tuned kernel stays when it was right and faster in the program's own runs; either way the
// decision is stored, so that no later compile tunes the kernel again.
void OnlineTuner::finish_trial(Executable::Impl &exe, Trial &t) {
  const compiler::PlannedStep &planned = plan_.steps[t.group.steps[0]];
  OnlineKernel &k = t.kernel;
  bool faster = false;
  if (k.outcome.empty()) {
    k.seconds_before = median(t.untuned_seconds);
    k.seconds_after = median(t.tuned_seconds);
    faster = k.seconds_after < (1 - kSwapMargin) * k.seconds_before;
    k.outcome = faster ? "swapped" : "kept";
  }
  install(exe, t, faster);
  if (faster) {
    k.first_run = report_.runs + 1;
    swapped_in_.push_back(std::move(t.built));
  }
  k.schedule = (faster ? t.schedule : planned.model).to_json();
  // A wrong kernel is not stored: the cost model's schedule is, so that it is not tried again.
  settle(exe, t.group, faster ? t.schedule : planned.model, k);
  report_.kernels.push_back(k);
  t.finished = true;
}

void OnlineTuner::settle(const Executable::Impl &exe, const Group &group,
                         const compiler::Schedule &schedule, const OnlineKernel &done) {
  const compiler::PlannedStep &planned = plan_.steps[group.steps[0]];
  const compiler::Kernel model = compiler::step_kernel(exe.program, planned, planned.model);
  const CacheKey key = schedule_key(planned, model, device_fingerprint(backend_.info()));
  CacheEntry entry;
  entry.kernel_name = planned.name;
  entry.schedule = schedule.to_json();
  entry.seconds = done.seconds_after > 0 && done.outcome == "swapped" ? done.seconds_after
                                                                      : done.seconds_before;
  entry.untuned_seconds = done.seconds_before;
  entry.trials = done.trials;
  entry.flops = compiler::tune::nest_flops(planned.nest);
  settle_schedule(cache_, key, schedule, entry);
}

}  // namespace tessera
