#include "runtime/Executable.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "compiler/Lower.h"
#include "compiler/tune/Tuner.h"
#include "runtime/Backend.h"
#include "runtime/BufferPlan.h"
#include "runtime/ExecutableImpl.h"
#include "runtime/InputCheck.h"
#include "runtime/OnlineTuner.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

size_t bytes_of(const tile::TensorType &t) {
  return static_cast<size_t>(t.elements()) * tile::dtype_size(t.dtype);
}

void check_type(const std::string &what, const std::string &name, const tile::TensorType &got,
                const tile::TensorType &want) {
  if (got != want)
    throw tile::Error("error: " + what + " '" + name + "' is " + got.str() +
                      " but the program was compiled for " + want.str());
}

}  // namespace

Executable::Impl::Impl(Backend &b, tile::BoundProgram p, compiler::LoweredProgram l,
                       std::unique_ptr<CompiledKernels> k, CompileReport r)
    : backend(b), program(std::move(p)), lowered(std::move(l)), kernels(std::move(k)),
      report(std::move(r)) {
  for (const auto &[name, type] : program.inputs) input_names.insert(name);
  for (const auto &[name, type] : program.outputs) output_names.insert(name);
  for (const auto &b : lowered.buffers) buffers[b.name] = &b;
  for (const auto &s : program.statements) statements[s.output] = &s;
  for (const auto &s : lowered.steps) {
    bool kernel = s.kind == compiler::Step::Kind::Kernel;
    kernel_of_step.push_back(kernel ? launches.size() : SIZE_MAX);
    if (kernel) launches.push_back({kernels.get(), launches.size()});
  }
  watched.assign(lowered.steps.size(), 0);
  step_seconds.assign(lowered.steps.size(), 0);
  plan_memory();
}

Executable::Impl::~Impl() = default;

std::vector<std::string> Executable::Impl::step_uses(const compiler::Step &s) const {
  std::vector<std::string> uses;
  if (s.kind == compiler::Step::Kind::Kernel) {
    for (const auto &p : s.kernel.params) uses.push_back(p.name);
    return uses;
  }
  const auto &st = *statements.at(s.host_statement);
  uses = statement_reads(program, st);
  uses.push_back(st.output);
  return uses;
}

// Temporaries share one arena by lifetime where the device has views into a buffer. Outputs and
// temporaries are zeroed before the step that first touches them (Tile's unwritten elements are
// 0, and reused memory holds an earlier tensor), unless that step's kernel stores every element.
void Executable::Impl::plan_memory() {
  std::map<std::string, PlannedTemp> temps;
  std::set<std::string> seen, whole = compiler::written_whole_first(lowered);
  zero_before.assign(lowered.steps.size(), {});
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    for (const auto &name : step_uses(lowered.steps[i])) {
      auto it = buffers.find(name);
      if (it == buffers.end() || input_names.count(name)) continue;
      if (seen.insert(name).second && !whole.count(name)) zero_before[i].push_back(name);
      if (it->second->role != compiler::BufferInfo::Role::Temp) continue;
      auto [t, inserted] = temps.try_emplace(name);
      if (inserted) t->second = {name, static_cast<int64_t>(bytes_of(program.type_of(name))), i, i};
      t->second.last_step = i;
    }
  }
  for (const auto &[name, type] : program.outputs)
    if (!seen.count(name) && !input_names.count(name)) zero_at_start.push_back(name);

  std::vector<PlannedTemp> list;
  for (auto &[n, t] : temps) list.push_back(t);
  BufferPlan plan = plan_buffers(list, std::max<size_t>(64, backend.view_alignment()));
  // One arena unless it is larger than the device allows one buffer to be.
  const int64_t limit = backend.info().max_tensor_bytes;
  if (!list.empty() && (limit <= 0 || plan.arena_bytes <= limit))
    arena = backend.allocate(std::max<int64_t>(plan.arena_bytes, 1));
  for (const auto &t : list) {
    std::shared_ptr<DeviceBuffer> b =
        arena ? backend.view(arena, plan.offset.at(t.name), std::max<int64_t>(t.bytes, 1))
              : nullptr;
    if (!b) b = backend.allocate(std::max<int64_t>(t.bytes, 1));
    temp_buffers[t.name] = std::move(b);
  }
  // All ones (NaN, -1) rather than zeros: a kernel that claims to overwrite a buffer whole but
  // does not shows on the first run, not only after memory is reused.
  std::lock_guard<std::recursive_mutex> lock(backend.mutex());
  if (arena) backend.fill(*arena, 0xff);
  for (const auto &[name, b] : temp_buffers)
    if (b->bytes() > 0 && !arena) backend.fill(*b, 0xff);
  backend.finish();
}

std::shared_ptr<DeviceBuffer> Executable::Impl::fresh(const tile::TensorType &type) {
  auto b = backend.allocate(std::max<size_t>(bytes_of(type), 1));
  backend.fill(*b, 0xff);
  return b;
}

// An output's own buffer, reused run after run unless the caller still holds the tensor an
// earlier run returned in it.
std::shared_ptr<DeviceBuffer> Executable::Impl::own_output(const std::string &name) {
  auto &b = own_outputs[name];
  if (!b || b.use_count() > 1) b = fresh(program.type_of(name));
  return b;
}

void Executable::Impl::check_device_inputs(const DeviceTensorMap &inputs) const {
  for (const auto &[name, t] : inputs)
    if (!t.defined()) throw tile::Error("error: input '" + name + "' is an empty device tensor");
  check_inputs(program, inputs, constant_names);
  for (const auto &[name, type] : program.inputs)
    if (!constant_names.count(name) && &inputs.at(name).buffer()->backend() != &backend)
      throw tile::Error("error: input '" + name + "' lives on " + inputs.at(name).device() +
                        ", not on " + backend.info().name);
}

void Executable::Impl::set_constants(const TensorMap &values, const TensorMap &given) {
  for (const auto &[name, value] : given) constant_names.insert(name);
  for (const auto &[name, value] : values) {
    auto buffer = backend.allocate(std::max<size_t>(value.bytes(), 1));
    if (value.bytes() > 0) backend.write(*buffer, value.data(), value.bytes());
    constants[name] = DeviceTensor(value.type(), buffer);
    constant_names.insert(name);
  }
  for (const auto &step : lowered.steps)
    for (const auto &panel : step.panels) {
      if (panels.count(panel.name)) continue;
      const HostTensor &source = values.at(panel.source);
      auto bytes = compiler::fill_constant_panel(panel, source.data(), source.bytes(),
                                                 tile::dtype_size(panel.dtype));
      auto buffer = backend.allocate(std::max<size_t>(bytes.size(), 1));
      if (!bytes.empty()) backend.write(*buffer, bytes.data(), bytes.size());
      panels[panel.name] = std::move(buffer);
    }
  report.constant_panels = static_cast<int>(panels.size());
  where_stale = true;
}

DeviceTensorMap Executable::Impl::run_locked(const DeviceTensorMap &given,
                                             const DeviceTensorMap &outputs, bool wait) {
  check_device_inputs(given);
  for (const auto &[name, t] : outputs)
    if (!output_names.count(name))
      throw tile::Error("error: '" + name + "' is not an output of the program");

  refresh_where();
  std::set<uint64_t> input_ids;  // the run's inputs' buffers; constant_ids hold the rest
  for (const auto &[name, type] : program.inputs) {
    if (constant_names.count(name)) continue;
    DeviceBuffer *b = given.at(name).buffer().get();
    where[name] = b;
    input_ids.insert(b->id());
  }
  auto input = [&](const std::string &name) -> const DeviceTensor & {
    auto c = constants.find(name);
    return c != constants.end() ? c->second : given.at(name);
  };
  DeviceTensorMap result;
  // Outputs bound to a tensor that is also an input are computed in the executable's own buffer
  // and copied after the last step, when nothing reads the input any more.
  std::vector<std::pair<std::shared_ptr<DeviceBuffer>, DeviceTensor>> copy_after;
  std::set<uint64_t> bound_ids;
  for (const auto &[name, type] : program.outputs) {
    auto bound = outputs.find(name);
    if (bound != outputs.end()) {
      const DeviceTensor &t = bound->second;
      if (!t.defined())
        throw tile::Error("error: output '" + name + "' is bound to an empty device tensor");
      check_type("output", name, t.type(), type);
      if (&t.buffer()->backend() != &backend)
        throw tile::Error("error: output '" + name + "' is bound to a tensor on " + t.device() +
                          ", not on " + backend.info().name);
      if (!bound_ids.insert(t.buffer()->id()).second)
        throw tile::Error("error: output '" + name +
                          "' is bound to a tensor another output is bound to");
      result[name] = t;
    }
    if (input_names.count(name)) {  // an input passed through
      if (bound != outputs.end())
        copy_after.emplace_back(input(name).buffer(), bound->second);
      else
        result[name] = input(name);
      continue;
    }
    if (bound == outputs.end()) {
      auto own = own_output(name);
      where[name] = own.get();
      result[name] = DeviceTensor(type, own);
    } else if (uint64_t id = bound->second.buffer()->id();
               input_ids.count(id) || constant_ids.count(id)) {
      auto own = own_output(name);
      where[name] = own.get();
      copy_after.emplace_back(own, bound->second);
    } else {
      where[name] = bound->second.buffer().get();
    }
  }

  run_steps();
  for (const auto &[from, to] : copy_after)
    timer.time(StepKind::Transfer, "copy to bound output",
               [&] { backend.copy(*from, *to.buffer(), to.bytes()); });
  if (wait) backend.finish();
  return result;
}

void Executable::Impl::refresh_where() {
  if (!where_stale) return;
  where.clear();
  constant_ids.clear();
  for (const auto &[name, type] : program.inputs) where[name] = nullptr;
  for (const auto &[name, type] : program.outputs) where[name] = nullptr;
  for (const auto &[name, t] : constants) {
    where[name] = t.buffer().get();
    constant_ids.insert(t.buffer()->id());
  }
  for (const auto &[name, b] : temp_buffers) where[name] = b.get();
  for (const auto &[name, b] : panels) where[name] = b.get();
  step_args.assign(lowered.steps.size(), {});
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    if (lowered.steps[i].kind != compiler::Step::Kind::Kernel) continue;
    for (const auto &p : lowered.steps[i].kernel.params) {
      auto it = where.find(p.name);
      TESSERA_INTERNAL_ASSERT(it != where.end(), "a step uses unknown buffer " + p.name);
      step_args[i].push_back(&it->second);
    }
  }
  where_stale = false;
}

void Executable::Impl::run_steps() {
  auto at = [&](const std::string &name) {
    auto it = where.find(name);
    TESSERA_INTERNAL_ASSERT(it != where.end(), "a step uses unknown buffer " + name);
    return it->second;
  };
  // A profiled step is waited for, so that its time is its own and not the queue's before it.
  auto timed = [&](StepKind kind, const std::string &name, auto &&work) {
    timer.time(kind, name, [&] {
      work();
      if (timer.enabled()) backend.finish();
    });
  };
  for (const auto &name : zero_at_start)
    timed(StepKind::Fill, name, [&] { backend.fill(*at(name), 0); });
  std::vector<DeviceBuffer *> args;
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    for (const auto &name : zero_before[i])
      timed(StepKind::Fill, name, [&] { backend.fill(*at(name), 0); });
    const auto &step = lowered.steps[i];
    if (step.kind == compiler::Step::Kind::Host) {
      run_host_step(step.host_statement);
      continue;
    }
    args.clear();
    for (DeviceBuffer **b : step_args[i]) args.push_back(*b);
    const Launch &launch = launches[kernel_of_step[i]];
    if (auto check = checks.find(i); check != checks.end()) {
      timed(StepKind::Kernel, step.kernel.name, [&] { launch_checked(i, check->second, args); });
    } else if (watched[i] || timer.enabled()) {
      // Timed alone: what ran before it finishes first, then the device's clock times it where
      // it has one (a GPU's submit and wait cost more than a small kernel: 0.06 ms on Vulkan).
      double seconds = time_enqueued(backend, [&] { launch.kernels->launch(launch.index, args); });
      if (watched[i]) step_seconds[i] = seconds;
      timer.record(StepKind::Kernel, step.kernel.name, seconds);
    } else {
      launch.kernels->launch(launch.index, args);
    }
  }
}

// The kernel it replaces runs first on the step's data and its outputs are read back; the outputs
// are restored to what they held before either ran (a step may add to what earlier steps wrote),
// the new kernel runs and its outputs are compared. When they differ, the replaced kernel runs
// again, so that the run's results are its.
void Executable::Impl::launch_checked(size_t step, Check &check,
                                      const std::vector<DeviceBuffer *> &args) {
  const compiler::Kernel &kernel = lowered.steps[step].kernel;
  const Launch &launch = launches[kernel_of_step[step]];
  std::vector<DeviceBuffer *> old_args;
  for (const auto &p : check.replaced_step.kernel.params) old_args.push_back(where.at(p.name));
  std::vector<std::pair<DeviceBuffer *, std::shared_ptr<DeviceBuffer>>> saved;
  std::vector<size_t> sizes;
  for (size_t a = 0; a < kernel.params.size(); ++a) {
    const auto &p = kernel.params[a];
    if (!p.is_output) continue;
    size_t bytes = static_cast<size_t>(p.elements) * tile::dtype_size(p.dtype);
    auto copy = backend.allocate(std::max<size_t>(bytes, 1));
    if (bytes > 0) backend.copy(*args[a], *copy, bytes);
    saved.emplace_back(args[a], copy);
    sizes.push_back(bytes);
  }
  auto outputs = [&] {
    compiler::tune::Measurement m;
    for (size_t o = 0; o < saved.size(); ++o) {
      m.outputs.emplace_back(sizes[o]);
      if (sizes[o] > 0) backend.read(*saved[o].first, m.outputs.back().data(), sizes[o]);
    }
    return m;
  };
  auto restore = [&] {
    for (size_t o = 0; o < saved.size(); ++o)
      if (sizes[o] > 0) backend.copy(*saved[o].second, *saved[o].first, sizes[o]);
  };
  check.replaced.kernels->launch(check.replaced.index, old_args);
  compiler::tune::Measurement reference = outputs();
  restore();
  launch.kernels->launch(launch.index, args);
  check.difference = compiler::tune::output_difference(kernel, reference, outputs());
  if (check.difference.empty()) return;
  restore();
  check.replaced.kernels->launch(check.replaced.index, old_args);
  backend.finish();
}

// A statement the compiler left to the host: the reference interpreter evaluates it on the tensors
// it reads, read back from the device; its result is written to its buffer.
void Executable::Impl::run_host_step(const std::string &name) {
  const auto &st = *statements.at(name);
  TensorMap env;
  for (const auto &r : statement_reads(program, st)) {
    if (env.count(r)) continue;
    HostTensor t = HostTensor::uninitialized(program.type_of(r));
    if (t.bytes() > 0)
      timer.time(StepKind::Transfer, r, [&] { backend.read(*where.at(r), t.data(), t.bytes()); });
    env[r] = std::move(t);
  }
  HostTensor v;
  timer.time(StepKind::Host, name, [&] { v = evaluate_statement(program, st, env); });
  TESSERA_INTERNAL_ASSERT(v.type() == st.type,
                          "host statement " + name + " has type " + v.type().str());
  if (v.bytes() > 0)
    timer.time(StepKind::Transfer, name,
               [&] { backend.write(*where.at(name), v.data(), v.bytes()); });
}

// Host tensors in and out: used in place where the device's kernels read host memory (the CPU),
// else copied to buffers of the executable's own.
TensorMap Executable::Impl::run_host(const TensorMap &inputs) {
  check_inputs(program, inputs, constant_names);
  DeviceTensorMap on_device, bound;
  for (const auto &[name, type] : program.inputs) {
    if (constant_names.count(name)) continue;
    const HostTensor &h = inputs.at(name);
    // Kernels never write inputs, so the host's memory may be read in place.
    std::shared_ptr<DeviceBuffer> b =
        h.bytes() > 0 ? backend.wrap(const_cast<std::byte *>(h.data()), h.bytes()) : nullptr;
    if (!b) {
      auto &staged = staged_inputs[name];
      if (!staged) staged = backend.allocate(std::max<size_t>(h.bytes(), 1));
      if (h.bytes() > 0)
        timer.time(StepKind::Transfer, name, [&] {
          backend.write_async(*staged, h.data(), h.bytes());
          if (timer.enabled()) backend.finish();
        });
      b = staged;
    }
    on_device[name] = DeviceTensor(type, b);
  }
  TensorMap out;
  for (const auto &[name, type] : program.outputs) {
    if (input_names.count(name)) continue;
    HostTensor h = HostTensor::uninitialized(type);
    if (h.bytes() > 0)
      if (auto b = backend.wrap(h.data(), h.bytes())) bound[name] = DeviceTensor(type, b);
    out[name] = std::move(h);  // moving keeps the storage the wrapped buffer points at
  }
  // The inputs' writes and the steps may still be queued: the first read waits for them (one
  // round trip to the device instead of three), or the finish below where nothing is read. They
  // read the caller's memory until then, so an error waits for them too.
  DeviceTensorMap result;
  bool waited = false;
  try {
    result = run_locked(on_device, bound, /*wait=*/false);
    for (const auto &[name, type] : program.outputs) {
      if (input_names.count(name)) {
        out[name] = constant_names.count(name) ? constants.at(name).read() : inputs.at(name);
        continue;
      }
      HostTensor &h = out[name];
      if (bound.count(name) || h.bytes() == 0) continue;
      timer.time(StepKind::Transfer, name,
                 [&] { backend.read(*result.at(name).buffer(), h.data(), h.bytes()); });
      waited = true;
    }
    if (!waited) backend.finish();
  } catch (...) {
    try {
      backend.finish();
    } catch (const tile::Error &) {
      // The first error is the one to report.
    }
    throw;
  }
  return out;
}

std::string Executable::Impl::loops() const { return compiler::print_lowered(lowered); }

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

void Executable::Impl::before_run() {
  if (tuner) tuner->before_run(*this);
}

void Executable::Impl::after_run(double seconds) {
  if (tuner) tuner->after_run(*this, seconds);
}

// The tuner takes its turn after the run's results are ready, still holding the device: no other
// run of this executable sees a kernel half swapped.
TensorMap Executable::run(const TensorMap &inputs) {
  std::lock_guard<std::recursive_mutex> lock(impl_->backend.mutex());
  impl_->timer.restart();
  impl_->before_run();
  auto start = std::chrono::steady_clock::now();
  TensorMap result = impl_->run_host(inputs);
  impl_->after_run(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return result;
}

DeviceTensorMap Executable::run_on_device(const DeviceTensorMap &inputs,
                                          const DeviceTensorMap &outputs) {
  std::lock_guard<std::recursive_mutex> lock(impl_->backend.mutex());
  impl_->timer.restart();
  impl_->before_run();
  auto start = std::chrono::steady_clock::now();
  DeviceTensorMap result = impl_->run_locked(inputs, outputs);
  impl_->after_run(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return result;
}

const tile::BoundProgram &Executable::program() const { return impl_->program; }
int Executable::kernel_count() const { return static_cast<int>(impl_->lowered.steps.size()); }
const CompileReport &Executable::report() const { return impl_->report; }
std::string Executable::loops() const { return impl_->loops(); }
void Executable::set_profiling(bool on) { impl_->timer.set_enabled(on); }
const RunProfile &Executable::profile() const { return impl_->timer.profile(); }
OnlineReport Executable::tuning() const {
  std::lock_guard<std::recursive_mutex> lock(impl_->backend.mutex());
  return impl_->tuner ? impl_->tuner->report() : OnlineReport{};
}

}  // namespace tessera
