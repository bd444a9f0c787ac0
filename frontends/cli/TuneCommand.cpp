// `tessera tune PROG.tile --in NAME=f32[..]... | --spec FILE.json [--device D] [--trials N]
// [--seconds S] [--total-seconds T] [--retune] [--const NAMES | --const-except NAMES]`: tunes
// every kernel of a program on a device into the kernel cache, with a progress bar on a terminal
// (plain lines otherwise), then a table per kernel. With --const the kernels are those of
// `tessera run --const` (inference with the weights compiled in: batch norm folded, weights laid
// out while compiling), compiled with random values: their keys do not depend on the values, so a
// fleet's runs with the real weights find them.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backends/Registry.h"
#include "frontends/cli/Commands.h"
#include "frontends/cli/ConstantInputs.h"
#include "frontends/cli/InputSpec.h"
#include "frontends/cli/TuneProgress.h"
#include "runtime/KernelCache.h"
#include "runtime/SharedCache.h"
#include "tile/Bind.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera::cli {

namespace {

struct TuneOptions {
  std::string program;
  std::vector<std::string> inputs;  // NAME=f32[2,3]
  std::string spec;
  std::string device;
  int trials = 12;
  double seconds = 5;
  double total_seconds = 0;
  bool retune = false;
  ConstantNames constants;
};

using Clock = std::chrono::steady_clock;

std::string format(const char *fmt, double a) {
  char text[64];
  std::snprintf(text, sizeof text, fmt, a);
  return text;
}

void print_table(const CompileReport &report) {
  std::printf("%-24s %-6s %6s %11s %11s %8s %9s  %s\n", "kernel", "from", "trials", "untuned ms",
              "tuned ms", "speed-up", "GFLOP/s", "schedule");
  for (const auto &k : report.kernels) {
    bool timed = k.seconds > 0;
    std::printf(
        "%-24s %-6s %6d %11s %11s %8s %9s  %s\n", k.name.substr(0, 24).c_str(), k.origin.c_str(),
        k.trials,
        timed && k.untuned_seconds > 0 ? format("%.3f", k.untuned_seconds * 1e3).c_str() : "-",
        timed ? format("%.3f", k.seconds * 1e3).c_str() : "-",
        timed && k.untuned_seconds > 0 ? format("%.2fx", k.untuned_seconds / k.seconds).c_str()
                                       : "-",
        timed ? format("%.1f", k.flops / k.seconds / 1e9).c_str() : "-", k.schedule.c_str());
  }
}

// Ctrl-C: each kernel's schedule is stored when its tuning ends, so the cache keeps the kernels
// tuned before the one interrupted (SQLite rolls back a store the signal cuts short). The handler
// says so in one line and exits 130, as the default action would.
struct Interruption {
  static inline std::atomic<int> kernel{0}, count{0}, tuned_before{0};
  static inline char cache[1024] = "";
  static inline bool newline = false;  // a progress bar is on the line
};

void append(char *line, size_t &n, size_t size, const char *text) {
  while (*text && n + 1 < size) line[n++] = *text++;
}

void append(char *line, size_t &n, size_t size, int value) {
  char digits[16];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + value % 10);
  while ((value /= 10) > 0 && k < 15);
  while (k > 0 && n + 1 < size) line[n++] = digits[--k];
}

void on_interrupt(int) {
  char line[1600];
  size_t n = 0;
  const size_t size = sizeof line;
  if (Interruption::newline) append(line, n, size, "\n");
  int kernel = Interruption::kernel;
  if (kernel == 0) {
    append(line, n, size, "tessera: interrupted before any kernel was tuned; kernel cache ");
    append(line, n, size, Interruption::cache);
    append(line, n, size, " is unchanged\n");
  } else {
    append(line, n, size, "tessera: interrupted while tuning kernel ");
    append(line, n, size, kernel);
    append(line, n, size, " of ");
    append(line, n, size, Interruption::count);
    append(line, n, size, "; kernel cache ");
    append(line, n, size, Interruption::cache);
    append(line, n, size, " keeps the ");
    append(line, n, size, Interruption::tuned_before);
    append(line, n, size, " kernels tuned before it\n");
  }
  ssize_t ignored = ::write(STDERR_FILENO, line, n);
  (void)ignored;
  ::_exit(130);
}

void tune(const TuneOptions &o) {
  tile::Program program = tile::parse_program(tile::read_source_file(o.program));
  tile::BoundProgram bound =
      tile::bind(program, typed_inputs(program, o.program, o.spec, o.inputs));
  DeviceRegistry registry = builtin_devices();
  auto device = registry.create(o.device.empty() ? registry.default_name() : o.device);

  TuneProgressBar progress(o.trials, true);
  CompileOptions options;
  options.policy = TunePolicy::Full;
  options.budget = TuneBudget{o.trials, o.seconds};
  options.total_seconds = o.total_seconds;
  options.retune = o.retune;
  if (o.constants.any()) options.constants = random_constants(o.constants, bound);
  // Tuning is for the cache: one that cannot be written is an error before any time is spent.
  const std::string path = cache_path(options);
  KernelCache *cache = shared_cache(path);
  if (!cache)
    throw tile::Error("error: cannot tune without the kernel cache " + path +
                      ", which cannot be opened");
  cache->check_writable();

  std::snprintf(Interruption::cache, sizeof Interruption::cache, "%s", path.c_str());
  Interruption::newline = isatty(STDERR_FILENO);
  options.progress = [&](const TuneProgress &p) {
    if (p.index != Interruption::kernel) {
      if (Interruption::kernel != 0) ++Interruption::tuned_before;
      Interruption::count = p.count;
      Interruption::kernel = p.index;
    }
    progress(p);
  };
  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  struct sigaction previous {};
  sigaction(SIGINT, &action, &previous);
  auto start = Clock::now();
  std::unique_ptr<Executable> executable;
  try {
    executable = device->compile(bound, options);
  } catch (...) {
    sigaction(SIGINT, &previous, nullptr);
    throw;
  }
  sigaction(SIGINT, &previous, nullptr);
  progress.finish();
  const CompileReport &report = executable->report();
  print_table(report);
  int tuned = 0;
  for (const auto &k : report.kernels) tuned += k.origin == "tuned";
  std::printf("%s: %zu kernels on %s: %d tuned (%d trials), %d from the cache, in %.1f s\n",
              o.program.c_str(), report.kernels.size(), device->info().name.c_str(), tuned,
              report.tuning_trials, report.cache_hits,
              std::chrono::duration<double>(Clock::now() - start).count());
}

}  // namespace

void add_tune_command(CLI::App &app) {
  auto options = std::make_shared<TuneOptions>();
  CLI::App *cmd =
      app.add_subcommand("tune", "Tune every kernel of a Tile program into the kernel cache");
  cmd->add_option("program", options->program, "The Tile program (PROG.tile)")->required();
  cmd->add_option("--in", options->inputs, "An input type: NAME=DTYPE[D0,D1,...], e.g. A=f32[2,3]");
  cmd->add_option("--spec", options->spec,
                  "Input types as JSON: {\"inputs\": {\"A\": {\"dtype\", \"shape\"}}}");
  add_device_option(*cmd, options->device,
                    "Device to tune for (default: $TESSERA_DEVICE or the first device)");
  cmd->add_option("--trials", options->trials,
                  "Schedules timed per kernel, the cost model's included (default 12)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seconds", options->seconds, "Tuning time per kernel in seconds (default 5)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--total-seconds", options->total_seconds,
                  "Tuning time for the whole program; later kernels keep the cost model's schedule")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--retune", options->retune,
                "Time kernels the cache already has (a better result replaces it)");
  add_constant_options(*cmd, options->constants);
  cmd->callback([options] { tune(*options); });
}

}  // namespace tessera::cli
