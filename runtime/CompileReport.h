// What compiling a program did, per kernel and in total, and the progress of tuning it.
#pragma once

#include <string>
#include <vector>

namespace tessera {

/// Where a kernel's schedule came from, and what tuning it cost; `tessera tune` prints these.
struct KernelReport {
  std::string name;    // the statement the kernel computes
  std::string hash;    // the cache's hash of the kernel's canonical text
  std::string origin;  // "cache", "tuned", "model" (cost model, not timed)
  int trials = 0;
  double untuned_seconds = 0;  // 0 when nothing was timed
  double seconds = 0;          // the chosen schedule's time; 0 when nothing was timed
  double flops = 0;
  std::string schedule;  // Schedule::to_json()
};

struct CompileReport {
  std::vector<KernelReport> kernels;
  int cache_hits = 0;
  int cache_misses = 0;
  int tuning_trials = 0;
  double tune_seconds = 0;
  double compile_seconds = 0;  // the whole compile, tuning included
  int constants_folded = 0;    // statements evaluated at compile time (CompileOptions::constants)
  int epilogues_folded = 0;    // affine epilogues folded into constant weights
  int constant_panels = 0;     // constant operands' panels filled once (compiler/ConstantPanel.h)
};

/// Progress of tuning a program (the `tessera tune` progress bar): a trial of kernel `index` of
/// `count` just finished.
struct TuneProgress {
  int index = 0, count = 0;
  std::string kernel;
  int trials_so_far = 0;    // trials of this kernel, the one just finished included
  double best_seconds = 0;  // the fastest correct schedule's time so far
  std::string
      trial_error;  // the trial's error: failed to build, or a wrong result; "" when it ran right
};

}  // namespace tessera
