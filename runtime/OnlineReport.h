// What tuning an executable between its runs did (TESSERA_TUNE=online, runtime/OnlineTuner.h): the
// kernels it tuned, what each cost and gained in the program's own runs, and which kernels were
// swapped for tuned ones before which run. `tessera run --stats` and Python's Executable.tuning
// report it.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct OnlineKernel {
  std::string name;  // the first step's kernel
  std::string hash;  // the kernel cache's hash of its canonical text
  int steps = 0;     // steps of the program that run this kernel (twins share one tuning)
  int trials = 0;    // schedules timed alone, the cost model's included
  double tune_seconds = 0;
  double seconds_before = 0;  // its steps' time in a run, median, before tuning
  double seconds_after = 0;   // the same under the tuned schedule (0: none was tried in a run)
  /// "swapped": the tuned kernel runs now; "kept": it was not faster in the program's runs;
  /// "wrong": it differed from the kernel it would replace on the program's own data;
  /// "untuned": no schedule beat the cost model's when timed alone; "untuned: WHY" when the
  /// search could not decide (the budget left no time for a candidate, a build failed).
  std::string outcome;
  int first_run = 0;     // swapped: the first run (counting from 1) that ran the tuned kernel
  std::string schedule;  // what the executable runs now (Schedule::to_json())
};

struct OnlineReport {
  int runs = 0;
  double run_seconds = 0;   // every run together, tuning excluded
  double tune_seconds = 0;  // online tuning together: searching, building, checking
  int trials = 0;
  std::vector<OnlineKernel> kernels;  // in the order tuned
};

}  // namespace tessera
