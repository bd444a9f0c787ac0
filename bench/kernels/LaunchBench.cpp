// What a kernel launch costs: a run of N chained kernels on 16 floats each (no work to speak of)
// on each of Tessera's compiled devices, beside the same chain enqueued on the OpenCL driver
// directly (one write, N launches of a one-line kernel, one blocking read: the least any OpenCL
// runtime can do for it). Small networks on PoCL are bounded by this (small_resnet: 17 kernels);
// Tessera's time over the driver's for the same N is what Tessera adds.
#include <CL/cl.h>

#include <algorithm>
#include <string>

#include <benchmark/benchmark.h>

#include "backends/Registry.h"
#include "bench/kernels/ClQueue.h"
#include "bench/kernels/ScratchCache.h"
#include "tile/Parser.h"

namespace {

const char *const kDevices[] = {"cpu", "opencl:0", "vulkan:0"};

// Each kernel a reduction of the previous one's 16 elements, so that no two fuse.
std::string chain_program(int64_t kernels) {
  std::string text = "function (A[16]) -> (B) {\n", previous = "A";
  for (int64_t i = 0; i < kernels; ++i) {
    std::string name = "T" + std::to_string(i);
    text += "  " + name + "[i : 16] = +(" + previous + "[j]);\n";
    previous = name;
  }
  return text + "  B = mul(" + previous + ", 0.001);\n}\n";
}

tessera::HostTensor sixteen_floats() {
  tessera::HostTensor t(tessera::tile::TensorType{tessera::tile::DType::Float32, {16}});
  std::fill_n(t.as<float>(), 16, 0.01f);
  return t;
}

void BM_KernelChain_Tessera(benchmark::State &state) {
  const char *device = kDevices[state.range(0)];
  int64_t kernels = state.range(1);
  auto devices = tessera::builtin_devices();
  auto names = devices.names();
  if (std::find(names.begin(), names.end(), device) == names.end())
    return state.SkipWithError((std::string("no ") + device + " on this machine").c_str());
  tessera::TensorMap inputs = {{"A", sixteen_floats()}};
  auto bound = tessera::tile::bind(tessera::tile::parse_program(chain_program(kernels)),
                                   {{"A", inputs["A"].type()}});
  tessera::CompileOptions options;
  options.policy = tessera::TunePolicy::Off;
  options.cache_path = tessera::bench::scratch_cache();
  auto exe = devices.create(device)->compile(bound, options);
  exe->run(inputs);
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(inputs));
  state.SetLabel(std::string(device) + ", " + std::to_string(exe->report().kernels.size()) +
                 " kernels");
}

void BM_KernelChain_OpenCLDriver(benchmark::State &state) {
  using tessera::bench::check;
  int64_t kernels = state.range(0);
  auto cl = tessera::bench::ClQueue::first();
  if (!cl) return state.SkipWithError("no OpenCL device on this machine");
  cl_device_id device = cl->device;
  cl_context context = cl->context;
  cl_command_queue queue = cl->queue;
  cl_int err = CL_SUCCESS;
  const char *source = "__kernel void k(__global float *a) { a[get_global_id(0)] += 1.0f; }";
  cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "k", &err);
  check(err, "clCreateKernel");
  float host[16] = {};
  cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof host, nullptr, &err);
  check(err, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), "clSetKernelArg");
  size_t global = 16;
  auto once = [&] {
    check(clEnqueueWriteBuffer(queue, buffer, CL_FALSE, 0, sizeof host, host, 0, nullptr, nullptr),
          "write");
    for (int64_t i = 0; i < kernels; ++i)
      check(
          clEnqueueNDRangeKernel(queue, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
          "clEnqueueNDRangeKernel");
    check(clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof host, host, 0, nullptr, nullptr),
          "read");
  };
  once();
  for (auto _ : state) once();
  state.SetLabel("the OpenCL driver alone");
  clReleaseMemObject(buffer);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  cl->release();
}

}  // namespace

BENCHMARK(BM_KernelChain_Tessera)
    ->ArgsProduct({{0, 1, 2}, {1, 17}})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
BENCHMARK(BM_KernelChain_OpenCLDriver)
    ->Arg(1)
    ->Arg(17)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();
