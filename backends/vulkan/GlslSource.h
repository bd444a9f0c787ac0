// Loop IR kernels as GLSL 450 compute shaders: the GLSL dialect of the C-like printer and the
// kernel frame (the outermost parallel loop becomes the invocations, one per iteration).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/clike/GpuLaunch.h"
#include "compiler/IR.h"

namespace tessera::vulkan {

/// Shader features beyond core Vulkan 1.0 compute: what a shader uses, or what a device has.
struct ShaderFeatures {
  bool float64 = false;  // shaderFloat64
  bool float16 = false;  // shaderFloat16 and storageBuffer16BitAccess
  bool int64 = false;    // shaderInt64
  bool int16 = false;    // shaderInt16 and storageBuffer16BitAccess
  bool int8 = false;     // shaderInt8 and storageBuffer8BitAccess (also bool buffers)
};

/// The float widths whose Inf, NaN and signed zeros a device keeps when a shader asks for it
/// (SignedZeroInfNanPreserve, Vulkan 1.2's shaderSignedZeroInfNanPreserveFloatN). Without it a
/// driver may fold `x - x` to 0 (lavapipe does), which loses the NaN that x = Inf or NaN gives on
/// interp and every other device (docs/tile-semantics.md). Products and quotients with a literal
/// zero need more than this on lavapipe: see GlslDialect::zero_product.
struct NanPreserve {
  bool float16 = false;
  bool float32 = false;
  bool float64 = false;
};

// The frame's specialization constants where the driver picks the work-group size (a kernel
// without GPU loops): that size and the number of invocations that run an iteration (the rest
// exit at the bounds check).
inline constexpr uint32_t kLocalSizeId = 0;
inline constexpr uint32_t kCountId = 1;

struct KernelSource {
  std::string name;         // the kernel's name (for messages)
  std::string source;       // a complete GLSL 450 compute shader
  clike::GpuLaunch launch;  // dims 0: one invocation; driver_local: `invocations` in 1-D
  int64_t invocations = 1;  // driver_local: iterations of the parallel loop; else 1
  int buffers = 0;          // storage buffers, bindings 0 .. buffers - 1
  /// Params (float32 inputs) also read four elements at a time through a uniform texel buffer
  /// view of format R32G32B32A32_SFLOAT over their whole buffer: texel_params[j] at binding
  /// buffers + j.
  std::vector<int> texel_params;
  ShaderFeatures needs;
};

/// The shader of finished kernel `kernel` (compiler/Finish.h); storage buffer `i` (set 0, binding
/// i) is kernel.params[i]. Params read in groups (BufferParam::grouped_reads) may be read through
/// texel buffer views too (KernelSource::texel_params). Throws tile::Error for what GLSL cannot
/// express (float64 transcendental functions it has no helper for). The shader asks to keep Inf,
/// NaN and signed zeros in each width of `preserve` that it computes in.
KernelSource kernel_source(const compiler::Kernel &kernel, const NanPreserve &preserve = {});

/// Throws tile::Error naming the first feature `src` needs that `has` lacks, e.g.
/// "vulkan:0 (llvmpipe) has no float64 support: kernel C needs it".
void check_features(const KernelSource &src, const ShaderFeatures &has,
                    const std::string &device_label);

}  // namespace tessera::vulkan
