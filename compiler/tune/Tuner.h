// Autotuning one kernel: candidate schedules from the search space, ranked by the cost model, are
// timed on the device through a KernelBench; each candidate's output is checked against the
// untuned kernel's before it can win; the fastest correct one is kept.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "compiler/IR.h"
#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"

namespace tessera::compiler::tune {

/// What a device reports for one timed kernel.
struct Measurement {
  std::vector<double> seconds;  // each timed run
  std::vector<std::vector<std::byte>>
      outputs;  // after the last run, one per output param, param order
};

/// Runs finished loop IR kernels on a device for the tuner (runtime/KernelBench.h implements it for
/// every device).
class KernelBench {
 public:
  virtual ~KernelBench() = default;
  /// Builds `kernel` (throws tile::Error, with the driver's log where there is one, when it does
  /// not build), then runs it `warmup` times and `runs` timed times and waits for each. `inputs`
  /// holds the bytes of every non-output param in param order; outputs are zeroed before every run.
  virtual Measurement measure(const Kernel &kernel,
                              const std::vector<std::vector<std::byte>> &inputs, int warmup,
                              int runs) = 0;
};

/// Limits of one kernel's tuning.
struct Budget {
  int max_trials = 8;        // candidates timed, the untuned kernel included
  double max_seconds = 2.0;  // wall time spent on this kernel
};

struct Trial {
  Schedule schedule;
  enum class Outcome { Ok, BuildFailed, Wrong } outcome = Outcome::Ok;
  double seconds = 0;  // the fastest of the timed runs (Ok only)
  std::string error;   // BuildFailed: the error; Wrong: where it differs
};

struct TuneResult {
  Schedule best;
  double best_seconds = 0;
  double untuned_seconds = 0;
  std::vector<Trial> trials;  // in the order timed; trials[0] is the untuned (cost model) schedule
};

/// Called after every trial (the CLI's progress bar).
using TrialCallback = std::function<void(const Trial &, const TuneResult &so_far)>;

/// Tunes the kernel of `nest` on `bench`. `untuned` is the kernel under the cost model's schedule
/// `model`, finished for `target` (compiler/Finish.h) as every candidate is: timed first, its
/// output is the reference every other candidate must match; candidates keep its name and
/// parameters. A winner other than `model` is timed again against it, in alternation, and kept only
/// when it is still at least 3% faster (TuneResult then holds those times). Throws tile::Error when
/// the untuned kernel fails to build or run.
TuneResult tune_kernel(const ContractionNest &nest, const Kernel &untuned, const Schedule &model,
                       const Target &target, KernelBench &bench, const Budget &budget,
                       const TrialCallback &on_trial = {});

/// "" when the outputs of `got` equal those of `ref` (both of kernel `k`) within the dtype's
/// tolerance, else where they first differ.
std::string output_difference(const Kernel &k, const Measurement &ref, const Measurement &got);

/// Floating-point operations of one run of `nest` (2 per multiply-accumulate point, 1 per
/// other point), for GFLOP/s in reports.
double nest_flops(const ContractionNest &nest);

}  // namespace tessera::compiler::tune
