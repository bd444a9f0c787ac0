#include "backends/vulkan/GlslSource.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "backends/clike/CLikePrinter.h"
#include "backends/clike/KernelFrame.h"
#include "tile/Diagnostics.h"

namespace tessera::vulkan {

namespace {

using tile::DType;

// Extensions every shader enables; glslang declares a capability only where a type is used.
constexpr const char *kPrelude =
    "#version 450\n"
    "#extension GL_EXT_shader_explicit_arithmetic_types : require\n"
    "#extension GL_EXT_shader_16bit_storage : require\n"
    "#extension GL_EXT_shader_8bit_storage : require\n"
    "#extension GL_EXT_control_flow_attributes : require\n"
    "#define NAN uintBitsToFloat(0x7fc00000u)\n"
    "#define INFINITY uintBitsToFloat(0x7f800000u)\n";

// The float64 math this dialect computes with helpers of its own (GLSL's exp, log, tanh... take
// float only); every other float64 function is an error rather than a float32 approximation.
const std::set<std::string> kFloat64Math = {"exp", "log", "pow", "tanh", "sinh", "cosh", "sqrt", "floor", "ceil",
                                            "fabs", "fmod", "round"};

class GlslDialect : public clike::Dialect {
 public:
  /// `texel_buffers`: the identifiers of the params it may read through texel buffer views, with
  /// their param indices.
  explicit GlslDialect(std::map<std::string, int> texel_buffers) : texel_buffers_(std::move(texel_buffers)) {}
  // The param indices aligned_load read through texel buffer views.
  mutable std::set<int> texel_reads;

  // Helper definitions in the order they must appear (a helper after those it calls).
  mutable std::vector<std::pair<std::string, std::string>> helpers;

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
      case DType::Float16: return "float";  // stored as float16_t, computed in float (as OpenCL does)
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
  std::string load(const std::string &buffer, DType t, bool global, const std::string &index) const override {
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
  bool reads_groups(const std::string &buffer) const override { return texel_buffers_.count(buffer) > 0; }
  std::string aligned_load(const std::string &buffer, const std::string &first, int component) const override {
    int param = texel_buffers_.at(buffer);
    texel_reads.insert(param);
    return "texelFetch(tsr_t" + std::to_string(param) + ", int(" + first + ") >> 2)." + "xyzw"[component];
  }
  std::string vector_load(const std::string &, int, const std::string &) const override { return unreachable(); }
  std::string vector_store(const std::string &, int, const std::string &, const std::string &) const override {
    return unreachable();
  }
  std::string lane_of(const std::string &, int) const override { return unreachable(); }
  std::string literal_suffix(DType t) const override { return t == DType::Float64 ? "lf" : "f"; }
  std::string cast_to(const std::string &type, const std::string &value) const override {
    return type + "(" + value + ")";
  }
  std::string unroll_pragma() const override { return "[[unroll]]"; }
  std::string fma(const std::string &a, const std::string &b, const std::string &c, DType) const override {
    return "fma(" + a + ", " + b + ", " + c + ")";
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
    if (tile::is_float(from) && !tile::is_float(to)) return sat(from, to) + "(" + v + ")";  // NaN -> 0
    if (t == f) return v;  // half -> float: both compute in float
    return t + "(" + v + ")";
  }

  std::string helper(const std::string &name, DType dtype) override { return const_helper(name, dtype); }
  std::string helper_definitions() const override {
    std::string text;
    for (const auto &[name, def] : helpers) text += def;
    return text;
  }

  std::string math(const std::string &name, DType t, const std::vector<std::string> &args) const override {
    bool f64 = t == DType::Float64;
    if (f64 && !kFloat64Math.count(name))
      throw tile::Error("error: vulkan: GLSL has no float64 '" + name +
                        "' (its transcendental functions take float32 only); compute it in float32");
    auto call = [&](const std::string &fn) {
      std::string s = fn + "(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
      return s + ")";
    };
    if (name == "fabs") return call("abs");
    if (name == "sqrt" || name == "floor" || name == "ceil") return call(name);
    if (name == "fmod" || name == "round" || name == "pow" || name == "erf") return call(const_helper(name, t));
    if (f64) return call(const_helper(name, t));  // exp, log, tanh, sinh, cosh
    return call(name);
  }

 private:
  std::map<std::string, int> texel_buffers_;

  static std::string unreachable() {
    TESSERA_INTERNAL_ASSERT(false, "GLSL has no native vectors in this dialect");
    return "";
  }

  std::string add(const std::string &fn, const std::string &def) const {
    for (const auto &h : helpers)
      if (h.first == fn) return fn;
    helpers.emplace_back(fn, def);
    return fn;
  }

  // The saturating float -> integer conversion to `to` (NaN -> 0, out of range -> the bound).
  std::string sat(DType from, DType to) {
    std::string T = compute_type(to), F = compute_type(from);
    std::string fn = "tsr_sat_" + T + "_" + F;
    int bits = tile::dtype_bits(to);
    bool sgn = tile::is_signed_int(to);
    // Bounds as exact powers of two in F: values at or past them saturate.
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f%s", std::ldexp(1.0, sgn ? bits - 1 : bits), from == DType::Float64 ? "lf" : "f");
    std::string hi = buf;
    std::string lo = sgn ? "(-" + hi + ")" : F + "(0)";
    std::string max = sgn ? T + "(~(" + T + "(1) << " + std::to_string(bits - 1) + "))" : T + "(~" + T + "(0))";
    std::string min = sgn ? T + "(" + T + "(1) << " + std::to_string(bits - 1) + ")" : T + "(0)";
    return add(fn, T + " " + fn + "(" + F + " a) {\n  if (isnan(a)) return " + T + "(0);\n  if (a >= " + hi +
                       ") return " + max + ";\n  if (a <= " + lo + ") return " + min + ";\n  return " + T +
                       "(a);\n}\n");
  }

  std::string const_helper(const std::string &name, DType dtype) const {
    std::string T = compute_type(dtype), fn = "tsr_" + name + "_" + T;
    std::string bits = std::to_string(tile::dtype_bits(dtype));
    bool sgn = tile::is_signed_int(dtype), f64 = dtype == DType::Float64;
    std::string nan = T + "(NAN)", inf = T + "(INFINITY)";
    auto c = [&](const std::string &literal) { return literal + (f64 ? "lf" : "f"); };
    auto two = [&](const std::string &body) { return T + " " + fn + "(" + T + " a, " + T + " b) {\n" + body + "}\n"; };
    auto one = [&](const std::string &body) { return T + " " + fn + "(" + T + " a) {\n" + body + "}\n"; };
    // Integer division never traps: x / 0 = 0, MIN / -1 wraps. GLSL's % is undefined for negative
    // operands, so remainders come from the truncating quotient.
    if (name == "floordiv" || name == "floormod" || name == "truncdiv" || name == "truncmod") {
      bool div = name == "floordiv" || name == "truncdiv", floor = name.rfind("floor", 0) == 0;
      std::string body = "  if (b == " + T + "(0)) return " + T + "(0);\n";
      if (sgn) body += "  if (b == " + T + "(-1)) return " + (div ? T + "(-a)" : T + "(0)") + ";\n";
      body += "  " + T + " q = a / b;\n  " + T + " r = " + T + "(a - q * b);\n";
      if (floor && sgn) body += "  if (r != " + T + "(0) && ((r < " + T + "(0)) != (b < " + T + "(0)))) { q -= " + T +
                                "(1); r += b; }\n";
      body += std::string("  return ") + (div ? "q" : "r") + ";\n";
      return add(fn, two(body));
    }
    if (name == "shl" || name == "shr") {
      // A count outside [0, bits) gives 0 (-1 for a negative value shifted right arithmetically).
      std::string in_range = (sgn ? "b >= " + T + "(0) && " : "") + std::string("b < ") + T + "(" + bits + ")";
      std::string out = name == "shr" && sgn ? T + "(a >> " + std::to_string(tile::dtype_bits(dtype) - 1) + ")" : T + "(0)";
      return add(fn, two("  return (" + in_range + ") ? " + T + "(a " + (name == "shl" ? "<<" : ">>") + " b) : " + out +
                         ";\n"));
    }
    if (name == "fmax_nan" || name == "fmin_nan")  // NaN propagates (numpy maximum/minimum)
      return add(fn, two(std::string("  return (isnan(a) || isnan(b)) ? a + b : (a ") +
                         (name == "fmax_nan" ? ">" : "<") + " b ? a : b);\n"));
    if (name == "relu")
      return add(fn, one(tile::is_float(dtype) ? "  return !(a <= " + T + "(0)) ? a : " + T + "(0);\n"
                                               : "  return a < " + T + "(0) ? " + T + "(0) : a;\n"));
    if (name == "abs") return add(fn, one("  return a < " + T + "(0) ? " + T + "(-a) : a;\n"));
    if (name == "to_half") return add(fn, "float " + fn + "(float a) {\n  return float(float16_t(a));\n}\n");
    if (name == "round")  // half away from zero (C round); a - trunc(a) is exact
      return add(fn, one("  " + T + " t = trunc(a);\n  return abs(a - t) >= " + c("0.5") + " ? t + sign(a) : t;\n"));
    if (name == "fmod")  // C fmod: a - b trunc(a / b), with a's sign and below |b| in magnitude
      return add(fn, two("  if (isnan(a) || isnan(b) || isinf(a) || b == " + T + "(0)) return " + nan +
                         ";\n  if (isinf(b)) return a;\n  " + T + " r = fma(-b, trunc(a / b), a);\n"
                         "  if (r != " + T + "(0) && ((r < " + T + "(0)) != (a < " + T + "(0)))) r += abs(b) * sign(a);\n"
                         "  if (abs(r) >= abs(b)) r -= abs(b) * sign(a);\n  return r;\n"));
    if (name == "pow") {
      // C pow: GLSL's pow is undefined for a < 0 and for a = 0, b <= 0.
      std::string base = f64 ? const_helper("exp", dtype) + "(b * " + const_helper("log", dtype) + "(abs(a)))"
                             : "pow(abs(a), b)";
      return add(fn, two("  if (b == " + T + "(0) || a == " + T + "(1)) return " + T + "(1);\n"
                         "  if (isnan(a) || isnan(b)) return a + b;\n"
                         "  if (a == " + T + "(0)) return b < " + T + "(0) ? " + inf + " : " + T + "(0);\n"
                         "  " + T + " r = " + base + ";\n"
                         "  if (a < " + T + "(0)) {\n"
                         "    if (b != floor(b)) return " + nan + ";\n"
                         "    if (mod(b, " + c("2.0") + ") == " + c("1.0") + ") r = -r;\n"
                         "  }\n  return r;\n"));
    }
    if (name == "erf") {
      // Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7).
      return add(fn, one("  " + T + " x = abs(a), t = " + c("1.0") + " / (" + c("1.0") + " + " + c("0.3275911") +
                         " * x);\n  " + T + " y = " + c("1.0") + " - (((((" + c("1.061405429") + " * t - " + c("1.453152027") +
                         ") * t + " + c("1.421413741") + ") * t - " + c("0.284496736") + ") * t + " + c("0.254829592") +
                         ") * t) * exp(-x * x);\n  return a < " + T + "(0) ? -y : y;\n"));
    }
    // float64 exp/log and what is built on them, to double precision.
    if (name == "exp") {
      // exp(x) = 2^k exp(r), |r| <= ln2/2 (Cody-Waite reduction), exp(r) by its Taylor series.
      return add(fn, one("  if (isnan(a)) return a;\n  if (a > " + c("709.782712893384") + ") return " + inf +
                         ";\n  if (a < " + c("-745.2") + ") return " + c("0.0") + ";\n  " + T + " k = floor(a * " +
                         c("1.4426950408889634") + " + " + c("0.5") + ");\n  " + T + " r = (a - k * " +
                         c("6.93147180369123816490e-01") + ") - k * " + c("1.90821492927058770002e-10") + ";\n  " + T +
                         " s = " + c("1.0") + ";\n  for (int i = 14; i >= 1; --i) s = " + c("1.0") + " + s * r / " + T +
                         "(i);\n  return ldexp(s, int(k));\n"));
    }
    if (name == "expm1") {
      std::string e = const_helper("exp", dtype);
      return add(fn, one("  if (abs(a) >= " + c("0.35") + ") return " + e + "(a) - " + c("1.0") + ";\n  " + T +
                         " s = " + c("1.0") + ";\n  for (int i = 17; i >= 2; --i) s = " + c("1.0") + " + s * a / " + T +
                         "(i);\n  return a * s;\n"));
    }
    if (name == "log") {
      // log(x) = e ln2 + log(m), m in [sqrt(1/2), sqrt(2)): 2 atanh((m-1)/(m+1)) by its series.
      return add(fn, one("  if (isnan(a) || a < " + T + "(0)) return " + nan + ";\n  if (a == " + T + "(0)) return -" +
                         inf + ";\n  if (isinf(a)) return a;\n  int e;\n  " + T + " m = frexp(a, e);\n  if (m < " +
                         c("0.70710678118654752") + ") { m *= " + c("2.0") + "; e -= 1; }\n  " + T + " f = (m - " +
                         c("1.0") + ") / (m + " + c("1.0") + "), f2 = f * f, s = " + T + "(0);\n"
                         "  for (int i = 25; i >= 1; i -= 2) s = s * f2 + " + c("1.0") + " / " + T + "(i);\n"
                         "  return " + T + "(e) * " + c("6.93147180369123816490e-01") + " + (" + c("2.0") + " * f * s + " +
                         T + "(e) * " + c("1.90821492927058770002e-10") + ");\n"));
    }
    if (name == "tanh") {
      std::string em1 = const_helper("expm1", dtype);
      return add(fn, one("  " + T + " x = abs(a);\n  if (x > " + c("22.0") + ") return sign(a);\n  " + T + " t = " + em1 +
                         "(" + c("2.0") + " * x);\n  return sign(a) * (t / (t + " + c("2.0") + "));\n"));
    }
    if (name == "sinh") {
      std::string em1 = const_helper("expm1", dtype);
      return add(fn, one("  return (" + em1 + "(a) - " + em1 + "(-a)) * " + c("0.5") + ";\n"));
    }
    if (name == "cosh") {
      std::string e = const_helper("exp", dtype);
      return add(fn, one("  return (" + e + "(a) + " + e + "(-a)) * " + c("0.5") + ";\n"));
    }
    TESSERA_INTERNAL_ASSERT(false, "unknown GLSL helper " + name);
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

}  // namespace

KernelSource kernel_source(const compiler::Kernel &k) {
  // Params read by aligned groups of four (finish_kernel marks float32 inputs that fit a texel
  // buffer view) are read through R32G32B32A32 texel views.
  std::map<std::string, int> texel_buffers;
  for (size_t i = 0; i < k.params.size(); ++i)
    if (k.params[i].grouped_reads) texel_buffers[clike::CLikePrinter::identifier(k.params[i].name)] = static_cast<int>(i);
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
               dialect.memory_type(p.dtype) + " " + clike::CLikePrinter::identifier(p.name) + "[]; };\n";
  }
  for (size_t j = 0; j < ks.texel_params.size(); ++j)
    buffers += "layout(set = 0, binding = " + std::to_string(k.params.size() + j) + ") uniform samplerBuffer tsr_t" +
               std::to_string(ks.texel_params[j]) + ";\n";
  std::string shared;
  for (const auto &l : frame.body.locals) shared += l + "\n";

  std::string layout, main_fn = "void main() {\n";
  if (ks.launch.dims > 0 && !ks.launch.driver_local) {
    // A fixed work-group shape: every invocation runs (barriers need them all), no bounds check.
    const auto &l = ks.launch.local;
    layout = "layout(local_size_x = " + std::to_string(l[0]) + ", local_size_y = " + std::to_string(l[1]) +
             ", local_size_z = " + std::to_string(l[2]) + ") in;\n";
  } else {
    // The outermost parallel loop's iterations (or one) are the invocations, their index spanning
    // a 2-D grid of work-groups when the count exceeds the device's limit in x.
    if (ks.launch.driver_local) ks.invocations = ks.launch.groups[0];
    layout = "layout(local_size_x_id = " + std::to_string(kLocalSizeId) + ") in;\nlayout(constant_id = " +
             std::to_string(kCountId) + ") const uint TSR_COUNT = " + std::to_string(ks.invocations) + "u;\n";
    main_fn +=
        "  const uint tsr_id = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * "
        "gl_WorkGroupSize.x;\n"
        "  if (tsr_id >= TSR_COUNT) return;\n";
  }
  main_fn += frame.ids + frame.body.code + "}\n";
  ks.source = kPrelude + layout + buffers + shared + frame.helpers + main_fn;
  ks.needs = features_of(frame.types);
  return ks;
}

void check_features(const KernelSource &src, const ShaderFeatures &has, const std::string &device_label) {
  const std::pair<bool, const char *> missing[] = {
      {src.needs.float64 && !has.float64, "float64 (shaderFloat64)"},
      {src.needs.float16 && !has.float16, "float16 (shaderFloat16 and 16-bit storage buffers)"},
      {src.needs.int64 && !has.int64, "int64 (shaderInt64)"},
      {src.needs.int16 && !has.int16, "int16 (shaderInt16 and 16-bit storage buffers)"},
      {src.needs.int8 && !has.int8, "int8 and bool (shaderInt8 and 8-bit storage buffers)"},
  };
  for (const auto &[lacks, what] : missing)
    if (lacks)
      throw tile::Error("error: " + device_label + " has no " + what + " support: kernel " + src.name + " needs it");
}

}  // namespace tessera::vulkan
