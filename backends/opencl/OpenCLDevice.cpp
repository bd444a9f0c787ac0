#include "backends/opencl/OpenCLDevice.h"

#include <CL/cl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "backends/interp/InterpDevice.h"
#include "backends/opencl/OpenCLSource.h"
#include "compiler/Lower.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

// One OpenCL device with its context, queue and the programs built on it in this process. Lives
// until the process ends: identical kernels of later compiles reuse the built programs.
struct ClDevice {
  int index = 0;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::map<std::string, std::string> facts;
  bool fp64 = false, fp16 = false;
  std::mutex mutex;
  // Program binaries (CL_PROGRAM_BINARIES) and the built programs, keyed by the kernel source.
  std::map<std::string, std::vector<unsigned char>> binaries;
  std::map<std::string, cl_program> programs;
  int builds = 0;

  std::string name() const { return "opencl:" + std::to_string(index); }
  std::string label() const { return name() + " (" + facts.at("device") + ")"; }
};

void check(cl_int err, const std::string &what) {
  if (err != CL_SUCCESS) throw tile::Error("error: opencl: " + what + " failed with code " + std::to_string(err));
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS) return "";
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T v{};
  clGetDeviceInfo(d, what, sizeof v, &v, nullptr);
  return v;
}

std::vector<std::unique_ptr<ClDevice>> &all_devices() {
  static std::vector<std::unique_ptr<ClDevice>> devices;
  static std::once_flag once;
  std::call_once(once, [] {
    cl_uint np = 0;
    if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return;  // no platform: no devices
    std::vector<cl_platform_id> platforms(np);
    clGetPlatformIDs(np, platforms.data(), nullptr);
    for (cl_platform_id p : platforms) {
      cl_uint nd = 0;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
      std::vector<cl_device_id> ids(nd);
      clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, ids.data(), nullptr);
      for (cl_device_id id : ids) {
        auto d = std::make_unique<ClDevice>();
        d->index = static_cast<int>(devices.size());
        d->platform = p;
        d->device = id;
        std::string ext = device_string(id, CL_DEVICE_EXTENSIONS);
        d->fp64 = ext.find("cl_khr_fp64") != std::string::npos;
        d->fp16 = ext.find("cl_khr_fp16") != std::string::npos;
        auto &f = d->facts;
        f["vendor"] = device_string(id, CL_DEVICE_VENDOR);
        f["device"] = device_string(id, CL_DEVICE_NAME);
        f["driver_version"] = device_string(id, CL_DRIVER_VERSION);
        f["opencl_c_version"] = device_string(id, CL_DEVICE_OPENCL_C_VERSION);
        f["compute_units"] = std::to_string(device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS));
        f["local_memory_bytes"] = std::to_string(device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));
        f["max_workgroup_size"] = std::to_string(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
        f["preferred_vector_width_float"] =
            std::to_string(device_value<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));
        f["global_memory_bytes"] = std::to_string(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE));
        f["fp64"] = d->fp64 ? "yes" : "no";
        f["fp16"] = d->fp16 ? "yes" : "no";
        devices.push_back(std::move(d));
      }
    }
  });
  return devices;
}

ClDevice &device_at(int index) {
  auto &all = all_devices();
  if (index < 0 || index >= static_cast<int>(all.size()))
    throw tile::Error("error: no OpenCL device opencl:" + std::to_string(index) + " on this machine");
  ClDevice &d = *all[index];
  std::lock_guard<std::mutex> lock(d.mutex);
  if (!d.context) {
    cl_int err = CL_SUCCESS;
    d.context = clCreateContext(nullptr, 1, &d.device, nullptr, nullptr, &err);
    check(err, d.name() + ": clCreateContext");
    d.queue = clCreateCommandQueue(d.context, d.device, 0, &err);
    check(err, d.name() + ": clCreateCommandQueue");
  }
  return d;
}

int fact_int(const ClDevice &d, const std::string &key) { return std::stoi(d.facts.at(key)); }

compiler::TargetInfo target_of(const ClDevice &d) {
  compiler::TargetInfo t;
  t.backend = "opencl";
  t.cores = std::max(1, fact_int(d, "compute_units"));
  t.vector_bits = std::max(1, fact_int(d, "preferred_vector_width_float")) * 32;
  t.local_memory_bytes = std::stoll(d.facts.at("local_memory_bytes"));
  t.max_workgroup_size = std::max(1, fact_int(d, "max_workgroup_size"));
  t.has_fp16 = true;  // stored as half, computed in float (vload_half/vstore_half are core OpenCL)
  t.has_fp64 = d.fp64;
  return t;
}

// The built program for `src`, from this process's cache when an identical kernel was built before.
cl_program program_for(ClDevice &d, const opencl::KernelSource &src) {
  std::lock_guard<std::mutex> lock(d.mutex);
  if (auto it = d.programs.find(src.source); it != d.programs.end()) return it->second;
  const char *text = src.source.c_str();
  size_t length = src.source.size();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(d.context, 1, &text, &length, &err);
  check(err, d.name() + ": clCreateProgramWithSource");
  ++d.builds;
  if (clBuildProgram(p, 1, &d.device, "-cl-std=CL1.2", nullptr, nullptr) != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(p, d.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(p, d.device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    clReleaseProgram(p);
    throw tile::Error("error: " + d.label() + ": kernel " + src.entry + " failed to build:\n" + log +
                      "\n--- source ---\n" + src.source);
  }
  size_t size = 0;
  if (clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) == CL_SUCCESS && size > 0) {
    std::vector<unsigned char> bin(size);
    unsigned char *ptr = bin.data();
    if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) == CL_SUCCESS)
      d.binaries[src.source] = std::move(bin);
  }
  d.programs[src.source] = p;
  return p;
}

class OpenCLExecutable : public Executable {
 public:
  OpenCLExecutable(ClDevice &d, tile::BoundProgram program, compiler::LoweredProgram lowered)
      : d_(d), program_(std::move(program)), lowered_(std::move(lowered)) {
    for (const auto &s : program_.statements) statements_[s.output] = &s;
    cl_int err = CL_SUCCESS;
    for (const auto &b : lowered_.buffers) {
      size_t bytes = std::max<size_t>(8, b.elements * tile::dtype_size(b.dtype));
      cl_mem m = clCreateBuffer(d_.context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
      check(err, d_.name() + ": clCreateBuffer of " + std::to_string(bytes) + " bytes for " + b.name);
      mems_[b.name] = {m, bytes, b.role};
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
        cl_program p = program_for(d_, src);
        l.kernel = clCreateKernel(p, src.entry.c_str(), &err);
        check(err, d_.name() + ": clCreateKernel " + src.entry);
        l.global = static_cast<size_t>(src.global_size);
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

  TensorMap run(const TensorMap &inputs) override {
    std::lock_guard<std::mutex> lock(run_mutex_);
    std::set<std::string> input_names;
    for (const auto &[name, type] : program_.inputs) {
      input_names.insert(name);
      auto it = inputs.find(name);
      if (it == inputs.end()) throw tile::Error("error: no value for input '" + name + "'");
      if (it->second.type() != type)
        throw tile::Error("error: input '" + name + "' is " + it->second.type().str() +
                          " but the program was compiled for " + type.str());
      auto m = mems_.find(name);
      if (m != mems_.end() && it->second.bytes() > 0)
        check(clEnqueueWriteBuffer(d_.queue, m->second.mem, CL_FALSE, 0, it->second.bytes(), it->second.data(), 0,
                                   nullptr, nullptr),
              d_.name() + ": clEnqueueWriteBuffer");
    }
    // Tile's unwritten elements are 0: outputs and temporaries start zeroed on every run.
    for (auto &[name, m] : mems_) {
      if (m.role == compiler::BufferInfo::Role::Input) continue;
      cl_uchar zero = 0;
      check(clEnqueueFillBuffer(d_.queue, m.mem, &zero, 1, 0, m.bytes, 0, nullptr, nullptr),
            d_.name() + ": clEnqueueFillBuffer");
    }
    for (size_t i = 0; i < lowered_.steps.size(); ++i) {
      const auto &step = lowered_.steps[i];
      if (step.kind == compiler::Step::Kind::Host) {
        run_host(step.host_statement);
        continue;
      }
      if (launches_[i].global == 0) continue;
      size_t global = launches_[i].global;
      check(clEnqueueNDRangeKernel(d_.queue, launches_[i].kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
            d_.name() + ": clEnqueueNDRangeKernel " + step.kernel.name);
    }
    TensorMap out;
    for (const auto &[name, type] : program_.outputs) {
      if (input_names.count(name)) {
        out[name] = inputs.at(name);
        continue;
      }
      HostTensor t(type);
      read(name, t);
      out[name] = std::move(t);
    }
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
    size_t global = 1;
  };

  void read(const std::string &name, HostTensor &t) {
    if (t.bytes() == 0) return;
    check(clEnqueueReadBuffer(d_.queue, mems_.at(name).mem, CL_TRUE, 0, t.bytes(), t.data(), 0, nullptr, nullptr),
          d_.name() + ": clEnqueueReadBuffer of " + name);
  }

  // A statement the compiler left to the host: evaluated by the interpreter on the tensors it
  // reads (read back from the device), its result written to its buffer.
  void run_host(const std::string &name) {
    const auto &st = *statements_.at(name);
    TensorMap env;
    for (const auto &r : statement_reads(program_, st)) {
      HostTensor t(program_.type_of(r));
      read(r, t);
      env[r] = std::move(t);
    }
    HostTensor v = evaluate_statement(program_, st, env);
    TESSERA_INTERNAL_ASSERT(v.type() == st.type, "host statement " + name + " has type " + v.type().str());
    if (v.bytes() > 0)
      check(clEnqueueWriteBuffer(d_.queue, mems_.at(name).mem, CL_TRUE, 0, v.bytes(), v.data(), 0, nullptr, nullptr),
            d_.name() + ": clEnqueueWriteBuffer of " + name);
  }

  ClDevice &d_;
  tile::BoundProgram program_;
  compiler::LoweredProgram lowered_;
  std::map<std::string, const tile::BoundStatement *> statements_;
  std::map<std::string, Mem> mems_;
  std::vector<Launch> launches_;
  std::mutex run_mutex_;
};

class OpenCLDevice : public Device {
 public:
  explicit OpenCLDevice(int index) : d_(device_at(index)) {}
  DeviceInfo info() const override {
    return {d_.name(), "opencl", opencl_device_description(d_.index), d_.facts};
  }
  std::unique_ptr<Executable> compile(const tile::BoundProgram &program) override {
    auto lowered = compiler::lower(program, target_of(d_));
    return std::make_unique<OpenCLExecutable>(d_, program, std::move(lowered));
  }
  std::string source(const tile::BoundProgram &program) override {
    std::string out;
    for (const auto &step : compiler::lower(program, target_of(d_)).steps) {
      if (step.kind == compiler::Step::Kind::Host) {
        out += "// host step: " + step.host_statement + "\n";
        continue;
      }
      opencl::KernelSource src = opencl::kernel_source(step.kernel);
      out += "// kernel " + src.entry + ", global size " + std::to_string(src.global_size) + "\n" + src.source;
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

}  // namespace tessera
