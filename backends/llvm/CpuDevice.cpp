#include "backends/llvm/CpuDevice.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

#include "backends/interp/InterpDevice.h"
#include "backends/llvm/BufferPlan.h"
#include "backends/llvm/CpuKernelBench.h"
#include "backends/llvm/HostCaches.h"
#include "backends/llvm/Jit.h"
#include "backends/llvm/ThreadPool.h"
#include "runtime/KernelCache.h"
#include "runtime/Tuning.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace llvm_backend {

compiler::TargetInfo host_target() {
  compiler::TargetInfo t;
  t.backend = "llvm";
  t.cores = pool_threads();
  t.vector_bits = host_cpu().vector_bits;
  t.l1_bytes = host_caches().l1d_bytes;
  t.l2_bytes = host_caches().l2_bytes;
  t.has_fp16 = true;  // computed in float, stored as half
  t.has_fp64 = true;
  return t;
}

namespace {

std::vector<const compiler::Kernel *> kernels_of(const compiler::LoweredProgram &p) {
  std::vector<const compiler::Kernel *> ks;
  for (const auto &s : p.steps)
    if (s.kind == compiler::Step::Kind::Kernel)
      ks.push_back(&s.kernel);
  return ks;
}

struct AlignedFree {
  void operator()(std::byte *p) const { std::free(p); }
};

class CpuExecutable : public Executable {
 public:
  CpuExecutable(tile::BoundProgram program, compiler::LoweredProgram lowered, const llvm_backend::ObjectStore *objects)
      : program_(std::move(program)), lowered_(std::move(lowered)) {
    for (const auto &[name, type] : program_.inputs)
      input_names_.insert(name);
    for (const auto &b : lowered_.buffers)
      buffers_[b.name] = &b;
    for (const auto &s : program_.statements)
      statements_[s.output] = &s;
    jit_ = llvm_backend::JitModule::compile(kernels_of(lowered_), objects);
    plan();
  }

  int kernel_count() const override { return static_cast<int>(lowered_.steps.size()); }
  bool can_profile() const override { return true; }

  TensorMap run(const TensorMap &inputs) override {
    std::map<std::string, std::byte *> where;
    for (const auto &[name, type] : program_.inputs) {
      auto it = inputs.find(name);
      if (it == inputs.end())
        throw tile::Error("error: no value for input '" + name + "'");
      if (it->second.type() != type)
        throw tile::Error("error: input '" + name + "' is " + it->second.type().str() +
                          " but the program was compiled for " + type.str());
      // Kernels never write inputs.
      where[name] = const_cast<std::byte *>(it->second.data());
    }
    TensorMap out;
    for (const auto &[name, type] : program_.outputs) {
      if (input_names_.count(name)) {
        out[name] = inputs.at(name);
        continue;
      }
      // Zeroed below before its first step, unless that step's kernel overwrites it whole.
      out[name] = never_written_.count(name) ? HostTensor(type) : HostTensor::uninitialized(type);
      where[name] = out[name].data();
    }
    for (const auto &[name, offset] : plan_.offset)
      where[name] = arena_.get() + offset;

    timer_.restart();
    for (size_t i = 0; i < lowered_.steps.size(); ++i) {
      for (const auto &name : zero_before_[i])
        timer_.time(StepKind::Fill, name, [&] { std::memset(where.at(name), 0, bytes_of(name)); });
      const auto &step = lowered_.steps[i];
      if (step.kind == compiler::Step::Kind::Host) {
        timer_.time(StepKind::Host, step.host_statement, [&] { run_host(step.host_statement, where); });
        continue;
      }
      std::vector<void *> args;
      for (const auto &p : step.kernel.params) {
        auto it = where.find(p.name);
        TESSERA_INTERNAL_ASSERT(it != where.end(), "kernel " + step.kernel.name + " uses unknown buffer " + p.name);
        args.push_back(it->second);
      }
      timer_.time(StepKind::Kernel, step.kernel.name, [&] { fns_[i](args.data()); });
    }
    return out;
  }

 private:
  int64_t bytes_of(const std::string &name) const {
    const auto *b = buffers_.at(name);
    return b->elements * static_cast<int64_t>(tile::dtype_size(b->dtype));
  }

  std::vector<std::string> step_uses(const compiler::Step &s) const {
    std::vector<std::string> uses;
    if (s.kind == compiler::Step::Kind::Kernel) {
      for (const auto &p : s.kernel.params)
        uses.push_back(p.name);
      return uses;
    }
    const auto &st = *statements_.at(s.host_statement);
    uses = statement_reads(program_, st);
    uses.push_back(st.output);
    return uses;
  }

  // Temporaries get arena offsets by lifetime. Each temporary and output is zeroed before the step
  // that first uses it (Tile's unwritten elements are 0, and reused memory holds an earlier
  // tensor), unless that step's kernel stores every element of it.
  void plan() {
    std::map<std::string, llvm_backend::PlannedTemp> temps;
    std::set<std::string> seen, whole = compiler::written_whole_first(lowered_);
    zero_before_.assign(lowered_.steps.size(), {});
    for (size_t i = 0; i < lowered_.steps.size(); ++i) {
      const auto &s = lowered_.steps[i];
      if (s.kind == compiler::Step::Kind::Kernel)
        fns_.push_back(jit_->lookup(s.kernel.name));
      else
        fns_.push_back(nullptr);
      for (const auto &name : step_uses(s)) {
        auto it = buffers_.find(name);
        if (it == buffers_.end() || it->second->role == compiler::BufferInfo::Role::Input || input_names_.count(name))
          continue;
        if (seen.insert(name).second && !whole.count(name)) zero_before_[i].push_back(name);
        if (it->second->role != compiler::BufferInfo::Role::Temp) continue;
        auto [t, inserted] = temps.try_emplace(name);
        if (inserted) t->second = {name, bytes_of(name), i, i};
        t->second.last_step = i;
      }
    }
    for (const auto &[name, type] : program_.outputs)
      if (!seen.count(name)) never_written_.insert(name);
    std::vector<llvm_backend::PlannedTemp> list;
    for (auto &[n, t] : temps)
      list.push_back(t);
    plan_ = llvm_backend::plan_buffers(list);
    int64_t arena_bytes = std::max<int64_t>(plan_.arena_bytes, 64);
    arena_.reset(static_cast<std::byte *>(std::aligned_alloc(64, arena_bytes)));
    // All ones (NaN, -1) rather than the zero pages of a fresh allocation: a kernel that claimed to
    // overwrite a temporary whole but did not shows on the first run, not after memory is reused.
    std::memset(arena_.get(), 0xff, arena_bytes);
  }

  // A statement the compiler left to the host: evaluated by the interpreter on copies of the
  // tensors it reads, its result copied into its buffer.
  void run_host(const std::string &name, const std::map<std::string, std::byte *> &where) {
    const auto &st = *statements_.at(name);
    TensorMap env;
    for (const auto &r : statement_reads(program_, st)) {
      HostTensor t(program_.type_of(r));
      std::memcpy(t.data(), where.at(r), t.bytes());
      env[r] = std::move(t);
    }
    HostTensor v = evaluate_statement(program_, st, env);
    TESSERA_INTERNAL_ASSERT(v.type() == st.type, "host statement " + name + " has type " + v.type().str());
    std::memcpy(where.at(name), v.data(), v.bytes());
  }

  tile::BoundProgram program_;
  compiler::LoweredProgram lowered_;
  std::unique_ptr<llvm_backend::JitModule> jit_;
  std::vector<llvm_backend::KernelFn> fns_;
  std::set<std::string> input_names_;
  std::map<std::string, const compiler::BufferInfo *> buffers_;
  std::map<std::string, const tile::BoundStatement *> statements_;
  std::vector<std::vector<std::string>> zero_before_;
  std::set<std::string> never_written_;  // outputs no step uses (zeroed when created)
  llvm_backend::BufferPlan plan_;
  std::unique_ptr<std::byte, AlignedFree> arena_;
};

std::string join(const std::vector<std::string> &v, const char *sep) {
  std::string s;
  for (const auto &x : v)
    s += (s.empty() ? "" : sep) + x;
  return s;
}

/// The kernel cache's binaries as the JIT's object store (none without a cache). A cache that fails
/// to answer or to store costs a compile, never the run.
std::unique_ptr<llvm_backend::ObjectStore> object_store(ScheduleSelector &selector) {
  KernelCache *cache = selector.cache();
  if (!cache) return nullptr;
  const std::string device = selector.fingerprint();
  auto store = std::make_unique<llvm_backend::ObjectStore>();
  store->find = [cache, device](const std::string &key) -> std::optional<std::string> {
    try {
      return cache->find_binary("llvm-object", key, device, TESSERA_VERSION);
    } catch (const std::exception &) {
      return std::nullopt;
    }
  };
  store->store = [cache, device](const std::string &key, const std::string &object) {
    try {
      cache->store_binary("llvm-object", key, device, TESSERA_VERSION, object);
    } catch (const std::exception &e) {
      std::cerr << "tessera: warning: could not store object code in " << cache->path() << ": " << e.what() << "\n";
    }
  };
  return store;
}

class CpuDevice : public Device {
 public:
  DeviceInfo info() const override {
    const auto &cpu = llvm_backend::host_cpu();
    const auto &caches = llvm_backend::host_caches();
    DeviceInfo d{"cpu", "llvm", "LLVM 15 JIT for " + cpu.name + " (" + std::to_string(llvm_backend::pool_threads()) + " threads)", {}};
    d.facts["cpu"] = cpu.name;
    d.facts["features"] = join(cpu.features, ",");
    d.facts["cores"] = std::to_string(llvm_backend::pool_threads());
    d.facts["vector_bits"] = std::to_string(cpu.vector_bits);
    d.facts["l1d_bytes"] = std::to_string(caches.l1d_bytes);
    d.facts["l2_bytes"] = std::to_string(caches.l2_bytes);
    d.facts["l3_bytes"] = std::to_string(caches.l3_bytes);
    return d;
  }
  std::unique_ptr<Executable> compile(const tile::BoundProgram &program, const CompileOptions &options) override {
    CpuKernelBench bench;
    return compile_with_schedules(program, info(), llvm_backend::host_target(), &bench, options,
                                  [&](compiler::LoweredProgram lowered, ScheduleSelector &selector) {
                                    return std::make_unique<CpuExecutable>(program, std::move(lowered),
                                                                           object_store(selector).get());
                                  });
  }
  std::string source(const tile::BoundProgram &program) override {
    return emit_source(compiler::lower(program, llvm_backend::host_target()));
  }
};

}  // namespace

}  // namespace llvm_backend

std::unique_ptr<Device> make_cpu_device() { return std::make_unique<llvm_backend::CpuDevice>(); }

std::string emit_source(const compiler::LoweredProgram &program, bool optimize) {
  return llvm_backend::kernels_ir(llvm_backend::kernels_of(program), optimize);
}

}  // namespace tessera
