// `tessera run PROG.tile`: binds a Tile program to .npy (or random) inputs, compiles it for a
// device, runs it and writes each output to DIR/NAME.npy. Everything is computed before any file is
// written, and the files are published together (FileBatch), so a failing run writes nothing.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backends/Registry.h"
#include "frontends/cli/Commands.h"
#include "frontends/cli/ConstantInputs.h"
#include "frontends/cli/InputSpec.h"
#include "frontends/cli/RandomInput.h"
#include "frontends/cli/TuneProgress.h"
#include "runtime/CompileOptions.h"
#include "runtime/FileBatch.h"
#include "runtime/Npy.h"
#include "tile/Bind.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera::cli {

namespace {

struct RunOptions {
  std::string program;
  std::string device;
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::string out_dir;
  std::string stats;
  std::string profile;
  std::string spec;
  std::optional<uint64_t> seed;
  int repeat = 1;
  ConstantNames constants;  // inputs compiled as constants
};

/// What `--stats` writes: the compile and the runs.
struct RunStats {
  int kernels = 0;
  int constants_folded = 0, epilogues_folded = 0, constant_panels = 0;
  int cache_hits = 0;
  int cache_misses = 0;
  int tuning_trials = 0;
  double tune_seconds = 0;
  double compile_seconds = 0;
  double run_seconds = 0;
};

[[noreturn]] void fail(const std::string &message) {
  throw tile::Error("tessera: error: " + message);
}

std::string input_names(const tile::Program &program) {
  std::string names;
  for (const auto &in : program.inputs) names += (names.empty() ? "" : ", ") + in.name;
  return names.empty() ? "none" : names;
}

/// The input tensors: --in files first, then random data for the spec's other inputs (refused
/// before allocating when the device cannot hold them). Inputs that nothing provides are left out;
/// bind() reports them with their location in the program.
TensorMap load_inputs(const RunOptions &options, const tile::Program &program,
                      const DeviceInfo &device) {
  std::optional<std::map<std::string, tile::TensorType>> spec;
  if (!options.spec.empty()) {
    spec = read_spec(options.spec);
    for (const auto &[name, type] : *spec)
      if (!program.find_input(name))
        throw tile::Error(options.spec + ": error: '" + name + "' is not an input of " +
                          options.program + " (its inputs: " + input_names(program) + ")");
  }

  TensorMap inputs;
  for (const auto &argument : options.inputs) {
    InputFile file = parse_input_file(argument);
    if (!program.find_input(file.name))
      fail("--in names '" + file.name + "', which is not an input of " + options.program +
           " (its inputs: " + input_names(program) + ")");
    if (inputs.count(file.name)) fail("--in names '" + file.name + "' twice");
    HostTensor tensor = read_npy(file.path);
    if (spec && spec->count(file.name) && spec->at(file.name) != tensor.type())
      throw tile::Error(file.path + ": error: holds " + tensor.type().str() + " but " +
                        options.spec + " says input '" + file.name + "' is " +
                        spec->at(file.name).str());
    inputs.emplace(file.name, std::move(tensor));
  }
  if (!spec) return inputs;

  for (const auto &in : program.inputs) {
    auto type = spec->find(in.name);
    if (inputs.count(in.name) || type == spec->end()) continue;
    if (!options.seed)
      fail("no data for input '" + in.name + "': pass --in " + in.name +
           "=FILE.npy, or --random SEED to fill it with random values");
    int64_t bytes = tile::tensor_bytes(in.name, type->second);
    if (device.max_tensor_bytes > 0 && bytes > device.max_tensor_bytes)
      throw tile::Error(
          options.spec + ": error: " +
          tile::too_large_message(in.name, type->second, device.name, device.max_tensor_bytes));
    HostTensor tensor(type->second);
    fill_random(tensor, *options.seed, in.name);
    inputs.emplace(in.name, std::move(tensor));
  }
  return inputs;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string summary(const HostTensor &tensor) {
  double sum = 0;
  for (int64_t i = 0; i < tensor.elements(); ++i) sum += tensor.get_double(i);
  char text[64];
  std::snprintf(text, sizeof text, "sum=%.6e", sum);
  return tensor.type().str() + " " + text;
}

/// Tuning between the runs (TESSERA_TUNE=online): every kernel tuned, and the swaps by run.
nlohmann::json online_json(const OnlineReport &r) {
  nlohmann::json kernels = nlohmann::json::array(), swaps = nlohmann::json::array();
  for (const auto &k : r.kernels) {
    kernels.push_back({{"kernel", k.name},
                       {"hash", k.hash},
                       {"steps", k.steps},
                       {"trials", k.trials},
                       {"tune_seconds", k.tune_seconds},
                       {"seconds_before", k.seconds_before},
                       {"seconds_after", k.seconds_after},
                       {"outcome", k.outcome},
                       {"first_run", k.first_run},
                       {"schedule", k.schedule}});
    if (k.outcome == "swapped")
      swaps.push_back({{"run", k.first_run}, {"kernel", k.name}, {"hash", k.hash}});
  }
  return {{"runs", r.runs},     {"run_seconds", r.run_seconds}, {"tune_seconds", r.tune_seconds},
          {"trials", r.trials}, {"kernels", kernels},           {"swaps", swaps}};
}

nlohmann::json stats_json(const RunStats &stats, const OnlineReport &online,
                          const std::string &device) {
  return {{"kernels", stats.kernels},
          {"constants_folded", stats.constants_folded},
          {"epilogues_folded", stats.epilogues_folded},
          {"constant_panels", stats.constant_panels},
          {"cache_hits", stats.cache_hits},
          {"cache_misses", stats.cache_misses},
          {"tuning_trials", stats.tuning_trials},
          {"tune_seconds", stats.tune_seconds},
          {"compile_seconds", stats.compile_seconds},
          {"run_seconds", stats.run_seconds},
          {"device", device},
          {"online", online_json(online)}};
}

/// One named step of the profile: its calls per run and its median time per run over the runs.
struct ProfiledStep {
  std::string name;
  StepKind kind = StepKind::Kernel;
  int calls = 0;
  std::vector<double> seconds;  // per run
};

/// The runs' profiles as one entry per (kind, name) in the order of first use; a step that ran
/// several times in one run (a buffer transferred twice) adds up.
std::vector<ProfiledStep> merge_profiles(const std::vector<RunProfile> &runs) {
  std::vector<ProfiledStep> steps;
  std::map<std::pair<StepKind, std::string>, size_t> index;
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const auto &s : runs[r].steps) {
      auto [it, inserted] = index.try_emplace({s.kind, s.name}, steps.size());
      if (inserted) steps.push_back({s.name, s.kind, 0, std::vector<double>(runs.size(), 0.0)});
      ProfiledStep &step = steps[it->second];
      step.seconds[r] += s.seconds;
      if (r == 0) ++step.calls;
    }
  }
  return steps;
}

/// The profile file: per step its kind, calls per run, median and fastest seconds per run. A kernel
/// adds its floating-point operations (2 per multiply-add of a contraction; what
/// bench/compare/layers.py matches other engines' layers by), where its schedule came from and,
/// when the cache was asked, the cache's hash of it (kernels that repeat in a program share one,
/// and `tessera tune` names them after the first) and its times measured alone when it was tuned,
/// to hold against its time in the program: the tuner keeps a kernel's fastest run, so the fastest
/// run in the program is the fair comparison.
nlohmann::json profile_json(const std::vector<ProfiledStep> &steps, const CompileReport &report,
                            double run_seconds, int runs, const std::string &device) {
  std::map<std::string, const KernelReport *> reported;
  for (const auto &k : report.kernels) reported[k.name] = &k;
  nlohmann::json entries = nlohmann::json::array();
  double total = 0;
  for (const auto &s : steps) {
    nlohmann::json e = {{"name", s.name},
                        {"kind", step_kind_name(s.kind)},
                        {"calls", s.calls},
                        {"seconds", median(s.seconds)},
                        {"min_seconds", *std::min_element(s.seconds.begin(), s.seconds.end())}};
    if (auto it = reported.find(s.name); s.kind == StepKind::Kernel && it != reported.end()) {
      const KernelReport &k = *it->second;
      e["origin"] = k.origin;
      if (!k.hash.empty()) e["hash"] = k.hash;
      if (k.seconds > 0) e["alone_seconds"] = k.seconds;
      if (k.untuned_seconds > 0) e["alone_untuned_seconds"] = k.untuned_seconds;
      if (k.flops > 0) e["flops"] = k.flops;
    }
    total += median(s.seconds);
    entries.push_back(std::move(e));
  }
  return {{"device", device},
          {"runs", runs},
          {"run_seconds", run_seconds},
          {"steps_seconds", total},
          {"steps", std::move(entries)}};
}

/// One line for stderr: where the profiled run's time went, by kind of step.
std::string profile_summary(const std::vector<ProfiledStep> &steps, double run_seconds) {
  std::map<StepKind, double> by_kind;
  std::map<StepKind, int> count;
  for (const auto &s : steps) {
    by_kind[s.kind] += median(s.seconds);
    ++count[s.kind];
  }
  char text[160];
  std::snprintf(text, sizeof text, "profile: run %.4f s: %d kernels %.4f s", run_seconds,
                count[StepKind::Kernel], by_kind[StepKind::Kernel]);
  std::string line = text;
  for (StepKind kind : {StepKind::Host, StepKind::Transfer, StepKind::Fill}) {
    if (!count[kind]) continue;
    std::snprintf(text, sizeof text, ", %s %.4f s", step_kind_name(kind), by_kind[kind]);
    line += text;
  }
  return line;
}

void run(const RunOptions &options) {
  tile::Program program = tile::parse_program(tile::read_source_file(options.program));
  DeviceRegistry registry = builtin_devices();
  std::string device_name = options.device.empty() ? registry.default_name() : options.device;
  std::unique_ptr<Device> device = registry.create(device_name);

  TensorMap inputs = load_inputs(options, program, device->info());
  std::map<std::string, tile::TensorType> types;
  for (const auto &[name, tensor] : inputs) types.emplace(name, tensor.type());
  tile::BoundProgram bound = tile::bind(program, types);

  RunStats stats;
  auto start = std::chrono::steady_clock::now();
  // Kernels tuned on first use show a progress bar on a terminal.
  TuneProgressBar progress(TuneBudget{}.max_trials, false);
  CompileOptions compile_options;
  compile_options.progress = [&](const TuneProgress &p) { progress(p); };
  compile_options.constants = take_constants(options.constants, bound, inputs);
  std::unique_ptr<Executable> executable = device->compile(bound, compile_options);
  progress.finish();
  stats.compile_seconds = seconds_since(start);
  stats.kernels = executable->kernel_count();
  const CompileReport &report = executable->report();
  stats.constants_folded = report.constants_folded;
  stats.epilogues_folded = report.epilogues_folded;
  stats.constant_panels = report.constant_panels;
  stats.cache_hits = report.cache_hits;
  stats.cache_misses = report.cache_misses;
  stats.tuning_trials = report.tuning_trials;
  stats.tune_seconds = report.tune_seconds;
  const bool profiling = !options.profile.empty();
  executable->set_profiling(profiling);
  TensorMap outputs;
  std::vector<double> times;
  std::vector<RunProfile> profiles;
  for (int i = 0; i < options.repeat; ++i) {
    start = std::chrono::steady_clock::now();
    outputs = executable->run(inputs);
    times.push_back(seconds_since(start));
    if (profiling) profiles.push_back(executable->profile());
  }
  stats.run_seconds = median(times);
  std::vector<ProfiledStep> profiled = merge_profiles(profiles);

  std::error_code ec;
  if (!options.out_dir.empty() && !std::filesystem::is_directory(options.out_dir)) {
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec) fail("cannot create directory '" + options.out_dir + "': " + ec.message());
  }
  FileBatch files;
  std::vector<std::string> lines;
  for (const auto &[name, type] : bound.outputs) {
    auto tensor = outputs.find(name);
    TESSERA_INTERNAL_ASSERT(tensor != outputs.end(), "the device returned no output " + name);
    std::string path = (std::filesystem::path(options.out_dir) / (name + ".npy")).string();
    files.add(path, encode_npy(tensor->second));
    lines.push_back(name + ": " + summary(tensor->second) + " -> " + path);
  }
  if (!options.stats.empty())
    files.add(options.stats,
              stats_json(stats, executable->tuning(), device->info().name).dump(2) + "\n");
  if (profiling)
    files.add(options.profile,
              profile_json(profiled, report, stats.run_seconds, options.repeat, device->info().name)
                      .dump(2) +
                  "\n");
  files.commit();
  for (const auto &line : lines) std::cout << line << "\n";
  if (profiling)
    std::cerr << profile_summary(profiled, stats.run_seconds) << " -> " << options.profile << "\n";
}

}  // namespace

void add_run_command(CLI::App &app) {
  auto options = std::make_shared<RunOptions>();
  CLI::App *cmd = app.add_subcommand("run", "Run a Tile program on .npy inputs");
  cmd->add_option("program", options->program, "The Tile program (PROG.tile)")->required();
  add_device_option(*cmd, options->device,
                    "Device to run on (default: $TESSERA_DEVICE or the first device)");
  cmd->add_option("--in", options->inputs, "An input from a .npy file: NAME=FILE.npy")
      ->allow_extra_args(false);
  cmd->add_option("--out-dir", options->out_dir,
                  "Directory for the outputs, NAME.npy each (default: current directory)");
  cmd->add_option("--stats", options->stats, "Write compile and run statistics to this JSON file");
  cmd->add_option(
      "--profile", options->profile,
      "Time each kernel, host step and transfer of the runs; write the medians to this JSON file");
  CLI::Option *spec =
      cmd->add_option("--spec", options->spec,
                      "Input types as JSON: {\"inputs\": {\"A\": {\"dtype\", \"shape\"}}}");
  cmd->add_option("--random", options->seed,
                  "Fill the spec's inputs that no --in names with random values from this seed")
      ->needs(spec);
  cmd->add_option("--repeat", options->repeat, "Run this many times after compiling (median time)")
      ->check(CLI::PositiveNumber);
  add_constant_options(*cmd, options->constants);
  cmd->callback([options] { run(*options); });
}

}  // namespace tessera::cli
