// Tiered tuning (TESSERA_TUNE=online, docs/tuning.md): an executable first runs the kernels the
// compile chose without timing anything (the cache's schedules, else the cost model's), so no run
// waits for tuning. Between its runs it then tunes the kernels that take a real share of its own
// run time, hottest first, spending at most a share of the time it has run so far:
//
// 1. After the first run, one run times every untuned kernel alone, in place (its buffers, the
//    kernels around it): they are queued hottest first, twins (the same canonical text) as one.
// 2. When the budget allows, after a run, the hottest queued kernel is tuned alone
//    (compiler/tune/Tuner.h: candidates timed on their own buffers, each checked against the
//    untuned kernel).
// 3. A winner is built for every step that runs the kernel and tried in the program's own runs,
//    side by side with the other kernels being tried: its first run checks its outputs against the
//    kernel it would replace on the program's data; then runs alternate between the two, timing
//    the steps in place. It stays only when it is faster there too. A swap happens between runs,
//    never inside one.
// 4. Every decision is stored in the kernel cache, so a later compile starts from it.
//
// Tuning runs on the caller's thread, inside run() after the run's results are ready: on a
// 2-core machine a background thread would share the cores with the program's own thread pool and
// disturb both the program and the timings it takes.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compiler/Lower.h"
#include "compiler/tune/Tuner.h"
#include "runtime/CompileOptions.h"
#include "runtime/CompileReport.h"
#include "runtime/ExecutableImpl.h"
#include "runtime/OnlineReport.h"

namespace tessera {

class BinaryStore;
class KernelCache;

/// Replacements for the timed search, so that tests can force a swap and a wrong kernel.
struct OnlineTunerHooks {
  /// The schedule to try for a planned step, instead of timing candidates; nullopt: none.
  std::function<std::optional<compiler::Schedule>(const compiler::PlannedStep &)> search;
  /// Applied to every tried kernel once it is finished (a test makes it wrong).
  std::function<void(compiler::Kernel &)> alter;
};

class OnlineTuner {
 public:
  /// `plan` and `report` are the compile's (steps in the lowered program's order); `cache` may be
  /// null.
  OnlineTuner(Backend &backend, const CompileOptions &options, compiler::ProgramPlan plan,
              const CompileReport &report, KernelCache *cache);
  ~OnlineTuner();

  void before_run(Executable::Impl &exe);
  void after_run(Executable::Impl &exe, double seconds);
  const OnlineReport &report() const { return report_; }

 private:
  struct Group;  // the steps that run one kernel
  struct Trial;  // a tuned kernel being tried in the program's runs

  void queue_hot_kernels(const Executable::Impl &exe);
  double available() const;  // tuning seconds the budget allows now
  bool may_spend() const;
  void search(Executable::Impl &exe);
  void finish_trial(Executable::Impl &exe, Trial &trial);
  void install(Executable::Impl &exe, const Trial &trial, bool tuned);
  void settle(const Executable::Impl &exe, const Group &group, const compiler::Schedule &schedule,
              const OnlineKernel &done);
  double group_seconds(const Executable::Impl &exe, const Group &group) const;

  Backend &backend_;
  compiler::Target target_;
  compiler::ProgramPlan plan_;
  std::vector<std::string> hash_of_step_;  // "" for steps the compile did not leave untuned
  TuneBudget budget_;
  double share_, total_seconds_, trial_seconds_;
  KernelCache *cache_;
  std::unique_ptr<BinaryStore> binaries_;
  std::shared_ptr<OnlineTunerHooks> hooks_;
  std::unique_ptr<compiler::tune::KernelBench> bench_;

  std::vector<Group> queue_;                    // hottest last
  std::vector<std::unique_ptr<Trial>> trials_;  // being tried in the runs, side by side
  std::vector<std::unique_ptr<CompiledKernels>> swapped_in_;  // what swapped kernels launch
  bool profiling_ = false, profiled_ = false;
  double plain_seconds_ = 0;  // the last run the tuner did not touch
  double search_seconds_ = 0;
  int search_trials_ = 0;
  OnlineReport report_;
};

}  // namespace tessera
