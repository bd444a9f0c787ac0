#include "backends/opencl/OpenCLBackend.h"

#include <CL/cl.h>

#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "backends/opencl/ClContext.h"
#include "backends/opencl/OpenCLSource.h"
#include "compiler/GpuCostModel.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using opencl::check;
using opencl::ClDevice;

/// A cl_mem: a buffer of its own, or a sub-buffer of another (which it keeps alive).
class ClBuffer : public DeviceBuffer {
 public:
  ClBuffer(Backend &backend, cl_mem mem, size_t bytes, std::shared_ptr<DeviceBuffer> parent)
      : DeviceBuffer(backend, bytes), mem(mem), parent_(std::move(parent)) {}
  ~ClBuffer() override { clReleaseMemObject(mem); }
  cl_mem mem;

 private:
  std::shared_ptr<DeviceBuffer> parent_;
};

cl_mem mem_of(DeviceBuffer &b) { return static_cast<ClBuffer &>(b).mem; }

std::string launch_text(const clike::GpuLaunch &l) {
  auto g = l.global();
  auto dims = [&](const std::array<int64_t, 3> &a) {
    std::string s;
    for (int i = 0; i < std::max(1, l.dims); ++i) s += (i ? "x" : "") + std::to_string(a[i]);
    return s;
  };
  return "global " + dims(g) + (l.driver_local ? "" : ", local " + dims(l.local));
}

/// Kernels created from the device's built programs; an argument is set when its buffer differs
/// from the one the kernel last had (an executable's buffers stay the same from run to run, and a
/// driver's clSetKernelArg costs a lock and a copy: on PoCL about a microsecond per launch).
class ClKernels : public CompiledKernels {
 public:
  ClKernels(ClDevice &d, const std::vector<const compiler::Kernel *> &kernels,
            BinaryStore *binaries)
      : d_(d) {
    try {
      std::vector<opencl::KernelSource> sources;
      for (const auto *k : kernels) {
        sources.push_back(opencl::kernel_source(*k));
        if (sources.back().uses_fp64 && !d_.fp64)
          throw tile::Error("error: " + d_.label() + " has no float64 (cl_khr_fp64); kernel " +
                            k->name + " computes in float64");
      }
      std::vector<cl_program> programs = opencl::programs_for(d_, sources, binaries);
      for (size_t i = 0; i < kernels.size(); ++i) {
        cl_int err = CL_SUCCESS;
        cl_kernel kernel = clCreateKernel(programs[i], sources[i].entry.c_str(), &err);
        check(err, d_.name() + ": clCreateKernel " + sources[i].entry);
        launches_.push_back({kernel, sources[i].launch, kernels[i]->name, {}});
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~ClKernels() override { release(); }

  void launch(size_t index, const std::vector<DeviceBuffer *> &args) override {
    Launch &l = launches_.at(index);
    l.args.resize(args.size(), nullptr);
    for (size_t i = 0; i < args.size(); ++i) {
      cl_mem m = mem_of(*args[i]);
      if (m == l.args[i]) continue;
      l.args[i] = nullptr;  // unknown until the call succeeds
      check(clSetKernelArg(l.kernel, static_cast<cl_uint>(i), sizeof(cl_mem), &m),
            d_.name() + ": clSetKernelArg");
      l.args[i] = m;
    }
    opencl::enqueue(d_, l.kernel, l.launch, l.name);
  }

 private:
  struct Launch {
    cl_kernel kernel;
    clike::GpuLaunch launch;
    std::string name;
    std::vector<cl_mem> args;  // what the kernel's arguments were last set to
  };
  void release() {
    for (auto &l : launches_) clReleaseKernel(l.kernel);
    launches_.clear();
  }
  ClDevice &d_;
  std::vector<Launch> launches_;
};

class OpenCLBackend : public Backend {
 public:
  explicit OpenCLBackend(int index) : d_(opencl::device_at(index)) {
    cl_uint align_bits = 0;
    clGetDeviceInfo(d_.device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof align_bits, &align_bits,
                    nullptr);
    align_ = std::max<size_t>(64, align_bits / 8);
  }

  DeviceInfo info() const override {
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(d_.device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, nullptr);
    return {d_.name(), "opencl", opencl_device_description(d_.index), d_.facts,
            static_cast<int64_t>(std::min<cl_ulong>(max_alloc, INT64_MAX))};
  }
  compiler::Target target() const override {
    compiler::Target t = opencl::target_of(d_);
    // A CPU under OpenCL (PoCL: wide vectors) addresses in 64 bits: narrowed indices cost a sign
    // extension per load in the inner loop. Its compiler also kept padded rows' guards in the
    // reduction loop, a compare and branch per row tile's update: unswitched, work-items clear of
    // the padding run the loop without them (ResNet-50's 3x3 convolutions on 56x56x64, alone:
    // 3.2 -> 2.0 ms).
    bool cpu = compiler::wide_vector_target(t);
    t.narrow_indices = !cpu;
    t.unswitch_guards = cpu;
    return t;
  }

  std::shared_ptr<DeviceBuffer> allocate(size_t bytes) override {
    cl_int err = CL_SUCCESS;
    cl_mem m =
        clCreateBuffer(d_.context, CL_MEM_READ_WRITE, std::max<size_t>(bytes, 8), nullptr, &err);
    check(err, d_.name() + ": clCreateBuffer of " + std::to_string(bytes) + " bytes");
    return std::make_shared<ClBuffer>(*this, m, bytes, nullptr);
  }
  std::shared_ptr<DeviceBuffer> view(const std::shared_ptr<DeviceBuffer> &parent, size_t offset,
                                     size_t bytes) override {
    cl_buffer_region region{offset, bytes};
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateSubBuffer(mem_of(*parent), CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                 &region, &err);
    if (err != CL_SUCCESS) return nullptr;  // the runtime allocates the tensor alone instead
    return std::make_shared<ClBuffer>(*this, m, bytes, parent);
  }
  size_t view_alignment() const override { return align_; }

  void fill(DeviceBuffer &b, uint8_t byte) override {
    cl_uchar pattern = byte;
    check(clEnqueueFillBuffer(d_.queue, mem_of(b), &pattern, 1, 0, b.bytes(), 0, nullptr,
                              opencl::timed_event(d_)),
          d_.name() + ": clEnqueueFillBuffer");
  }
  void copy(DeviceBuffer &from, DeviceBuffer &to, size_t bytes) override {
    if (bytes == 0) return;
    check(clEnqueueCopyBuffer(d_.queue, mem_of(from), mem_of(to), 0, 0, bytes, 0, nullptr,
                              opencl::timed_event(d_)),
          d_.name() + ": clEnqueueCopyBuffer");
  }
  // Blocking transfers on the in-order queue: they start after everything enqueued before them.
  void write(DeviceBuffer &b, const void *host, size_t bytes) override {
    if (bytes == 0) return;
    check(clEnqueueWriteBuffer(d_.queue, mem_of(b), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
          d_.name() + ": clEnqueueWriteBuffer");
  }
  void read(DeviceBuffer &b, void *host, size_t bytes) override {
    if (bytes == 0) return;
    check(clEnqueueReadBuffer(d_.queue, mem_of(b), CL_TRUE, 0, bytes, host, 0, nullptr, nullptr),
          d_.name() + ": clEnqueueReadBuffer");
  }
  void write_async(DeviceBuffer &b, const void *host, size_t bytes) override {
    if (bytes == 0) return;
    check(clEnqueueWriteBuffer(d_.queue, mem_of(b), CL_FALSE, 0, bytes, host, 0, nullptr,
                               opencl::timed_event(d_)),
          d_.name() + ": clEnqueueWriteBuffer");
  }
  void finish() override { check(clFinish(d_.queue), d_.name() + ": clFinish"); }
  // The enqueued commands go to a second queue with profiling on (the main one has it off: the
  // driver need not stamp every command of a run); their events' device clock spans the work.
  std::optional<double> time_on_device(const std::function<void()> &enqueue) override {
    if (!profiling_queue()) return std::nullopt;
    finish();
    std::vector<cl_event> events;
    std::swap(d_.queue, profiling_);
    d_.timed_events = &events;
    // Back to the main queue once what was enqueued has finished (an error included), so that
    // later commands run after it.
    auto done = [&] {
      d_.timed_events = nullptr;
      std::swap(d_.queue, profiling_);
      cl_int err = clFinish(profiling_);
      cl_ulong start = 0, end = 0;
      if (err == CL_SUCCESS && !events.empty())
        err = clGetEventProfilingInfo(events.front(), CL_PROFILING_COMMAND_START, sizeof start,
                                      &start, nullptr);
      if (err == CL_SUCCESS && !events.empty())
        err = clGetEventProfilingInfo(events.back(), CL_PROFILING_COMMAND_END, sizeof end, &end,
                                      nullptr);
      for (cl_event e : events) clReleaseEvent(e);
      check(err, d_.name() + ": the profiling events of a timed launch");
      return end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
    };
    try {
      enqueue();
    } catch (...) {
      try {
        done();
      } catch (const tile::Error &) {
        // The first error is the one to report.
      }
      throw;
    }
    return done();
  }

  std::unique_ptr<CompiledKernels> build(const std::vector<const compiler::Kernel *> &kernels,
                                         BinaryStore *binaries) override {
    return std::make_unique<ClKernels>(d_, kernels, binaries);
  }
  std::string source(const std::vector<const compiler::Kernel *> &kernels) override {
    std::string out;
    for (const auto *k : kernels) {
      opencl::KernelSource src = opencl::kernel_source(*k);
      out += "// kernel " + src.entry + ", " + launch_text(src.launch) + "\n" + src.source;
    }
    return out;
  }

 private:
  /// The queue time_on_device enqueues on, made on first use; false where the driver refuses
  /// profiling.
  bool profiling_queue() {
    if (profiling_) return true;
    if (no_profiling_) return false;
    cl_int err = CL_SUCCESS;
    profiling_ = clCreateCommandQueue(d_.context, d_.device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) profiling_ = nullptr, no_profiling_ = true;
    return profiling_ != nullptr;
  }

  ClDevice &d_;
  size_t align_ = 64;
  cl_command_queue profiling_ = nullptr;
  bool no_profiling_ = false;
};

}  // namespace

int opencl_device_count() { return static_cast<int>(opencl::all_devices().size()); }

std::string opencl_device_description(int index) {
  const ClDevice &d = *opencl::all_devices().at(index);
  return "OpenCL " + d.facts.at("device") + " (" + d.facts.at("vendor") + ", driver " +
         d.facts.at("driver_version") + ", " + d.facts.at("compute_units") + " compute units)";
}

Backend &opencl_backend(int index) {
  static std::mutex mutex;
  static auto *backends = new std::map<int, OpenCLBackend *>;  // live to the end, as the devices do
  std::lock_guard<std::mutex> lock(mutex);
  auto &b = (*backends)[index];
  if (!b) b = new OpenCLBackend(index);
  return *b;
}

OpenCLProgramStats opencl_program_stats(int index) {
  ClDevice &d = opencl::device_at(index);
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.stats;
}

std::vector<std::string> opencl_forget_programs(int index) {
  ClDevice &d = opencl::device_at(index);
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
