#include "backends/vulkan/GlslSource.h"

#include <initializer_list>
#include <map>
#include <set>
#include <utility>

#include "backends/clike/CLikePrinter.h"
#include "backends/clike/HelperLibrary.h"
#include "backends/clike/KernelFrame.h"
#include "backends/vulkan/GlslHelpers.h"
#include "tile/Diagnostics.h"

namespace tessera::vulkan {

namespace {

using tile::DType;

// Extensions every shader enables; glslang declares a capability only where a type is used.
constexpr const char *kPrelude = "#version 450\n"
                                 "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
                                 "#extension GL_EXT_shader_16bit_storage : require\n"
                                 "#extension GL_EXT_shader_8bit_storage : require\n"
                                 "#extension GL_EXT_control_flow_attributes : require\n"
                                 "#define NAN uintBitsToFloat(0x7fc00000u)\n"
                                 "#define INFINITY uintBitsToFloat(0x7f800000u)\n";

// The float64 math this dialect computes with helpers of its own (GLSL's exp, log, tanh... take
// float only); every other float64 function is an error rather than a float32 approximation.
const std::set<std::string> kFloat64Math = {"exp",  "log",   "pow",  "tanh", "sinh", "cosh",
                                            "sqrt", "floor", "ceil", "fabs", "fmod", "round"};

class GlslDialect : public clike::Dialect {
 public:
  /// `texel_buffers`: the identifiers of the params it may read through texel buffer views, with
  /// their param indices.
  explicit GlslDialect(std::map<std::string, int> texel_buffers)
      : texel_buffers_(std::move(texel_buffers)) {}
  // The param indices aligned_load read through texel buffer views.
  mutable std::set<int> texel_reads;

  std::string compute_type(DType t) const override {
    switch (t) {
      case DType::Bool: return "bool";
      case DType::Int8: return "int8_t";
      case DType::UInt8: return "uint8_t";
      case DType::Int16: return "int16_t";
      case DType::UInt16: return "uint16_t";
      case DType::Int32: return "int";
      case DType::UInt32: return "uint";
      case DType::Int64: return "int64_t";
      case DType::UInt64: return "uint64_t";
      case DType::Float16:
        return "float";  // stored as float16_t, computed in float (as OpenCL does)
      case DType::Float32: return "float";
      case DType::Float64: return "double";
    }
    return "?";
  }
  std::string memory_type(DType t) const override {
    if (t == DType::Bool) return "uint8_t";
    if (t == DType::Float16) return "float16_t";
    return compute_type(t);
  }
  // No native vectors: on GPUs and on lavapipe alike the SIMD lanes are the invocations, so
  // vector IR is printed lane by lane (which also keeps every helper scalar).
  std::string vector_type(DType, int) const override { return ""; }
  std::string load(const std::string &buffer, DType t, bool global,
                   const std::string &index) const override {
    std::string v = buffer + "[int(" + index + ")]";
    if (t == DType::Bool) return "(uint(" + v + ") != 0u)";
    if (global && t == DType::Float16) return "float(" + v + ")";
    return v;
  }
  std::string store(const std::string &buffer, DType t, bool global, const std::string &index,
                    const std::string &value) const override {
    std::string v = value;
    if (t == DType::Bool) v = "uint8_t((" + value + ") ? 1u : 0u)";
    if (global && t == DType::Float16) v = "float16_t(" + value + ")";
    return buffer + "[int(" + index + ")] = " + v + ";";
  }
  // llvmpipe fetches a 16-byte texel per lane for about the cost of one storage-buffer element
  // (SGEMM 1024 with both operands read by texels: 3-5x faster); the fetches of one group print
  // alike and NIR merges them.
  bool reads_groups(const std::string &buffer) const override {
    return texel_buffers_.count(buffer) > 0;
  }
  std::string aligned_load(const std::string &buffer, const std::string &first,
                           int component) const override {
    int param = texel_buffers_.at(buffer);
    texel_reads.insert(param);
    return "texelFetch(tsr_t" + std::to_string(param) + ", int(" + first + ") >> 2)." +
           "xyzw"[component];
  }
  std::string vector_load(const std::string &, int, const std::string &) const override {
    return unreachable();
  }
  std::string vector_store(const std::string &, DType, bool, int, const std::string &,
                           const std::string &) override {
    return unreachable();
  }
  std::string lane_of(const std::string &, int) const override { return unreachable(); }
  std::string literal_suffix(DType t) const override { return t == DType::Float64 ? "lf" : "f"; }
  std::string cast_to(const std::string &type, const std::string &value) const override {
    return type + "(" + value + ")";
  }
  std::string unroll_pragma() const override { return "[[unroll]]"; }
  std::string fma(const std::string &a, const std::string &b, const std::string &c,
                  DType) const override {
    return "fma(" + a + ", " + b + ", " + c + ")";
  }
  // llvmpipe computes 0 * x and 0 / x as 0 for every x, below where the float controls or
  // `precise` reach, so these print as helpers that test for the NaN and Inf cases first.
  std::string zero_product(char op, const std::string &a, const std::string &b, DType t) override {
    return helper(op == '/' ? "fdiv_exact" : "fmul_exact", t) + "(" + a + ", " + b + ")";
  }
  std::string gpu_id(clike::GpuId::Kind kind, int dim) const override {
    std::string d = std::string(".") + "xyz"[dim];
    switch (kind) {
      case clike::GpuId::Kind::Group: return "gl_WorkGroupID" + d;
      case clike::GpuId::Kind::Local: return "gl_LocalInvocationID" + d;
      case clike::GpuId::Kind::Global: return "tsr_id";  // 1-D, defined by main's first line
    }
    return "?";
  }
  std::string barrier() const override { return "memoryBarrierShared(); barrier();"; }
  std::string local_qualifier() const override { return "shared"; }

  std::string convert(const std::string &v, DType from, DType to) override {
    std::string t = compute_type(to), f = compute_type(from);
    if (to == DType::Bool) return "(" + v + " != " + f + "(0))";
    if (from == DType::Bool) return "((" + v + ") ? " + t + "(1) : " + t + "(0))";
    if (to == DType::Float16) return helper("to_half", to) + "(float(" + v + "))";
    // Saturating, NaN -> 0.
    if (tile::is_float(from) && !tile::is_float(to))
      return helpers_.use("sat", from, to) + "(" + v + ")";
    if (t == f) return v;  // half -> float: both compute in float
    return t + "(" + v + ")";
  }

  std::string helper(const std::string &name, DType dtype) override {
    return helpers_.use(name, dtype);
  }
  std::string helper_definitions() const override { return helpers_.text(); }

  std::string math(const std::string &name, DType t,
                   const std::vector<std::string> &args) override {
    bool f64 = t == DType::Float64;
    if (f64 && !kFloat64Math.count(name))
      throw tile::Error(
          "error: vulkan: GLSL has no float64 '" + name +
          "' (its transcendental functions take float32 only); compute it in float32");
    auto call = [&](const std::string &fn) {
      std::string s = fn + "(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      return s + ")";
    };
    if (name == "fabs") return call("abs");
    if (name == "sqrt" || name == "floor" || name == "ceil") return call(name);
    if (name == "fmod" || name == "round" || name == "pow" || name == "erf")
      return call(helpers_.use(name, t));
    if (f64) return call(helpers_.use(name, t));  // exp, log, tanh, sinh, cosh
    return call(name);
  }

 private:
  std::map<std::string, int> texel_buffers_;
  clike::HelperLibrary helpers_{*this, glsl_helpers()};

  static std::string unreachable() {
    TESSERA_INTERNAL_ASSERT(false, "GLSL has no native vectors in this dialect");
    return "";
  }
};

// What the kernel's types need beyond Vulkan 1.0: bools are stored as uint8_t, float16 values as
// float16_t (computed in float).
ShaderFeatures features_of(const clike::KernelTypes &types) {
  auto any = [&](std::initializer_list<DType> dtypes) {
    for (DType t : dtypes)
      if (types.uses(t)) return true;
    return false;
  };
  ShaderFeatures f;
  f.float64 = any({DType::Float64});
  f.float16 = any({DType::Float16});
  f.int64 = any({DType::Int64, DType::UInt64});
  f.int16 = any({DType::Int16, DType::UInt16});
  f.int8 = any({DType::Int8, DType::UInt8}) || types.arrays.count(DType::Bool);
  return f;
}

// SignedZeroInfNanPreserve (execution mode 4461, capability 4466, SPV_KHR_float_controls) for the
// widths the shader computes in: float16 values are computed in float, so float32 always.
std::string nan_preserve_modes(const NanPreserve &has, const ShaderFeatures &needs) {
  std::string modes;
  for (auto [width, wanted] :
       {std::pair{16, needs.float16 && has.float16}, std::pair{32, has.float32},
        std::pair{64, needs.float64 && has.float64}})
    if (wanted)
      modes += "spirv_execution_mode(extensions = [\"SPV_KHR_float_controls\"], capabilities = "
               "[4466], 4461, " +
               std::to_string(width) + ");\n";
  return modes.empty() ? "" : "#extension GL_EXT_spirv_intrinsics : require\n" + modes;
}

}  // namespace

KernelSource kernel_source(const compiler::Kernel &k, const NanPreserve &preserve) {
  // Params read by aligned groups of four (finish_kernel marks float32 inputs that fit a texel
  // buffer view) are read through R32G32B32A32 texel views.
  std::map<std::string, int> texel_buffers;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].grouped_reads)
      texel_buffers[clike::CLikePrinter::identifier(k.params[i].name)] = static_cast<int>(i);
  GlslDialect dialect(std::move(texel_buffers));
  clike::KernelFrame frame = clike::kernel_frame(dialect, k);
  KernelSource ks;
  ks.name = k.name;
  ks.buffers = static_cast<int>(k.params.size());
  ks.launch = frame.launch;
  ks.texel_params.assign(dialect.texel_reads.begin(), dialect.texel_reads.end());

  std::string buffers;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const auto &p = k.params[i];
    buffers += "layout(std430, set = 0, binding = " + std::to_string(i) + ") restrict " +
               (p.is_output ? "" : "readonly ") + "buffer tsr_b" + std::to_string(i) + " { " +
               dialect.memory_type(p.dtype) + " " + clike::CLikePrinter::identifier(p.name) +
               "[]; };\n";
  }
  for (size_t j = 0; j < ks.texel_params.size(); ++j)
    buffers += "layout(set = 0, binding = " + std::to_string(k.params.size() + j) +
               ") uniform samplerBuffer tsr_t" + std::to_string(ks.texel_params[j]) + ";\n";
  std::string shared;
  for (const auto &l : frame.body.locals) shared += l + "\n";

  std::string layout, main_fn = "void main() {\n";
  if (ks.launch.dims > 0 && !ks.launch.driver_local) {
    // A fixed work-group shape: every invocation runs (barriers need them all), no bounds check.
    const auto &l = ks.launch.local;
    layout = "layout(local_size_x = " + std::to_string(l[0]) +
             ", local_size_y = " + std::to_string(l[1]) +
             ", local_size_z = " + std::to_string(l[2]) + ") in;\n";
  } else {
    // The outermost parallel loop's iterations (or one) are the invocations, their index spanning
    // a 2-D grid of work-groups when the count exceeds the device's limit in x.
    if (ks.launch.driver_local) ks.invocations = ks.launch.groups[0];
    layout = "layout(local_size_x_id = " + std::to_string(kLocalSizeId) +
             ") in;\nlayout(constant_id = " + std::to_string(kCountId) +
             ") const uint TSR_COUNT = " + std::to_string(ks.invocations) + "u;\n";
    main_fn += "  const uint tsr_id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * "
               "gl_NumWorkGroups.x * "
               "gl_WorkGroupSize.x;\n"
               "  if (tsr_id >= TSR_COUNT) return;\n";
  }
  main_fn += frame.ids + frame.body.code + "}\n";
  ks.needs = features_of(frame.types);
  ks.source = kPrelude + nan_preserve_modes(preserve, ks.needs) + layout + buffers + shared +
              frame.helpers + main_fn;
  return ks;
}

void check_features(const KernelSource &src, const ShaderFeatures &has,
                    const std::string &device_label) {
  const std::pair<bool, const char *> missing[] = {
      {src.needs.float64 && !has.float64, "float64 (shaderFloat64)"},
      {src.needs.float16 && !has.float16, "float16 (shaderFloat16 and 16-bit storage buffers)"},
      {src.needs.int64 && !has.int64, "int64 (shaderInt64)"},
      {src.needs.int16 && !has.int16, "int16 (shaderInt16 and 16-bit storage buffers)"},
      {src.needs.int8 && !has.int8, "int8 and bool (shaderInt8 and 8-bit storage buffers)"},
  };
  for (const auto &[lacks, what] : missing)
    if (lacks)
      throw tile::Error("error: " + device_label + " has no " + what + " support: kernel " +
                        src.name + " needs it");
}

}  // namespace tessera::vulkan
