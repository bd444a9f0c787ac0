#include "frontends/cli/BenchRunner.h"

#include <chrono>
#include <exception>
#include <filesystem>
#include <thread>
#include <unistd.h>

#include "backends/Registry.h"
#include "tile/Bind.h"

namespace tessera::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A kernel cache file that exists only for this bench (the cold compile must find it empty).
class ScratchCache {
 public:
  ScratchCache() {
    path_ = (std::filesystem::temp_directory_path() /
             ("tessera-bench-" + std::to_string(::getpid()) + ".db"))
                .string();
    remove();
  }
  ~ScratchCache() { remove(); }
  const std::string &path() const { return path_; }

 private:
  void remove() {
    std::error_code ec;
    for (const char *suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(path_ + suffix, ec);
  }
  std::string path_;
};

/// One stream: its own executable and its own copy of the inputs that passes do not write; the
/// weights (read-only when inferring) are shared, except when training writes them in place.
struct Stream {
  std::unique_ptr<Executable> executable;
  DeviceTensorMap inputs;
  DeviceTensorMap outputs;  // training: next_W bound to W's device tensor
  std::vector<double> latencies;
};

void pass(Stream &s, const std::string &result) {
  DeviceTensorMap out = s.executable->run_on_device(s.inputs, s.outputs);
  // Reading the result back waits for the device and is part of what a user's call costs.
  out.at(result).read();
}

}  // namespace

BenchResult run_bench(const BenchProgram &program, const BenchConfig &config,
                      const std::function<void(const std::string &)> &progress) {
  DeviceRegistry registry = builtin_devices();
  std::unique_ptr<Device> device = registry.create(config.device);
  std::map<std::string, tile::TensorType> types;
  for (const auto &[name, value] : program.inputs) types.emplace(name, value.type());
  tile::BoundProgram bound = tile::bind(program.function.program, types);

  std::optional<ScratchCache> scratch;
  if (config.cache_path.empty()) scratch.emplace();
  CompileOptions options;
  options.policy = config.policy;
  options.cache_path = scratch ? scratch->path() : config.cache_path;
  // The image (X) and the labels (L) are the passes' inputs; the rest are weights.
  auto per_pass = [](const std::string &name) { return name == "X" || name == "L"; };
  if (config.constant_weights)
    for (const auto &[name, value] : program.inputs)
      if (!per_pass(name)) options.constants[name] = value;

  BenchResult r;
  progress("cold compile");
  auto start = Clock::now();
  std::unique_ptr<Executable> cold = device->compile(bound, options);
  r.cold_compile_seconds = seconds_since(start);
  r.kernels = cold->kernel_count();
  r.cold_cache_hits = cold->report().cache_hits;
  r.tuning_trials = cold->report().tuning_trials;
  cold.reset();

  progress("compile from the cache");
  std::vector<Stream> streams(config.streams);
  start = Clock::now();
  streams[0].executable = device->compile(bound, options);
  r.cached_compile_seconds = seconds_since(start);
  for (int s = 1; s < config.streams; ++s) streams[s].executable = device->compile(bound, options);

  progress("upload");
  DeviceTensorMap shared;
  for (const auto &[name, value] : program.inputs)
    if (!options.constants.count(name)) shared.emplace(name, device->upload(value));
  for (Stream &s : streams) {
    s.inputs = shared;
    // Streams infer on their own copy of the image; training (one stream) updates the weights.
    for (const auto &[name, value] : program.inputs)
      if (per_pass(name)) s.inputs[name] = device->upload(value);
    for (const auto &[output, weight] : program.updates) s.outputs[output] = shared.at(weight);
  }

  progress("warm-up");
  auto warm = Clock::now();
  for (Stream &s : streams)
    for (int i = 0; i < config.warmup; ++i) pass(s, program.result);
  while (config.warmup > 0 && seconds_since(warm) < config.warmup_seconds)
    for (Stream &s : streams) pass(s, program.result);

  progress("timed passes");
  auto run_stream = [&](Stream &s) {
    for (int i = 0; i < config.iterations; ++i) {
      auto t = Clock::now();
      pass(s, program.result);
      s.latencies.push_back(seconds_since(t));
    }
  };
  start = Clock::now();
  if (config.streams == 1) {
    run_stream(streams[0]);
  } else {
    // An error in one stream (a device failure) is rethrown here, after every thread ended.
    std::vector<std::exception_ptr> errors(streams.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < streams.size(); ++i)
      threads.emplace_back([&, i] {
        try {
          run_stream(streams[i]);
        } catch (...) {
          errors[i] = std::current_exception();
        }
      });
    for (auto &t : threads) t.join();
    for (const auto &e : errors)
      if (e) std::rethrow_exception(e);
  }
  r.wall_seconds = seconds_since(start);
  for (const Stream &s : streams)
    r.latencies.insert(r.latencies.end(), s.latencies.begin(), s.latencies.end());
  r.passes = static_cast<int>(r.latencies.size());
  return r;
}

}  // namespace tessera::cli
