// How a program is compiled: the tuning policy and budget, the kernel cache file, progress.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/CompileReport.h"
#include "runtime/HostTensor.h"

namespace tessera {

/// TESSERA_TUNE (DESIGN.md §5, docs/tuning.md): `online` compiles as `cached` does and then tunes
/// the executable's hot kernels between its runs, within a share of its run time (OnlineTuner.h);
/// `full` times every kernel the cache lacks while compiling (`tessera tune`); `cached` takes the
/// cache's schedule or the cost model's and never times; `off` uses the cost model only and opens
/// no cache file.
enum class TunePolicy { Online, Full, Cached, Off };

/// TESSERA_TUNE: online (also when unset), full, cached or off. Throws tile::Error for another
/// value.
TunePolicy tune_policy_from_env();

/// TESSERA_TUNE_SHARE: online tuning's time as a share of the time the executable has run (default
/// 0.2). Throws tile::Error for a value that is not a number >= 0.
double tune_share_from_env();

struct OnlineTunerHooks;

/// The limits of tuning one kernel.
struct TuneBudget {
  int max_trials = 6;        // schedules timed, the cost model's included
  double max_seconds = 1.0;  // wall time spent on the kernel
};

struct CompileOptions {
  std::optional<TunePolicy> policy;       // default: TESSERA_TUNE, else online
  std::optional<TuneBudget> budget;       // default: TuneBudget{}, per kernel
  std::optional<std::string> cache_path;  // default: KernelCache::default_path()
  double total_seconds = 0;               // tuning time for the whole program; 0: no limit
  bool retune = false;                    // time kernels the cache already has (full only)
  std::optional<double> online_share;     // default: TESSERA_TUNE_SHARE, else 0.2
  std::function<void(const TuneProgress &)> progress;
  /// Inputs whose values are fixed at compile time (inference weights, runtime/Constants.h): the
  /// executable keeps them on the device and its runs take the other inputs only.
  TensorMap constants;
  std::shared_ptr<OnlineTunerHooks> online_hooks;  // tests only: see OnlineTuner.h
};

}  // namespace tessera
