// Times one bench program on one device: a cold compile (empty kernel cache), a compile from the
// cache it filled, then passes with every input already on the device, one thread per stream.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "frontends/cli/BenchProgram.h"
#include "runtime/CompileOptions.h"

namespace tessera::cli {

struct BenchConfig {
  std::string device;
  int streams = 1;
  int iterations = 20;
  int warmup = 3;
  // Warm-up (when `warmup` > 0) also lasts this long: GPUs raise their clocks only after about a
  // second of load (an H200 ran MobileNetV2's first 16 passes at 11.7 ms, the rest at 4.1 ms).
  double warmup_seconds = 1.0;
  std::optional<TunePolicy> policy;  // unset: TESSERA_TUNE, else online
  std::string cache_path;            // the kernel cache; "" = a fresh one, deleted afterwards
  bool constant_weights = false;     // inference: every input but the image compiled as a constant
};

struct BenchResult {
  double cold_compile_seconds = 0;
  double cached_compile_seconds = 0;
  int kernels = 0;
  int cold_cache_hits = 0;  // > 0 only when --cache names a cache that had them
  int tuning_trials = 0;
  std::vector<double> latencies;  // seconds per pass, every stream's passes
  double wall_seconds = 0;        // the timed passes of all streams, start to end
  int passes = 0;
};

/// `progress` gets a short line for each phase ("cold compile", "warm-up", ...).
BenchResult run_bench(const BenchProgram &program, const BenchConfig &config,
                      const std::function<void(const std::string &)> &progress);

}  // namespace tessera::cli
