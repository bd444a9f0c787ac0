#include "runtime/Compile.h"

#include <chrono>
#include <optional>
#include <set>

#include "compiler/GpuCostModel.h"
#include "compiler/PadGuardedReads.h"
#include "compiler/RowReductions.h"
#include "compiler/Subsample.h"

#include "runtime/Backend.h"
#include "runtime/BinaryStore.h"
#include "runtime/Constants.h"
#include "runtime/ExecutableImpl.h"
#include "runtime/KernelCache.h"
#include "runtime/OnlineTuner.h"
#include "runtime/ScheduleSelector.h"
#include "runtime/SharedCache.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using Clock = std::chrono::steady_clock;

/// The kernel cache and its binaries for a compile; none when the policy is off.
struct CacheUse {
  KernelCache *cache = nullptr;
  std::optional<BinaryStore> binaries;

  CacheUse(Backend &backend, const CompileOptions &options) {
    TunePolicy policy = options.policy ? *options.policy : tune_policy_from_env();
    if (policy == TunePolicy::Off) return;
    cache = shared_cache(cache_path(options));
    if (cache) binaries.emplace(*cache, device_fingerprint(backend.info()));
  }
  BinaryStore *store() { return binaries ? &*binaries : nullptr; }
};

int scheduled_steps(const compiler::ProgramPlan &plan) {
  int n = 0;
  for (const auto &s : plan.steps) n += s.kind == compiler::PlannedStep::Kind::Scheduled;
  return n;
}

/// Plan, choose, apply, finish: the loop IR `backend` will run, and what choosing cost.
/// `keep_plan`, when given, receives the plan (for tuning between runs).
/// `constants`: the inputs whose values are known now; kernels read the panels of those they pack
/// from buffers filled once (compiler/ConstantPanel.h).
compiler::LoweredProgram lower_program(const tile::BoundProgram &program, Backend &backend,
                                       const CompileOptions &options, CacheUse &cache,
                                       bool may_tune, CompileReport &report,
                                       compiler::ProgramPlan *keep_plan = nullptr,
                                       const std::set<std::string> &constants = {}) {
  if (!backend.runs_kernels()) return compiler::host_program(program);
  const compiler::Target target = backend.target();
  // 1. Fusion and each kernel's loop nest, with the cost model's schedule for the target.
  compiler::ProgramPlan plan = compiler::plan_program(program, target);
  ScheduleSelector schedules(backend, options, cache.cache, scheduled_steps(plan));
  if (!may_tune) schedules.never_tune();
  compiler::LoweredProgram lowered{plan.buffers, {}};
  for (const auto &planned : plan.steps) {
    // 2. The schedule: the cache's, else the tuner's (policy online), else the cost model's.
    compiler::Schedule schedule;
    if (planned.kind == compiler::PlannedStep::Kind::Scheduled)
      schedule = schedules.choose(program, planned);
    // 3. and 4. Its loops under that schedule, finished for the target.
    lowered.steps.push_back(compiler::finished_step(program, planned, schedule, target, constants));
  }
  report = std::move(schedules.report());
  if (keep_plan) *keep_plan = std::move(plan);
  return lowered;
}

// Every tensor of the program must fit the device: refused here, before any allocation, with the
// statement that makes it.
void check_fits(const tile::BoundProgram &program, const DeviceInfo &device) {
  if (device.max_tensor_bytes <= 0) return;
  auto fits = [&](const std::string &name, const tile::TensorType &type) {
    return tile::tensor_bytes(name, type) <= device.max_tensor_bytes;
  };
  for (const auto &[name, type] : program.inputs)
    if (!fits(name, type))
      throw tile::Error("error: " +
                        tile::too_large_message(name, type, device.name, device.max_tensor_bytes));
  for (const auto &s : program.statements)
    if (!fits(s.output, s.type))
      tile::user_error(
          program.source, s.range,
          tile::too_large_message(s.output, s.type, device.name, device.max_tensor_bytes));
}

// The lanes of a wide-vector target's float32 vectors, which row reductions split by; 1 (none) on
// SIMT GPUs and lavapipe, whose reductions get a work-group each or stay scalar per invocation.
int row_lanes(const compiler::Target &target) {
  return compiler::wide_vector_target(target) || target.backend == "llvm" ? target.vector_bits / 32
                                                                          : 1;
}

// The program a device runs: the given one with its constants folded (CompileOptions::constants)
// and computing only the positions its readers read (compiler/Subsample.h). interp runs programs
// as written, constants aside: it is the reference the others are checked against.
struct DeviceProgram {
  std::optional<FoldedProgram> folded;
  tile::BoundProgram program;
  std::set<std::string> constant_inputs;  // the folded program's inputs that are constants

  DeviceProgram(const tile::BoundProgram &given, const Backend &backend,
                const CompileOptions &options) {
    if (!options.constants.empty()) folded = fold_constants(given, options.constants);
    const tile::BoundProgram &whole = folded ? folded->program : given;
    if (backend.runs_kernels()) {
      const compiler::Target target = backend.target();
      program = compiler::subsample_strided_reads(whole);
      // A texel of four floats where the device reads float32 inputs by texels (GlslSource.h).
      if (target.pad_guarded_reads)
        program = compiler::pad_guarded_reads(program, compiler::kPadMinPoints,
                                              target.grouped_read_limit > 0 ? 4 : 1);
      program = compiler::split_row_reductions(program, row_lanes(target));
    } else {
      program = whole;
    }
    if (folded)
      for (const auto &[name, value] : folded->constants) constant_inputs.insert(name);
  }
};

}  // namespace

std::unique_ptr<Executable> compile(const tile::BoundProgram &given, Backend &backend,
                                    const CompileOptions &options) {
  const auto start = Clock::now();
  DeviceProgram device_program(given, backend, options);
  const tile::BoundProgram &program = device_program.program;
  const std::optional<FoldedProgram> &folded = device_program.folded;
  check_fits(program, backend.info());
  CacheUse cache(backend, options);
  CompileReport report;
  const TunePolicy policy = options.policy ? *options.policy : tune_policy_from_env();
  const bool online = policy == TunePolicy::Online && backend.runs_kernels();
  compiler::ProgramPlan plan;
  compiler::LoweredProgram lowered =
      lower_program(program, backend, options, cache, true, report, online ? &plan : nullptr,
                    device_program.constant_inputs);
  // 5. The device builds the finished kernels; it emits code and does nothing else.
  std::vector<const compiler::Kernel *> kernels;
  for (const auto &s : lowered.steps)
    if (s.kind == compiler::Step::Kind::Kernel) kernels.push_back(&s.kernel);
  std::unique_ptr<CompiledKernels> built;
  if (!kernels.empty()) {
    std::lock_guard<std::recursive_mutex> lock(backend.mutex());
    built = backend.build(kernels, cache.store());
  }
  std::unique_ptr<OnlineTuner> tuner;
  if (online)
    tuner = std::make_unique<OnlineTuner>(backend, options, std::move(plan), report, cache.cache);
  auto impl = std::make_unique<Executable::Impl>(backend, program, std::move(lowered),
                                                 std::move(built), std::move(report));
  impl->tuner = std::move(tuner);
  if (folded) {
    impl->report.constants_folded = folded->folded_statements;
    impl->report.epilogues_folded = folded->folded_epilogues;
    impl->set_constants(folded->constants, options.constants);
  }
  impl->report.compile_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return std::make_unique<Executable>(std::move(impl));
}

compiler::LoweredProgram lower_for(const tile::BoundProgram &program, Backend &backend,
                                   const CompileOptions &options) {
  CacheUse cache(backend, options);
  CompileReport report;
  DeviceProgram device_program(program, backend, options);
  return lower_program(device_program.program, backend, options, cache, false, report, nullptr,
                       device_program.constant_inputs);
}

}  // namespace tessera
