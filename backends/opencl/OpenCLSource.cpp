#include "backends/opencl/OpenCLSource.h"

#include "backends/clike/CLikePrinter.h"
#include "backends/clike/HelperLibrary.h"
#include "backends/clike/KernelFrame.h"
#include "backends/opencl/OpenCLHelpers.h"

#include <map>

namespace tessera::opencl {

namespace {

using tile::DType;

class OpenCLDialect : public clike::Dialect {
 public:
  std::string compute_type(DType t) const override {
    switch (t) {
      case DType::Bool: return "bool";
      case DType::Int8: return "char";
      case DType::UInt8: return "uchar";
      case DType::Int16: return "short";
      case DType::UInt16: return "ushort";
      case DType::Int32: return "int";
      case DType::UInt32: return "uint";
      case DType::Int64: return "long";
      case DType::UInt64: return "ulong";
      case DType::Float16:
        return "float";  // stored as half (vload_half/vstore_half: no cl_khr_fp16 needed)
      case DType::Float32: return "float";
      case DType::Float64: return "double";
    }
    return "?";
  }
  std::string memory_type(DType t) const override {
    if (t == DType::Bool) return "uchar";
    if (t == DType::Float16) return "half";
    return compute_type(t);
  }
  std::string vector_type(DType t, int lanes) const override {
    bool width = lanes == 2 || lanes == 3 || lanes == 4 || lanes == 8 || lanes == 16;
    bool type = t == DType::Float32 || t == DType::Float64 || t == DType::Int32 ||
                t == DType::UInt32 || t == DType::Int64 || t == DType::UInt64;
    return width && type ? compute_type(t) + std::to_string(lanes) : "";
  }
  std::string load(const std::string &buffer, DType t, bool global,
                   const std::string &index) const override {
    if (global && t == DType::Float16) return "vload_half(" + index + ", " + buffer + ")";
    return Dialect::load(buffer, t, global, index);
  }
  std::string store(const std::string &buffer, DType t, bool global, const std::string &index,
                    const std::string &value) const override {
    if (global && t == DType::Float16)
      return "vstore_half_rte(" + value + ", " + index + ", " + buffer + ");";
    return Dialect::store(buffer, t, global, index, value);
  }
  // clang's builtin (PoCL's prefetch() compiles to nothing): read, keep in L2 and outward. A
  // prefetch past a buffer's end is a hint, never a fault.
  std::string prefetch(const std::string &buffer, const std::string &address) const override {
    return "__builtin_prefetch(" + buffer + " + " + address + ", 0, 2);";
  }
  std::string vector_load(const std::string &buffer, int lanes,
                          const std::string &base) const override {
    return "vload" + std::to_string(lanes) + "(0, " + buffer + " + " + base + ")";
  }
  // A store to global memory goes through a pointer to a vector type aligned like its elements
  // (may_alias: the kernel reads the same memory as scalars): one instruction where PoCL made of
  // vstore16 three (16, 16 and 32 bytes). MobileNetV2's kernels on PoCL, mostly writing, 4.25 ->
  // 3.99 ms (Zen 4).
  std::string vector_store(const std::string &buffer, DType dtype, bool global, int lanes,
                           const std::string &base, const std::string &value) override {
    std::string type = vector_type(dtype, lanes);
    if (!global || type.empty())
      return "vstore" + std::to_string(lanes) + "(" + value + ", 0, " + buffer + " + " + base +
             ");";
    store_types_[type] = tile::dtype_size(dtype);
    return "*(__global " + unaligned(type) + " *)(" + buffer + " + " + base + ") = " + value + ";";
  }
  std::string lane_of(const std::string &vector, int lane) const override {
    return vector + ".s" + "0123456789abcdef"[lane];
  }
  std::string convert(const std::string &v, DType from, DType to) override {
    std::string t = compute_type(to);
    if (to == DType::Bool) return "(" + v + " != 0)";
    if (to == DType::Float16) {
      if (from == DType::Float32 || from == DType::Float16)
        return helper("to_half", to) + "(" + v + ")";
      return helper("to_half", to) + "((float)(" + v + "))";
    }
    if (tile::is_float(from) && !tile::is_float(to))
      return "convert_" + t + "_sat(" + v + ")";  // NaN -> 0
    if (from == DType::Float16 && to == DType::Float32) return v;
    return "((" + t + ")(" + v + "))";
  }
  std::string helper(const std::string &name, DType dtype) override {
    return helpers_.use(name, dtype);
  }
  // float32 erf by the helper (vector_helper says why); float64 keeps the built-in's precision.
  std::string math(const std::string &name, DType dtype,
                   const std::vector<std::string> &args) override {
    if (name == "erf" && dtype == DType::Float32)
      return helpers_.use(name, dtype) + "(" + args[0] + ")";
    return clike::Dialect::math(name, dtype, args);
  }
  std::string helper_definitions() const override {
    std::string typedefs;
    for (const auto &[type, bytes] : store_types_)
      typedefs += "typedef " + type + " __attribute__((aligned(" + std::to_string(bytes) +
                  "), may_alias)) " + unaligned(type) + ";\n";
    return typedefs + helpers_.text();
  }
  // OpenCL C applies ||, !, comparisons and ?: to vectors component by component, so the
  // NaN-propagating max and min and relu are the scalar definitions on floatN (a max pool's
  // accumulator, a convolution's relu epilogue: one vector operation, not 16 calls).
  std::string vector_helper(const std::string &name, DType dtype, int lanes, bool define) override {
    bool known = name == "fmax_nan" || name == "fmin_nan" || name == "relu" ||
                 (name == "erf" && dtype == DType::Float32);
    if (!known || !tile::is_float(dtype) || vector_type(dtype, lanes).empty()) return "";
    return define ? helpers_.use_vector(name, dtype, lanes) : name;
  }
  std::string fma(const std::string &a, const std::string &b, const std::string &c,
                  DType) const override {
    return "fma(" + a + ", " + b + ", " + c + ")";
  }
  std::string gpu_id(clike::GpuId::Kind kind, int dim) const override {
    std::string d = "(" + std::to_string(dim) + ")";
    switch (kind) {
      case clike::GpuId::Kind::Group: return "get_group_id" + d;
      case clike::GpuId::Kind::Local: return "get_local_id" + d;
      case clike::GpuId::Kind::Global: return "get_global_id" + d;
    }
    return "?";
  }
  std::string barrier() const override { return "barrier(CLK_LOCAL_MEM_FENCE);"; }
  std::string local_qualifier() const override { return "__local"; }

 private:
  static std::string unaligned(const std::string &vector_type) {
    return "tsr_" + vector_type + "_u";
  }

  clike::HelperLibrary helpers_{*this, opencl_helpers()};
  std::map<std::string, size_t> store_types_;  // vector types stored under-aligned: element bytes
};

}  // namespace

KernelSource kernel_source(const compiler::Kernel &k) {
  OpenCLDialect dialect;
  clike::KernelFrame frame = clike::kernel_frame(dialect, k);
  KernelSource ks;
  ks.entry = "tk_" + clike::CLikePrinter::identifier(k.name);
  ks.launch = frame.launch;
  std::string signature;
  // A fixed work-group shape lets the driver compile the work-group function once, ahead.
  if (ks.launch.dims > 0 && !ks.launch.driver_local)
    signature = "__attribute__((reqd_work_group_size(" + std::to_string(ks.launch.local[0]) + ", " +
                std::to_string(ks.launch.local[1]) + ", " + std::to_string(ks.launch.local[2]) +
                ")))\n";
  signature += "__kernel void " + ks.entry + "(";
  for (size_t i = 0; i < k.params.size(); ++i) {
    const auto &p = k.params[i];
    signature += std::string(i ? ", " : "") + "__global " + (p.is_output ? "" : "const ") +
                 dialect.memory_type(p.dtype) + " *restrict " +
                 clike::CLikePrinter::identifier(p.name);
  }
  signature += ") {\n";
  std::string locals;
  for (const auto &l : frame.body.locals) locals += "  " + l + "\n";
  ks.uses_fp64 = frame.types.uses(DType::Float64);
  ks.source = std::string(ks.uses_fp64 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" : "") +
              frame.helpers + signature + locals + frame.ids + frame.body.code + "}\n";
  return ks;
}

}  // namespace tessera::opencl
