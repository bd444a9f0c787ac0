#include "backends/opencl/ClContext.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "backends/clike/ParallelBuild.h"
#include "tile/Diagnostics.h"

namespace tessera::opencl {

namespace {

constexpr const char *kProgramKind = "opencl-program";

}  // namespace

void check(cl_int err, const std::string &what) {
  if (err != CL_SUCCESS)
    throw tile::Error("error: opencl: " + what + " failed with code " + std::to_string(err));
}

namespace {

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

// The sub-group (SIMD) width where the driver says: Intel's cl_intel_subgroups lists the sizes it
// supports (the largest is reported); OpenCL 1.2 has no portable query, so otherwise "unknown".
std::string subgroup_size(cl_device_id d, const std::string &extensions) {
  constexpr cl_device_info kSubGroupSizesIntel = 0x4108;  // CL_DEVICE_SUB_GROUP_SIZES_INTEL
  if (extensions.find("cl_intel_subgroups") == std::string::npos) return "unknown";
  size_t n = 0;
  if (clGetDeviceInfo(d, kSubGroupSizesIntel, 0, nullptr, &n) != CL_SUCCESS || n < sizeof(size_t))
    return "unknown";
  std::vector<size_t> sizes(n / sizeof(size_t));
  clGetDeviceInfo(d, kSubGroupSizesIntel, n, sizes.data(), nullptr);
  return std::to_string(*std::max_element(sizes.begin(), sizes.end()));
}

}  // namespace

std::vector<std::unique_ptr<ClDevice>> &all_devices() {
  static std::vector<std::unique_ptr<ClDevice>> devices;
  static std::once_flag once;
  std::call_once(once, [] {
    cl_uint np = 0;
    if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0)
      return;  // no platform: no devices
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
        f["local_memory_bytes"] =
            std::to_string(device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE));
        f["max_workgroup_size"] =
            std::to_string(device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE));
        f["preferred_vector_width_float"] =
            std::to_string(device_value<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT));
        f["global_memory_bytes"] =
            std::to_string(device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE));
        f["fp64"] = d->fp64 ? "yes" : "no";
        auto type = device_value<cl_device_type>(id, CL_DEVICE_TYPE);
        f["device_type"] = type & CL_DEVICE_TYPE_GPU           ? "gpu"
                           : type & CL_DEVICE_TYPE_CPU         ? "cpu"
                           : type & CL_DEVICE_TYPE_ACCELERATOR ? "accelerator"
                                                               : "other";
        f["max_clock_mhz"] =
            std::to_string(device_value<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY));
        f["subgroup_size"] = subgroup_size(id, ext);
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
    throw tile::Error("error: no OpenCL device opencl:" + std::to_string(index) +
                      " on this machine");
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

namespace {

int fact_int(const ClDevice &d, const std::string &key) { return std::stoi(d.facts.at(key)); }

}  // namespace

compiler::Target target_of(const ClDevice &d) {
  compiler::Target t;
  t.backend = "opencl";
  t.cores = std::max(1, fact_int(d, "compute_units"));
  t.vector_bits = std::max(1, fact_int(d, "preferred_vector_width_float")) * 32;
  t.local_memory_bytes = std::stoll(d.facts.at("local_memory_bytes"));
  t.max_workgroup_size = std::max(1, fact_int(d, "max_workgroup_size"));
  t.has_fp16 = true;  // stored as half, computed in float (vload_half/vstore_half are core OpenCL)
  t.has_fp64 = d.fp64;
  const std::string &sub = d.facts.at("subgroup_size");
  t.subgroup_size = sub == "unknown" ? 1 : std::stoi(sub);
  // PoCL compiles with clang, whose __builtin_prefetch the kernels call (its OpenCL prefetch() is
  // an empty function). 2 KB ahead, in the first row tile only: MobileNetV2's kernels on
  // opencl:0 (Intel kind) 3.97 -> 3.66 ms (sum of minima), ResNet-50's 32.9 -> 29.8; prefetching
  // at every read, 4 or 16 KB ahead, was slower (docs/tuning.md).
  if (d.facts.at("device_type") == "cpu" &&
      d.facts.at("opencl_c_version").find("PoCL") != std::string::npos)
    t.panel_prefetch_bytes = 2048;
  return t;
}

namespace {

std::string build_log(ClDevice &d, cl_program p) {
  size_t n = 0;
  clGetProgramBuildInfo(p, d.device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string log(n, '\0');
  clGetProgramBuildInfo(p, d.device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
  while (!log.empty() && log.back() == '\0') log.pop_back();
  return log;
}

}  // namespace

namespace {

// A program from a cached binary, or null when there is none or the driver rejects it (another
// driver build, a truncated entry): the caller then builds from source.
cl_program program_from_cache(ClDevice &d, BinaryStore *binaries, const std::string &key) {
  if (!binaries) return nullptr;
  std::optional<std::string> bytes = binaries->find(kProgramKind, key);
  if (!bytes || bytes->empty()) return nullptr;
  const unsigned char *data = reinterpret_cast<const unsigned char *>(bytes->data());
  size_t size = bytes->size();
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program p = clCreateProgramWithBinary(d.context, 1, &d.device, &size, &data, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS || !p) {
    if (p) clReleaseProgram(p);
    return nullptr;
  }
  if (clBuildProgram(p, 1, &d.device, opencl::kBuildOptions, nullptr, nullptr) != CL_SUCCESS) {
    clReleaseProgram(p);
    return nullptr;
  }
  ++d.stats.binary_loads;
  return p;
}

}  // namespace

namespace {

/// A program built from `source`, or null with the driver's log in `error`.
cl_program build_from_source(ClDevice &d, const KernelSource &src, std::string &error) {
  const char *text = src.source.c_str();
  size_t length = src.source.size();
  cl_int err = CL_SUCCESS;
  cl_program p = clCreateProgramWithSource(d.context, 1, &text, &length, &err);
  if (err != CL_SUCCESS) {
    error = "error: " + d.label() + ": clCreateProgramWithSource failed (" + std::to_string(err) +
            ") for kernel " + src.entry;
    return nullptr;
  }
  if (clBuildProgram(p, 1, &d.device, opencl::kBuildOptions, nullptr, nullptr) != CL_SUCCESS) {
    error = "error: " + d.label() + ": kernel " + src.entry + " failed to build:\n" +
            build_log(d, p) + "\n--- source ---\n" + src.source;
    clReleaseProgram(p);
    return nullptr;
  }
  return p;
}

void store_binary(cl_program p, BinaryStore *binaries, const std::string &key) {
  size_t size = 0;
  if (!binaries ||
      clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS ||
      size == 0)
    return;
  std::string bin(size, '\0');
  unsigned char *ptr = reinterpret_cast<unsigned char *>(bin.data());
  if (clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) == CL_SUCCESS)
    binaries->store(kProgramKind, key, bin);
}

}  // namespace

// Each program from this process's programs when an identical kernel was built before, else from
// the kernel cache's binary, else built from source (and its binary stored). Builds from source run
// on every core (OpenCL allows concurrent clBuildProgram calls).
std::vector<cl_program> programs_for(ClDevice &d, const std::vector<KernelSource> &sources,
                                     BinaryStore *binaries) {
  std::vector<std::string> keys;
  std::vector<size_t> todo;  // the first source of each key that must be built from source
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    std::set<std::string> queued;
    for (size_t i = 0; i < sources.size(); ++i) {
      keys.push_back(opencl::program_key_text(sources[i]));
      const std::string &key = keys.back();
      if (d.programs.count(key) || queued.count(key)) continue;
      if (cl_program p = program_from_cache(d, binaries, key)) {
        d.programs[key] = p;
        continue;
      }
      queued.insert(key);
      todo.push_back(i);
    }
  }
  std::vector<cl_program> built(todo.size(), nullptr);
  std::vector<std::string> errors(todo.size());
  clike::build_on_all_cores(
      todo.size(), [&](size_t t) { built[t] = build_from_source(d, sources[todo[t]], errors[t]); });

  std::lock_guard<std::mutex> lock(d.mutex);
  std::string first_error;
  for (size_t t = 0; t < todo.size(); ++t) {
    const std::string &key = keys[todo[t]];
    ++d.stats.source_builds;
    if (!built[t]) {
      if (first_error.empty()) first_error = errors[t];
      continue;
    }
    if (d.programs.count(key)) {  // another compile built it meanwhile
      clReleaseProgram(built[t]);
      continue;
    }
    store_binary(built[t], binaries, key);
    d.programs[key] = built[t];
  }
  if (!first_error.empty()) throw tile::Error(first_error);
  std::vector<cl_program> out;
  for (const auto &key : keys) out.push_back(d.programs.at(key));
  return out;
}

cl_event *timed_event(ClDevice &d) {
  if (!d.timed_events) return nullptr;
  d.timed_events->push_back(nullptr);
  return &d.timed_events->back();
}

// Enqueues `kernel` over `launch`'s NDRange (nothing when a dimension is empty).
void enqueue(ClDevice &d, cl_kernel kernel, const clike::GpuLaunch &launch,
             const std::string &name) {
  auto g = launch.global();
  int dims = std::max(1, launch.dims);
  size_t global[3], local[3];
  for (int i = 0; i < 3; ++i) {
    if (g[i] == 0) return;
    global[i] = static_cast<size_t>(g[i]);
    local[i] = static_cast<size_t>(launch.local[i]);
  }
  check(clEnqueueNDRangeKernel(d.queue, kernel, dims, nullptr, global,
                               launch.driver_local ? nullptr : local, 0, nullptr, timed_event(d)),
        d.name() + ": clEnqueueNDRangeKernel " + name);
}

}  // namespace tessera::opencl
