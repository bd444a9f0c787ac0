// The profile of a run, step by step (`tessera run --profile`): which kernels, host steps,
// transfers and fills ran, and how long each took in the program's own context.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tessera {

/// What a profiled step of a run was. Fills (zeroing outputs and temporaries) are listed apart from
/// kernels so that a kernel's time is its own.
enum class StepKind { Kernel, Host, Transfer, Fill };

inline const char *step_kind_name(StepKind kind) {
  switch (kind) {
    case StepKind::Kernel: return "kernel";
    case StepKind::Host: return "host";
    case StepKind::Transfer: return "transfer";
    case StepKind::Fill: return "fill";
  }
  return "?";
}

/// The steps of one run in the order they ran, each timed to its end: on a GPU device each step is
/// waited for, so a profiled run is slower than an unprofiled one by that synchronization.
struct RunProfile {
  struct Step {
    std::string name;  // the kernel, the host statement, or the buffer moved or filled
    StepKind kind = StepKind::Kernel;
    double seconds = 0;
  };
  std::vector<Step> steps;
};

/// Times the steps of a run into a RunProfile while profiling is on; off, a step costs one branch.
class StepTimer {
 public:
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }
  /// Forgets the last profiled run's steps; called at the start of each run. Unprofiled runs leave
  /// the timer untouched, so that they may run at once.
  void restart() {
    if (enabled_) profile_.steps.clear();
  }
  /// Runs `step`, recording its time as one step of the profile when profiling.
  template <class F>
  void time(StepKind kind, const std::string &name, F &&step) {
    if (!enabled_) {
      step();
      return;
    }
    auto start = std::chrono::steady_clock::now();
    step();
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    profile_.steps.push_back({name, kind, took.count()});
  }
  /// Records a step timed elsewhere (a kernel on the device's own clock) when profiling.
  void record(StepKind kind, const std::string &name, double seconds) {
    if (enabled_) profile_.steps.push_back({name, kind, seconds});
  }
  const RunProfile &profile() const { return profile_; }

 private:
  bool enabled_ = false;
  RunProfile profile_;
};

}  // namespace tessera
