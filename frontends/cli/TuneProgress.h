// The tuning progress of `tessera tune` and `tessera run`: kernel i of n, trials, best time so far,
// elapsed time and ETA, redrawn on one line when stderr is a terminal.
#pragma once

#include <chrono>

#include "runtime/CompileReport.h"

namespace tessera::cli {

class TuneProgressBar {
 public:
  /// `plain_lines`: when stderr is not a terminal, print one line per kernel as it starts
  /// (`tessera tune`); otherwise stay silent there (`tessera run` in a script).
  TuneProgressBar(int trials_per_kernel, bool plain_lines);
  void operator()(const TuneProgress &p);
  /// Ends the redrawn line.
  void finish();

 private:
  int trials_;
  bool tty_, plain_;
  std::chrono::steady_clock::time_point start_;
  int last_ = 0;
};

}  // namespace tessera::cli
