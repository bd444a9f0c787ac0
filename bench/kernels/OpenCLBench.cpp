// SGEMM on `opencl:0` (Tessera's OpenCL backend, with the cost model alone and tuned) beside
// CLBlast's SGEMM on the same OpenCL device (its own context and queue) in the same binary;
// OpenBLAS on the CPU is BM_Sgemm_OpenBLAS in KernelBench.cpp. Both OpenCL sides time the same work
// per iteration: upload A and B, the product, download C. items/s counters are FLOP/s.
#include <CL/cl.h>
#include <clblast_c.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>

#include "backends/Registry.h"
#include "bench/kernels/ClQueue.h"
#include "bench/kernels/RandomMatrix.h"
#include "bench/kernels/ScratchCache.h"
#include "tile/Parser.h"

namespace {

using tessera::HostTensor;

using tessera::bench::check;
using tessera::bench::random_matrix;

// Untuned: the cost model's schedule. Tuned: the tuner's (16 trials, 60 s: a cold PoCL build
// takes about a second per candidate), timed before the first repetition's loop.
void sgemm_tessera_opencl(benchmark::State &state, bool tuned) {
  int64_t n = state.range(0);
  auto devices = tessera::builtin_devices();
  auto names = devices.names();
  if (std::find(names.begin(), names.end(), "opencl:0") == names.end())
    return state.SkipWithError("no opencl:0 on this machine");
  tessera::TensorMap inputs = {{"A", random_matrix(n, 1)}, {"B", random_matrix(n, 2)}};
  auto program = tessera::tile::parse_program(
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }");
  auto bound = tessera::tile::bind(program, {{"A", inputs["A"].type()}, {"B", inputs["B"].type()}});
  tessera::CompileOptions options;
  options.policy = tuned ? tessera::TunePolicy::Online : tessera::TunePolicy::Off;
  options.budget = tessera::TuneBudget{16, 60};
  options.cache_path = tessera::bench::scratch_cache();
  auto exe = devices.create("opencl:0")->compile(bound, options);
  exe->run(inputs);  // first launch: the driver compiles the work-group function
  for (auto _ : state) benchmark::DoNotOptimize(exe->run(inputs));
  state.SetItemsProcessed(static_cast<int64_t>(2.0 * n * n * n) * state.iterations());
  std::string label = devices.create("opencl:0")->info().facts.at("device");
  if (tuned && !exe->report().kernels.empty())
    label += " " + exe->report().kernels.front().schedule;
  state.SetLabel(label);
}
void BM_Sgemm_Tessera_OpenCL(benchmark::State &state) { sgemm_tessera_opencl(state, false); }
void BM_Sgemm_Tessera_OpenCLTuned(benchmark::State &state) { sgemm_tessera_opencl(state, true); }

void BM_Sgemm_CLBlast(benchmark::State &state) {
  int64_t n = state.range(0);
  auto cl = tessera::bench::ClQueue::first();
  if (!cl) return state.SkipWithError("no OpenCL device on this machine");
  cl_context context = cl->context;
  cl_command_queue queue = cl->queue;
  cl_int err = CL_SUCCESS;
  HostTensor a = random_matrix(n, 1), b = random_matrix(n, 2), c = random_matrix(n, 3);
  size_t bytes = n * n * sizeof(float);
  cl_mem da = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  cl_mem db = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  cl_mem dc = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, nullptr, &err);
  check(err, "clCreateBuffer");
  auto once = [&] {
    check(clEnqueueWriteBuffer(queue, da, CL_FALSE, 0, bytes, a.data(), 0, nullptr, nullptr),
          "write A");
    check(clEnqueueWriteBuffer(queue, db, CL_FALSE, 0, bytes, b.data(), 0, nullptr, nullptr),
          "write B");
    CLBlastStatusCode s =
        CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
                     da, 0, n, db, 0, n, 0.0f, dc, 0, n, &queue, nullptr);
    if (s != CLBlastSuccess)
      throw std::runtime_error("CLBlastSgemm failed with " + std::to_string(s));
    check(clEnqueueReadBuffer(queue, dc, CL_TRUE, 0, bytes, c.data(), 0, nullptr, nullptr),
          "read C");
  };
  once();  // CLBlast compiles its kernels on first use
  for (auto _ : state) once();
  state.SetItemsProcessed(static_cast<int64_t>(2.0 * n * n * n) * state.iterations());
  for (cl_mem m : {da, db, dc}) clReleaseMemObject(m);
  cl->release();
}

}  // namespace

BENCHMARK(BM_Sgemm_Tessera_OpenCL)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Sgemm_Tessera_OpenCLTuned)
    ->Arg(256)
    ->Arg(1024)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Sgemm_CLBlast)->Arg(256)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();
