// Internals of the OpenCL backend: the devices the ICD loader finds (context, queue, facts),
// building programs (through the kernel cache's binaries) and launching kernels.
#pragma once

#include <CL/cl.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/clike/GpuLaunch.h"
#include "backends/opencl/OpenCLBackend.h"
#include "backends/opencl/OpenCLSource.h"
#include "compiler/Target.h"
#include "runtime/BinaryStore.h"

namespace tessera::opencl {

// One OpenCL device with its context, queue and the programs built on it in this process. Lives
// until the process ends: identical kernels of later compiles reuse the built programs.
struct ClDevice {
  int index = 0;
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  // While OpenCLBackend::time_on_device runs, `queue` is a queue with profiling on and each
  // command enqueued adds its event here (timed_event); null otherwise.
  std::vector<cl_event> *timed_events = nullptr;
  std::map<std::string, std::string> facts;
  bool fp64 = false, fp16 = false;
  std::mutex mutex;
  // The built programs of this process, keyed by the program cache's key text (source + options).
  std::map<std::string, cl_program> programs;
  OpenCLProgramStats stats;

  std::string name() const { return "opencl:" + std::to_string(index); }
  std::string label() const { return name() + " (" + facts.at("device") + ")"; }
};

/// Throws tile::Error naming `what` when `err` is not CL_SUCCESS.
void check(cl_int err, const std::string &what);
/// Every device of every platform, found once per process (no context yet).
std::vector<std::unique_ptr<ClDevice>> &all_devices();
/// Device `index` with its context and queue created; throws tile::Error when there is none.
ClDevice &device_at(int index);
/// The cost model's view of the device, from its facts.
compiler::Target target_of(const ClDevice &d);
/// The built program of each of `sources`: built before in this process, else loaded from a binary
/// in `binaries` (when the driver accepts it), else built from source, in parallel (its binary then
/// stored in `binaries`, which may be null). Throws tile::Error with the driver's build log of the
/// first source that does not build.
std::vector<cl_program> programs_for(ClDevice &d, const std::vector<KernelSource> &sources,
                                     BinaryStore *binaries);
/// Where the event of the command about to be enqueued goes while time_on_device collects them;
/// null otherwise (no event).
cl_event *timed_event(ClDevice &d);
/// Enqueues `kernel` over `launch`'s NDRange (nothing when it is empty).
void enqueue(ClDevice &d, cl_kernel kernel, const clike::GpuLaunch &launch,
             const std::string &name);

}  // namespace tessera::opencl
