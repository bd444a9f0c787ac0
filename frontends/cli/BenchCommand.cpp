// `tessera bench MODEL`: a zoo model (bench/models) compiled and timed per batch size: cold and
// cached compile, latency median and p90, throughput; or written out as a Tile program with its
// weights and layer graph (`--emit-tile DIR`) for `tessera run`, `tessera tune` and bench/compare.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <optional>
#include <thread>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backends/Registry.h"
#include "bench/peak/FmaPeak.h"
#include "frontends/cli/BenchRunner.h"
#include "frontends/cli/Commands.h"
#include "runtime/FileBatch.h"
#include "runtime/Npy.h"
#include "runtime/TunePolicyNames.h"
#include "tile/Diagnostics.h"

namespace tessera::cli {

namespace {

struct BenchOptions {
  std::string model;
  std::vector<int64_t> batches{1};
  bool train = false;
  double learning_rate = 0.01;
  std::string tune;
  std::string json;
  std::string emit_dir;
  models::ModelOptions sizes;
  BenchConfig config;
};

[[noreturn]] void fail(const std::string &message) {
  throw tile::Error("tessera: error: " + message);
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  // Nearest rank: the p90 of 20 passes is the 18th fastest.
  size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

double mean(const std::vector<double> &values) {
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

/// Phases on one redrawn line when stderr is a terminal, one line each otherwise.
class ProgressLine {
 public:
  ProgressLine() : tty_(::isatty(STDERR_FILENO)) {}
  void operator()(const std::string &text) {
    if (tty_)
      std::cerr << "\r" << text << "\x1b[K" << std::flush;
    else
      std::cerr << text << "\n";
  }
  void finish() {
    if (tty_) std::cerr << "\r\x1b[K" << std::flush;
  }

 private:
  bool tty_;
};

nlohmann::json type_json(const tile::TensorType &type) {
  return {{"dtype", std::string(tile::dtype_name(type.dtype))}, {"shape", type.shape}};
}

/// DIR/MODEL.tile, .spec.json and .graph.json, DIR/X.npy (and L.npy) and DIR/weights/NAME.npy,
/// published together: a failure leaves none of them.
void emit(const BenchOptions &o, const models::Model &model, const BenchProgram &program) {
  namespace fs = std::filesystem;
  fs::path dir(o.emit_dir);
  std::error_code ec;
  fs::create_directories(dir / "weights", ec);
  if (ec) fail("cannot create directory '" + (dir / "weights").string() + "': " + ec.message());

  FileBatch files;
  files.add((dir / (o.model + ".tile")).string(), program.function.tile_text());
  nlohmann::json spec = {{"inputs", nlohmann::json::object()}};
  for (const auto &in : program.function.program.inputs)
    spec["inputs"][in.name] = type_json(program.inputs.at(in.name).type());
  files.add((dir / (o.model + ".spec.json")).string(), spec.dump(2) + "\n");
  files.add((dir / (o.model + ".graph.json")).string(), model.graph_json);
  for (const auto &[name, value] : program.inputs) {
    bool weight = name != model.input.name() && name != "L";
    fs::path path = weight ? dir / "weights" / (name + ".npy") : dir / (name + ".npy");
    files.add(path.string(), encode_npy(value));
  }
  files.commit();
  std::cout << "wrote " << o.model << ".tile (" << program.function.program.inputs.size()
            << " inputs), its spec, graph and weights to " << dir.string() << "\n";
}

struct Row {
  int64_t batch;
  double flops;
  BenchResult result;
};

/// The host CPU's measured FMA peak, for the `cpu` device's share of it (0: not measured).
nlohmann::json row_json(const Row &row, bool train, double peak) {
  const BenchResult &r = row.result;
  double median = percentile(r.latencies, 0.5);
  nlohmann::json j = {
      {"batch", row.batch},
      {"cold_compile_seconds", r.cold_compile_seconds},
      {"cached_compile_seconds", r.cached_compile_seconds},
      {"kernels", r.kernels},
      {"cold_cache_hits", r.cold_cache_hits},
      {"tuning_trials", r.tuning_trials},
      {"passes", r.passes},
      {"latency_median_ms", median * 1e3},
      {"latency_p90_ms", percentile(r.latencies, 0.9) * 1e3},
      {"mean_ms", mean(r.latencies) * 1e3},
      {"items_per_second", static_cast<double>(row.batch * r.passes) / r.wall_seconds},
      {"forward_flops", row.flops}};
  if (!train) j["gflops_per_second"] = row.flops / median * 1e-9;
  if (!train && peak > 0) j["share_of_fma_peak"] = row.flops / median / peak;
  std::vector<double> ms;
  for (double s : r.latencies) ms.push_back(s * 1e3);
  j["latencies_ms"] = ms;
  return j;
}

void print_table(const BenchOptions &o, const std::string &device, const std::vector<Row> &rows,
                 double peak) {
  std::printf("%s %s on %s, %d stream%s, %d passes each after %d warm-up\n", o.model.c_str(),
              o.train                     ? "training step"
              : o.config.constant_weights ? "inference (constant weights)"
                                          : "inference",
              device.c_str(), o.config.streams, o.config.streams == 1 ? "" : "s",
              o.config.iterations, o.config.warmup);
  std::printf("%6s %13s %15s %8s %10s %9s %9s %10s %9s %7s\n", "batch", "cold compile",
              "cached compile", "kernels", "median ms", "p90 ms", "mean ms", "items/s",
              o.train ? "" : "GFLOP/s", o.train || peak == 0 ? "" : "% peak");
  for (const Row &row : rows) {
    nlohmann::json j = row_json(row, o.train, peak);
    std::printf("%6lld %11.2f s %13.2f s %8d %10.2f %9.2f %9.2f %10.1f", (long long)row.batch,
                row.result.cold_compile_seconds, row.result.cached_compile_seconds,
                row.result.kernels, j["latency_median_ms"].get<double>(),
                j["latency_p90_ms"].get<double>(), j["mean_ms"].get<double>(),
                j["items_per_second"].get<double>());
    if (!o.train) std::printf(" %9.1f", j["gflops_per_second"].get<double>());
    if (j.contains("share_of_fma_peak"))
      std::printf(" %6.1f%%", 100 * j["share_of_fma_peak"].get<double>());
    std::printf("\n");
  }
}

/// The policy of --tune, else of TESSERA_TUNE (the default every compile takes).
TunePolicy policy_of(const std::string &name) {
  if (name.empty()) return tune_policy_from_env();
  if (auto policy = tune_policy_named(name)) return *policy;
  fail("--tune: unknown policy '" + name + "' (known: online, full, cached, off)");
}

/// The model at o.sizes; options it cannot take (an image too small for its strides) are the
/// user's error, not an internal one.
models::Model build(const BenchOptions &o) {
  try {
    return models::build_model(o.model, o.sizes);
  } catch (const EdslError &e) {
    fail(e.what());
  }
}

void bench(BenchOptions o) {
  for (int64_t b : o.batches)
    if (b < 1) fail("--batch: sizes must be positive, got " + std::to_string(b));
  if (o.train && o.config.constant_weights)
    fail("--const-weights is for inference: a training step updates its weights");
  if (o.train && o.config.streams > 1)
    fail("--train runs one stream: the steps of a training job update the same weights in turn");
  o.config.policy = policy_of(o.tune);

  if (!o.emit_dir.empty()) {
    if (o.batches.size() != 1) fail("--emit-tile writes one program: give one --batch");
    o.sizes.batch = o.batches[0];
    models::Model model = build(o);
    emit(o, model, bench_program(model, o.train, o.learning_rate, o.sizes.seed));
    return;
  }

  DeviceRegistry registry = builtin_devices();
  if (o.config.device.empty()) o.config.device = registry.default_name();
  DeviceInfo info = registry.create(o.config.device)->info();
  const std::string &device = info.name;
  ProgressLine progress;
  bench::FmaPeak peak;
  std::vector<Row> rows;
  for (int64_t batch : o.batches) {
    o.sizes.batch = batch;
    std::string prefix = o.model + " batch " + std::to_string(batch) + " on " + device + ": ";
    progress(prefix + "building the model");
    models::Model model = build(o);
    BenchProgram program = bench_program(model, o.train, o.learning_rate, o.sizes.seed);
    // On the cpu device, GFLOP/s are also shown as a share of this CPU's FMA peak, measured here
    // (once the options proved good) on as many threads as the device's pool has.
    if (device == "cpu" && peak.flops_per_second == 0) {
      progress(prefix + "measuring the CPU's FMA peak");
      peak = bench::measure_fma_peak(static_cast<int>(std::thread::hardware_concurrency()));
    }
    BenchResult r =
        run_bench(program, o.config, [&](const std::string &phase) { progress(prefix + phase); });
    rows.push_back({batch, model.flops, std::move(r)});
  }
  // Measured again after the timed passes, the better of the two: on a machine shared with other
  // work one measurement can land in a slow phase (the Intel kind once gave 220 GFLOP/s where
  // other calls gave 291-349, and BERT at 106% of that "peak").
  if (peak.flops_per_second > 0) {
    progress("measuring the CPU's FMA peak again");
    bench::FmaPeak again =
        bench::measure_fma_peak(static_cast<int>(std::thread::hardware_concurrency()));
    if (again.flops_per_second > peak.flops_per_second) peak = again;
  }
  progress.finish();
  print_table(o, device, rows, peak.flops_per_second);

  if (!o.json.empty()) {
    nlohmann::json results = nlohmann::json::array();
    for (const Row &row : rows) results.push_back(row_json(row, o.train, peak.flops_per_second));
    nlohmann::json j = {{"model", o.model},
                        {"device", device},
                        {"device_description", info.description},
                        {"train", o.train},
                        {"constant_weights", o.config.constant_weights},
                        {"streams", o.config.streams},
                        {"iterations", o.config.iterations},
                        {"warmup", o.config.warmup},
                        {"warmup_seconds", o.config.warmup_seconds},
                        {"tune", tune_policy_name(*o.config.policy)},
                        {"tessera_version", TESSERA_VERSION},
                        {"results", results}};
    if (peak.flops_per_second > 0)
      j["fma_peak"] = {{"gflops_per_second", peak.flops_per_second * 1e-9}, {"isa", peak.isa}};
    FileBatch files;
    files.add(o.json, j.dump(2) + "\n");
    files.commit();
  }
}

}  // namespace

void add_bench_command(CLI::App &app) {
  auto o = std::make_shared<BenchOptions>();
  std::string names;
  for (const auto &n : models::model_names()) names += (names.empty() ? "" : ", ") + n;
  CLI::App *cmd =
      app.add_subcommand("bench", "Compile and time a model of the zoo (" + names + ")");
  cmd->add_option("model", o->model, "The model: " + names)->required();
  cmd->add_option("--batch", o->batches, "Batch sizes, comma-separated (default 1)")
      ->delimiter(',');
  add_device_option(*cmd, o->config.device,
                    "Device to run on (default: $TESSERA_DEVICE or the first device)");
  cmd->add_flag(
      "--train", o->train,
      "Time a training step: forward, gradient, SGD update of weights kept on the device");
  cmd->add_flag("--const-weights", o->config.constant_weights,
                "Inference with the weights compiled in as constants (batch norm folded into the "
                "convolutions, as ONNX Runtime and OpenVINO do); only the image is a run's input");
  cmd->add_option("--lr", o->learning_rate, "The training step's learning rate (default 0.01)");
  cmd->add_option("--streams", o->config.streams, "Passes in flight at once, one thread each")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--iterations", o->config.iterations, "Timed passes per stream (default 20)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o->config.warmup, "Untimed passes first (default 3)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup-seconds", o->config.warmup_seconds,
                  "Warm up for at least this long too, unless --warmup is 0 (default 1: GPUs "
                  "raise their clocks under load)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", o->json, "Write the results, every pass's latency included, here");
  cmd->add_option("--emit-tile", o->emit_dir,
                  "Write the program (DIR/MODEL.tile), its spec, layer graph, weights and sample "
                  "input instead of timing it");
  cmd->add_option("--tune", o->tune,
                  "Tuning policy: online, full, cached or off (default: $TESSERA_TUNE)");
  cmd->add_option("--cache", o->config.cache_path,
                  "Kernel cache to compile with (default: an empty one, so that the first "
                  "compile is cold)");
  // Smaller variants for tests and quick looks; the models' own sizes otherwise.
  cmd->add_option("--image-size", o->sizes.image_size, "Input image size (default: the model's)");
  cmd->add_option("--seq-len", o->sizes.seq_len, "bert_base: sequence length (default 128)");
  cmd->add_option("--layers", o->sizes.layers, "bert_base: encoder layers (default 12)");
  cmd->add_option("--width-divisor", o->sizes.width_divisor,
                  "Divide every channel count and hidden size by this (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--seed", o->sizes.seed, "Seed of the weights and inputs (default 1)");
  cmd->callback([o] { bench(*o); });
}

}  // namespace tessera::cli
