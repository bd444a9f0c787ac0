// `tessera tune PROG.tile --in NAME=f32[..]... | --spec FILE.json [--device D] [--trials N]
// [--seconds S] [--total-seconds T] [--retune]`: tunes every kernel of a program on a device into
// the kernel cache, with a progress bar on a terminal (plain lines otherwise), then a table per
// kernel.
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
#include "frontends/cli/InputSpec.h"
#include "frontends/cli/TuneProgress.h"
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

void tune(const TuneOptions &o) {
  tile::Program program = tile::parse_program(tile::read_source_file(o.program));
  tile::BoundProgram bound =
      tile::bind(program, typed_inputs(program, o.program, o.spec, o.inputs));
  DeviceRegistry registry = builtin_devices();
  auto device = registry.create(o.device.empty() ? registry.default_name() : o.device);

  TuneProgressBar progress(o.trials, true);
  CompileOptions options;
  options.policy = TunePolicy::Online;
  options.budget = TuneBudget{o.trials, o.seconds};
  options.total_seconds = o.total_seconds;
  options.retune = o.retune;
  options.progress = [&](const TuneProgress &p) { progress(p); };
  auto start = Clock::now();
  auto executable = device->compile(bound, options);
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
  cmd->add_option("--device", options->device,
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
  cmd->callback([options] { tune(*options); });
}

}  // namespace tessera::cli
