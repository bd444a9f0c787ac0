#include "backends/opencl/OpenCLDevice.h"

#include <CL/cl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "backends/clike/ProgramRun.h"
#include "backends/opencl/ClContext.h"
#include "backends/opencl/OpenCLKernelBench.h"
#include "backends/opencl/OpenCLSource.h"
#include "compiler/Lower.h"
#include "runtime/KernelCache.h"
#include "runtime/Tuning.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using opencl::ClDevice;
using opencl::all_devices;
using opencl::binary_cache;
using opencl::check;
using opencl::device_at;
using opencl::enqueue;
using opencl::program_for;
using opencl::target_of;

std::string launch_text(const clike::GpuLaunch &l) {
  auto g = l.global();
  auto dims = [&](const std::array<int64_t, 3> &a) {
    std::string s;
    for (int i = 0; i < std::max(1, l.dims); ++i) s += (i ? "x" : "") + std::to_string(a[i]);
    return s;
  };
  return "global " + dims(g) + (l.driver_local ? "" : ", local " + dims(l.local));
}

class OpenCLExecutable : public Executable {
 public:
  OpenCLExecutable(ClDevice &d, tile::BoundProgram program, compiler::LoweredProgram lowered, KernelCache *cache,
                   const std::string &fingerprint)
      : d_(d), program_(std::move(program)), lowered_(std::move(lowered)),
        written_whole_(compiler::written_whole_first(lowered_)) {
    cl_int err = CL_SUCCESS;
    for (const auto &b : lowered_.buffers) {
      size_t bytes = std::max<size_t>(8, b.elements * tile::dtype_size(b.dtype));
      cl_mem m = clCreateBuffer(d_.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
      check(err, d_.name() + ": clCreateBuffer of " + std::to_string(bytes) + " bytes for " + b.name);
      mems_[b.name] = {m, bytes, b.role};
      // All ones (NaN, -1) in a buffer never zero-filled: a kernel that claimed to overwrite it
      // whole but did not shows on the first run rather than as a stale earlier result.
      if (written_whole_.count(b.name)) {
        cl_uchar ones = 0xff;
        check(clEnqueueFillBuffer(d_.queue, m, &ones, 1, 0, bytes, 0, nullptr, nullptr), d_.name() + ": clEnqueueFillBuffer");
      }
    }
    for (const auto &step : lowered_.steps) {
      Launch l;
      if (step.kind == compiler::Step::Kind::Kernel) {
        opencl::KernelSource src = opencl::kernel_source(step.kernel);
        for (const auto &p : step.kernel.params)
          if (p.dtype == tile::DType::Float64 && !d_.fp64)
            throw tile::Error("error: " + d_.label() + " has no float64 (cl_khr_fp64); kernel " + step.kernel.name +
                              " needs it for '" + p.name + "'");
        if (src.uses_fp64 && !d_.fp64)
          throw tile::Error("error: " + d_.label() + " has no float64 (cl_khr_fp64); kernel " + step.kernel.name +
                            " computes in float64");
        cl_program p = program_for(d_, src, cache, fingerprint);
        l.kernel = clCreateKernel(p, src.entry.c_str(), &err);
        check(err, d_.name() + ": clCreateKernel " + src.entry);
        l.launch = src.launch;
        for (size_t i = 0; i < step.kernel.params.size(); ++i) {
          auto it = mems_.find(step.kernel.params[i].name);
          TESSERA_INTERNAL_ASSERT(it != mems_.end(), "kernel " + step.kernel.name + " uses unknown buffer " +
                                                         step.kernel.params[i].name);
          check(clSetKernelArg(l.kernel, i, sizeof(cl_mem), &it->second.mem), d_.name() + ": clSetKernelArg");
        }
      }
      launches_.push_back(l);
    }
  }
  ~OpenCLExecutable() override {
    for (auto &l : launches_)
      if (l.kernel) clReleaseKernel(l.kernel);
    for (auto &[n, m] : mems_) clReleaseMemObject(m.mem);
  }

  int kernel_count() const override { return static_cast<int>(lowered_.steps.size()); }
  bool can_profile() const override { return true; }

  TensorMap run(const TensorMap &inputs) override {
    std::lock_guard<std::mutex> lock(run_mutex_);
    timer_.restart();
    clike::write_inputs(program_, inputs, io_);
    // Tile's unwritten elements are 0: outputs and temporaries start zeroed on every run, except
    // those their first kernel overwrites whole.
    for (auto &[name, m] : mems_) {
      if (m.role == compiler::BufferInfo::Role::Input || written_whole_.count(name)) continue;
      timer_.time(StepKind::Fill, name, [&, &m = m] {
        cl_uchar zero = 0;
        check(clEnqueueFillBuffer(d_.queue, m.mem, &zero, 1, 0, m.bytes, 0, nullptr, nullptr),
              d_.name() + ": clEnqueueFillBuffer");
        finish_if_profiling();
      });
    }
    for (size_t i = 0; i < lowered_.steps.size(); ++i) {
      const auto &step = lowered_.steps[i];
      if (step.kind == compiler::Step::Kind::Host) {
        clike::run_host_step(program_, step.host_statement, io_, timer_);
        continue;
      }
      timer_.time(StepKind::Kernel, step.kernel.name, [&] {
        enqueue(d_, launches_[i].kernel, launches_[i].launch, step.kernel.name);
        finish_if_profiling();
      });
    }
    TensorMap out = clike::read_outputs(program_, inputs, io_);
    check(clFinish(d_.queue), d_.name() + ": clFinish");
    return out;
  }

 private:
  struct Mem {
    cl_mem mem = nullptr;
    size_t bytes = 0;
    compiler::BufferInfo::Role role;
  };
  struct Launch {
    cl_kernel kernel = nullptr;
    clike::GpuLaunch launch;
  };

  // A profiled step is waited for, so that its time is its own and not the queue's before it.
  void finish_if_profiling() {
    if (timer_.enabled()) check(clFinish(d_.queue), d_.name() + ": clFinish");
  }

  // Whole-tensor transfers, blocking (a host step's result is a temporary).
  clike::BufferIO make_io() {
    clike::BufferIO io;
    io.write = [this](const std::string &name, const HostTensor &t) {
      auto m = mems_.find(name);
      if (m == mems_.end()) return;  // an input no kernel reads
      timer_.time(StepKind::Transfer, name, [&] {
        check(clEnqueueWriteBuffer(d_.queue, m->second.mem, CL_TRUE, 0, t.bytes(), t.data(), 0, nullptr, nullptr),
              d_.name() + ": clEnqueueWriteBuffer of " + name);
      });
    };
    io.read = [this](const std::string &name, HostTensor &t) {
      timer_.time(StepKind::Transfer, name, [&] {
        check(clEnqueueReadBuffer(d_.queue, mems_.at(name).mem, CL_TRUE, 0, t.bytes(), t.data(), 0, nullptr,
                                  nullptr),
              d_.name() + ": clEnqueueReadBuffer of " + name);
      });
    };
    return io;
  }

  ClDevice &d_;
  tile::BoundProgram program_;
  compiler::LoweredProgram lowered_;
  std::set<std::string> written_whole_;  // need no fill before a run
  std::map<std::string, Mem> mems_;
  std::vector<Launch> launches_;
  clike::BufferIO io_ = make_io();
  std::mutex run_mutex_;
};

class OpenCLDevice : public Device {
 public:
  explicit OpenCLDevice(int index) : d_(device_at(index)) {}
  DeviceInfo info() const override {
    return {d_.name(), "opencl", opencl_device_description(d_.index), d_.facts};
  }
  std::unique_ptr<Executable> compile(const tile::BoundProgram &program, const CompileOptions &options) override {
    std::string cache_path = options.cache_path ? *options.cache_path : KernelCache::default_path();
    auto bench = opencl::make_kernel_bench(d_.index, cache_path);
    return compile_with_schedules(program, info(), target_of(d_), bench.get(), options,
                                  [&](compiler::LoweredProgram lowered, ScheduleSelector &selector) {
                                    // No cache for the schedules (policy off, or a file that cannot be
                                    // opened) means none for the program binaries either.
                                    KernelCache *binaries = selector.cache() ? binary_cache(cache_path) : nullptr;
                                    return std::make_unique<OpenCLExecutable>(d_, program, std::move(lowered),
                                                                              binaries, device_fingerprint(info()));
                                  });
  }
  std::string source(const tile::BoundProgram &program) override {
    std::string out;
    for (const auto &step : compiler::lower(program, target_of(d_)).steps) {
      if (step.kind == compiler::Step::Kind::Host) {
        out += "// host step: " + step.host_statement + "\n";
        continue;
      }
      opencl::KernelSource src = opencl::kernel_source(step.kernel);
      out += "// kernel " + src.entry + ", " + launch_text(src.launch) + "\n" + src.source;
    }
    return out;
  }

 private:
  ClDevice &d_;
};

}  // namespace

int opencl_device_count() { return static_cast<int>(all_devices().size()); }

std::string opencl_device_description(int index) {
  const ClDevice &d = *all_devices().at(index);
  return "OpenCL " + d.facts.at("device") + " (" + d.facts.at("vendor") + ", driver " + d.facts.at("driver_version") +
         ", " + d.facts.at("compute_units") + " compute units)";
}

std::unique_ptr<Device> make_opencl_device(int index) { return std::make_unique<OpenCLDevice>(index); }

OpenCLProgramStats opencl_program_stats(int index) {
  ClDevice &d = device_at(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.stats;
}

std::vector<std::string> opencl_forget_programs(int index) {
  ClDevice &d = device_at(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  std::vector<std::string> keys;
  for (auto &[key, p] : d.programs) {
    keys.push_back(key);
    clReleaseProgram(p);  // kernels created from it keep it alive until they are released
  }
  d.programs.clear();
  return keys;
}

}  // namespace tessera
