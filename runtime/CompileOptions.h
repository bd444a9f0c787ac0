// How a program is compiled: the tuning policy and budget, the kernel cache file, progress.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "runtime/CompileReport.h"

namespace tessera {

/// TESSERA_TUNE (DESIGN.md §5): `online` tunes each kernel the cache lacks within a small budget,
/// `cached` takes the cache's schedule or the cost model's and never times, `off` uses the cost
/// model only and opens no cache file.
enum class TunePolicy { Online, Cached, Off };

/// TESSERA_TUNE: online (also when unset), cached or off. Throws tile::Error for another value.
TunePolicy tune_policy_from_env();

/// The limits of tuning one kernel.
struct TuneBudget {
  int max_trials = 6;        // schedules timed, the cost model's included
  double max_seconds = 1.0;  // wall time spent on the kernel
};

struct CompileOptions {
  std::optional<TunePolicy> policy;       // default: TESSERA_TUNE, else online
  std::optional<TuneBudget> budget;       // default: TuneBudget{} (the online budget)
  std::optional<std::string> cache_path;  // default: KernelCache::default_path()
  double total_seconds = 0;               // tuning time for the whole program; 0: no limit
  bool retune = false;                    // time kernels the cache already has (online only)
  std::function<void(const TuneProgress &)> progress;
};

}  // namespace tessera
