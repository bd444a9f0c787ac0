#include "backends/opencl/OpenCLKernelBench.h"

#include <algorithm>
#include <chrono>

#include "backends/opencl/ClContext.h"
#include "runtime/Tuning.h"
#include "tile/Diagnostics.h"

namespace tessera::opencl {

namespace {

using compiler::tune::Measurement;

class OpenCLKernelBench : public compiler::tune::KernelBench {
 public:
  OpenCLKernelBench(int index, const std::string &cache_path)
      : d_(device_at(index)),
        cache_path_(cache_path),
        fingerprint_(device_fingerprint({d_.name(), "opencl", opencl_device_description(index), d_.facts})) {}

  Measurement measure(const compiler::Kernel &kernel, const std::vector<std::vector<std::byte>> &inputs, int warmup,
                      int runs) override {
    KernelSource src = kernel_source(kernel);
    bool fp64 = src.uses_fp64;
    for (const auto &p : kernel.params) fp64 |= p.dtype == tile::DType::Float64;
    if (fp64 && !d_.fp64) throw tile::Error("error: " + d_.label() + " has no float64 (cl_khr_fp64); kernel " + kernel.name + " needs it");
    // Opened on first use: a compile that never tunes (policy off or cached) leaves the file alone.
    if (!cache_path_.empty() && !cache_) cache_ = binary_cache(cache_path_);
    cl_program program = program_for(d_, src, cache_, fingerprint_);
    cl_int err = CL_SUCCESS;
    Resources r;
    r.kernel = clCreateKernel(program, src.entry.c_str(), &err);
    check(err, d_.name() + ": clCreateKernel " + src.entry);

    size_t next_input = 0;
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      const auto &p = kernel.params[i];
      size_t bytes = p.elements * tile::dtype_size(p.dtype);
      cl_mem m = clCreateBuffer(d_.context, CL_MEM_READ_WRITE, std::max<size_t>(8, bytes), nullptr, &err);
      check(err, d_.name() + ": clCreateBuffer for " + p.name);
      r.mems.push_back(m);
      r.bytes.push_back(bytes);
      check(clSetKernelArg(r.kernel, i, sizeof(cl_mem), &m), d_.name() + ": clSetKernelArg");
      if (p.is_output) continue;
      if (next_input >= inputs.size() || inputs[next_input].size() != bytes)
        throw tile::Error("error: kernel bench: input '" + p.name + "' of kernel " + kernel.name + " needs " +
                          std::to_string(bytes) + " bytes");
      if (bytes > 0)
        check(clEnqueueWriteBuffer(d_.queue, m, CL_TRUE, 0, bytes, inputs[next_input].data(), 0, nullptr, nullptr),
              d_.name() + ": clEnqueueWriteBuffer of " + p.name);
      ++next_input;
    }

    Measurement result;
    for (int run = 0; run < warmup + runs; ++run) {
      // Outputs start at zero (Tile's unwritten elements); the fill is not timed.
      for (size_t i = 0; i < kernel.params.size(); ++i) {
        if (!kernel.params[i].is_output || r.bytes[i] == 0) continue;
        cl_uchar zero = 0;
        check(clEnqueueFillBuffer(d_.queue, r.mems[i], &zero, 1, 0, r.bytes[i], 0, nullptr, nullptr),
              d_.name() + ": clEnqueueFillBuffer");
      }
      check(clFinish(d_.queue), d_.name() + ": clFinish");
      auto start = std::chrono::steady_clock::now();
      enqueue(d_, r.kernel, src.launch, kernel.name);
      check(clFinish(d_.queue), d_.name() + ": clFinish after " + kernel.name);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (run >= warmup) result.seconds.push_back(seconds);
    }
    for (size_t i = 0; i < kernel.params.size(); ++i) {
      if (!kernel.params[i].is_output) continue;
      std::vector<std::byte> out(r.bytes[i]);
      if (!out.empty())
        check(clEnqueueReadBuffer(d_.queue, r.mems[i], CL_TRUE, 0, out.size(), out.data(), 0, nullptr, nullptr),
              d_.name() + ": clEnqueueReadBuffer of " + kernel.params[i].name);
      result.outputs.push_back(std::move(out));
    }
    return result;
  }

 private:
  // Released on every exit, thrown errors included.
  struct Resources {
    cl_kernel kernel = nullptr;
    std::vector<cl_mem> mems;
    std::vector<size_t> bytes;
    ~Resources() {
      for (cl_mem m : mems) clReleaseMemObject(m);
      if (kernel) clReleaseKernel(kernel);
    }
  };

  ClDevice &d_;
  std::string cache_path_;
  KernelCache *cache_ = nullptr;
  std::string fingerprint_;
};

}  // namespace

std::unique_ptr<compiler::tune::KernelBench> make_kernel_bench(int index, const std::string &cache_path) {
  return std::make_unique<OpenCLKernelBench>(index, cache_path);
}

}  // namespace tessera::opencl
