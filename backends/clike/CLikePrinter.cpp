#include "backends/clike/CLikePrinter.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <regex>

#include "compiler/AlignedLoads.h"
#include "compiler/IRVisitor.h"
#include "tile/Diagnostics.h"

namespace tessera::clike {

using compiler::as;
using compiler::Expr;
using compiler::Stmt;
using tile::DType;
using Op = compiler::Binary::Op;
using tile::Intrinsic;

std::string Dialect::load(const std::string &buffer, DType dtype, bool,
                          const std::string &index) const {
  std::string v = buffer + "[" + index + "]";
  return dtype == DType::Bool ? "(" + v + " != 0)" : v;
}

std::string Dialect::store(const std::string &buffer, DType dtype, bool global,
                           const std::string &index, const std::string &value) const {
  // Global buffers hold memory types; the printer's own arrays what it declares them with
  // (Allocate below): compute types (half in float), bools as bytes. A (half) cast into a float
  // array needs cl_khr_fp16, which NVIDIA's OpenCL lacks.
  std::string mt = global || dtype == DType::Bool ? memory_type(dtype) : compute_type(dtype);
  std::string v = mt == compute_type(dtype) ? value : "(" + mt + ")(" + value + ")";
  return buffer + "[" + index + "] = " + v + ";";
}

std::string Dialect::math(const std::string &name, DType, const std::vector<std::string> &args) {
  std::string s = name + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

std::string Dialect::literal_suffix(DType dtype) const {
  return dtype == DType::Float64 ? "" : "f";
}

namespace {

bool is_comparison(Op op) {
  return op == Op::EQ || op == Op::NE || op == Op::LT || op == Op::LE || op == Op::GT ||
         op == Op::GE;
}

const char *c_op(Op op) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Sub: return "-";
    case Op::Mul: return "*";
    case Op::Div: return "/";
    case Op::Mod: return "%";
    case Op::EQ: return "==";
    case Op::NE: return "!=";
    case Op::LT: return "<";
    case Op::LE: return "<=";
    case Op::GT: return ">";
    case Op::GE: return ">=";
    case Op::And: return "&&";
    case Op::Or: return "||";
    case Op::BitAnd: return "&";
    case Op::BitOr: return "|";
    case Op::BitXor: return "^";
    case Op::Shl: return "<<";
    case Op::Shr: return ">>";
    case Op::Min:
    case Op::Max: return "?";  // calls, never infix
  }
  return "?";
}

// A Ramp of stride 1: a contiguous vector access starting at its base.
const compiler::Ramp *dense_ramp(const Expr &index) {
  auto *r = as<compiler::Ramp>(index);
  if (!r) return nullptr;
  auto *s = as<compiler::IntImm>(r->stride);
  return s && s->value == 1 ? r : nullptr;
}

std::string braced(const std::string &s) { return "(" + s + ")"; }

// The contiguous vector reads of the buffers in `ahead` in a loop's body, outside the loops nested
// in it: where that loop prefetches.
class PrefetchedReads : public compiler::IRVisitor {
 public:
  explicit PrefetchedReads(const std::map<std::string, int64_t> &ahead) : ahead_(ahead) {}
  std::vector<const compiler::Load *> reads;
  using IRVisitor::visit;
  void visit(const compiler::For *op) override { (void)op; }
  void visit(const compiler::Load *op) override {
    if (op->type.lanes > 1 && ahead_.count(op->buffer) && dense_ramp(op->index))
      reads.push_back(op);
    IRVisitor::visit(op);
  }

 private:
  const std::map<std::string, int64_t> &ahead_;
};

}  // namespace

CLikePrinter::CLikePrinter(Dialect &dialect, const std::vector<compiler::BufferParam> &params)
    : dialect_(dialect) {
  for (const auto &p : params) {
    buffers_[identifier(p.name)] = {p.dtype, true};
    if (p.prefetch_ahead > 0) prefetch_ahead_[p.name] = p.prefetch_ahead;
  }
}

void CLikePrinter::prefetch(const compiler::For &loop) {
  PrefetchedReads found(prefetch_ahead_);
  found.visit_stmt(loop.body);
  std::vector<std::string> lines;
  for (const compiler::Load *l : found.reads) {
    std::string base = scalar(dense_ramp(l->index)->base, 0) + " + " +
                       std::to_string(prefetch_ahead_.at(l->buffer)) + "L";
    std::string text = dialect_.prefetch(identifier(l->buffer), base);
    if (!text.empty() && std::find(lines.begin(), lines.end(), text) == lines.end())
      lines.push_back(text);
  }
  if (lines.empty()) return;
  std::string first;  // the enclosing serial loops at their first iteration
  for (const auto &[v, lo] : serial_loops_) first += (first.empty() ? "" : " && ") + v + " == " + lo;
  if (!first.empty()) line("if (" + first + ") {");
  for (const auto &text : lines) line((first.empty() ? "" : "  ") + text);
  if (!first.empty()) line("}");
}

namespace {

// Type names that are reserved words without being listed: GLSL's explicit-width types (int8_t,
// uint16_t, float16_t, ..., i8vec2, f16vec4, u64vec3, f32mat2x3) and OpenCL C's vector and matrix
// types (float4, int16, double4x4, bool2, quad8).
bool reserved_type_name(const std::string &s) {
  static const std::regex type(
      "(u?int(8|16|32|64)_t|float(16|32|64)_t|"
      "(b|i|u|d|i8|i16|i32|i64|u8|u16|u32|u64|f16|f32|f64)vec[234]|"
      "(d|f16|f32|f64)?mat[234](x[234])?|"
      "(bool|char|uchar|short|ushort|int|uint|long|ulong|half|float|double|quad)"
      "(2|3|4|8|16)?(x(2|3|4|8|16))?)");
  return s.find_first_of("0123456789") != std::string::npos && std::regex_match(s, type);
}

}  // namespace

std::string CLikePrinter::identifier(const std::string &name) {
  static const std::set<std::string> reserved = {
      "int", "float", "double", "half", "char", "short", "long", "uint", "uchar", "ushort", "ulong",
      "bool", "void", "if", "else", "for", "while", "do", "return", "break", "continue", "const",
      "global", "local", "private", "constant", "kernel", "restrict", "volatile", "struct", "union",
      "enum", "typedef", "sizeof", "switch", "case", "default", "goto", "static", "extern", "auto",
      "register", "signed", "unsigned", "inline", "true", "false", "in", "out", "inout", "uniform",
      "buffer", "shared", "layout", "main", "exp", "log", "sqrt", "pow", "min", "max", "abs",
      "fabs", "sin", "cos", "tan", "floor", "ceil", "round", "select", "clamp", "mix", "sign",
      "dot", "length", "image", "sampler", "read_only", "write_only", "NAN", "INFINITY", "erf",
      "tanh", "sinh", "cosh", "asin", "acos", "atan", "fmod", "fmax", "fmin", "printf", "barrier",
      "isnan", "size_t", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3",
      "uvec4", "bvec2", "bvec3", "bvec4", "dvec2", "dvec3", "dvec4", "mat2", "mat3", "mat4",
      // OpenCL C's other types and reserved words
      "ptrdiff_t", "intptr_t", "uintptr_t", "event_t", "sampler_t", "image1d_t", "image2d_t",
      "image3d_t", "image1d_array_t", "image1d_buffer_t", "image2d_array_t", "complex", "imaginary",
      "quad", "__global", "opencl_unroll_hint", "typeof", "inline", "_Bool",
      // GLSL's other reserved words and the built-in functions generated code may call
      "atomic_uint", "precision", "highp", "mediump", "lowp", "invariant", "precise", "flat",
      "smooth", "noperspective", "centroid", "patch", "sample", "coherent", "readonly", "writeonly",
      "subroutine", "attribute", "varying", "discard", "common", "partition", "active", "asm",
      "class", "template", "this", "resource", "noinline", "public", "external", "interface",
      "input", "output", "filter", "cast", "namespace", "using", "row_major", "packed", "superp",
      "fixed", "lowp", "texture", "mod", "fract", "trunc", "step", "any", "all", "not", "exp2",
      "log2", "atan2", "inversesqrt", "isinf", "floatBitsToInt", "intBitsToFloat",
      "uintBitsToFloat", "floatBitsToUint", "packHalf2x16", "unpackHalf2x16", "roundEven",
      "smoothstep", "memoryBarrierShared", "groupMemoryBarrier", "mem_fence", "vload4", "vstore4",
      "convert_float", "as_float", "as_int", "as_uint", "native_exp", "native_log", "hypot",
      "copysign", "expm1", "log1p", "cbrt", "rsqrt", "sincos", "mad", "fma", "upsample", "rotate",
      "popcount", "clz", "atan2pi"};
  std::string s;
  for (char c : name) s += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) || s.rfind("__", 0) == 0 ||
      s.rfind("gl_", 0) == 0 || s.rfind("tsr_", 0) == 0 || s.rfind("get_", 0) == 0)
    s = "v" + s;
  // Vector type names (float4, int16, ...) are keywords too.
  size_t digits = s.find_first_of("0123456789");
  bool vector_name = digits != std::string::npos && reserved.count(s.substr(0, digits)) &&
                     s.find_first_not_of("0123456789", digits) == std::string::npos;
  if (reserved.count(s) || vector_name || reserved_type_name(s)) s += "_";
  return s;
}

void CLikePrinter::declare(const std::string &name, compiler::Type type) {
  vars_[name].push_back({type, false});
  blocks_.back().insert(identifier(name));
}

PrintedBody CLikePrinter::print(const Stmt &body, int indent) {
  indent_ = indent;
  out_.clear();
  locals_.clear();
  stmt(body);
  return {out_, locals_};
}

// ---- expressions ------------------------------------------------------------------------------

std::string CLikePrinter::literal(DType dtype, double fv, int64_t iv, bool is_float_value) {
  if (tile::is_float(dtype)) {
    double v = is_float_value ? fv : static_cast<double>(iv);
    auto special = [&](const std::string &name) {
      return dtype == DType::Float64 ? dialect_.cast_to("double", name) : "(" + name + ")";
    };
    if (std::isnan(v)) return special("NAN");
    if (std::isinf(v)) return special(v < 0 ? "-INFINITY" : "INFINITY");
    char buf[64];
    std::snprintf(buf, sizeof buf, dtype == DType::Float64 ? "%.17g" : "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    s += dialect_.literal_suffix(dtype);
    return v < 0 || (v == 0 && std::signbit(v)) ? "(" + s + ")" : s;
  }
  if (dtype == DType::Bool) return (is_float_value ? fv != 0 : iv != 0) ? "true" : "false";
  int64_t v = is_float_value ? static_cast<int64_t>(fv) : iv;
  std::string s;
  switch (dtype) {
    case DType::Int64:
      s = v == std::numeric_limits<int64_t>::min() ? "(-9223372036854775807L - 1)"
                                                   : std::to_string(v) + "L";
      break;
    case DType::UInt64: s = std::to_string(static_cast<uint64_t>(v)) + "UL"; break;
    case DType::Int32:
      v = static_cast<int32_t>(v);
      s = v == std::numeric_limits<int32_t>::min() ? "(-2147483647 - 1)" : std::to_string(v);
      break;
    case DType::UInt32: s = std::to_string(static_cast<uint32_t>(v)) + "U"; break;
    default: return dialect_.cast_to(dialect_.compute_type(dtype), braced(std::to_string(v)));
  }
  return v < 0 ? braced(s) : s;
}

std::string CLikePrinter::var_lane(const std::string &name, const VarInfo &info, int lane) const {
  std::string id = identifier(name);
  if (info.type.lanes == 1) return id;
  if (info.native) return dialect_.lane_of(id, lane < 0 ? 0 : lane);
  return id + "_l" + std::to_string(lane < 0 ? 0 : lane);
}

std::string CLikePrinter::scalar(const Expr &e, int lane) {
  switch (e->kind) {
    case compiler::ExprKind::IntImm:
      return literal(e->type.dtype, 0, as<compiler::IntImm>(e)->value, false);
    case compiler::ExprKind::FloatImm:
      return literal(e->type.dtype, as<compiler::FloatImm>(e)->value, 0, true);
    case compiler::ExprKind::Var: {
      const auto &name = as<compiler::Var>(e)->name;
      auto it = vars_.find(name);
      TESSERA_INTERNAL_ASSERT(it != vars_.end() && !it->second.empty(),
                              "variable " + name + " is not in scope");
      const VarInfo &info = it->second.back();
      return cast(var_lane(name, info, lane), info.type.dtype, e->type.dtype);
    }
    case compiler::ExprKind::Cast: {
      auto *c = as<compiler::Cast>(e);
      return cast(scalar(c->value, lane), c->value->type.dtype, e->type.dtype);
    }
    case compiler::ExprKind::Binary: return binary(*as<compiler::Binary>(e), lane);
    case compiler::ExprKind::Not: {
      auto *n = as<compiler::Not>(e);
      return "(!" + truthy(scalar(n->a, lane), n->a->type.dtype) + ")";
    }
    case compiler::ExprKind::Select: {
      auto *s = as<compiler::Select>(e);
      DType t = e->type.dtype;
      return select(truthy(scalar(s->cond, lane), s->cond->type.dtype),
                    cast(scalar(s->true_value, lane), s->true_value->type.dtype, t),
                    cast(scalar(s->false_value, lane), s->false_value->type.dtype, t), t);
    }
    case compiler::ExprKind::Load: {
      auto *l = as<compiler::Load>(e);
      std::string id = identifier(l->buffer);
      auto it = buffers_.find(id);
      TESSERA_INTERNAL_ASSERT(it != buffers_.end(), "buffer " + l->buffer + " is not in scope");
      if (it->second.register_lanes > 0)
        return cast(register_element(id, it->second, constant_element(l->index, lane)),
                    it->second.dtype, e->type.dtype);
      if (dialect_.reads_groups(id))
        if (auto group = compiler::aligned_index(l->index)) {
          std::string v = dialect_.aligned_load(id, scalar(group->first, lane), group->component);
          return cast(v, it->second.dtype, e->type.dtype);
        }
      std::string v =
          dialect_.load(id, it->second.dtype, it->second.global, scalar(l->index, lane));
      return cast(v, it->second.dtype, e->type.dtype);
    }
    case compiler::ExprKind::Call: return call(*as<compiler::Call>(e), lane);
    case compiler::ExprKind::Broadcast: return scalar(as<compiler::Broadcast>(e)->value, 0);
    case compiler::ExprKind::Ramp: {
      auto *r = as<compiler::Ramp>(e);
      std::string base = scalar(r->base, 0);
      if (lane <= 0) return base;
      std::string stride = cast(scalar(r->stride, 0), r->stride->type.dtype, r->base->type.dtype);
      return "(" + base + " + " + literal(r->base->type.dtype, 0, lane, false) + " * " + stride +
             ")";
    }
  }
  TESSERA_INTERNAL_ASSERT(false, "bad expression kind");
  return "";
}

namespace {

bool is_zero_literal(const Expr &e) {
  if (e->kind == compiler::ExprKind::Cast) return is_zero_literal(as<compiler::Cast>(e)->value);
  return (e->kind == compiler::ExprKind::FloatImm && as<compiler::FloatImm>(e)->value == 0) ||
         (e->kind == compiler::ExprKind::IntImm && as<compiler::IntImm>(e)->value == 0);
}

}  // namespace

std::string CLikePrinter::zero_product(bool div, const Expr &a, const Expr &b, const std::string &x,
                                       const std::string &y, DType t) {
  if (!tile::is_float(t) || !(is_zero_literal(a) || is_zero_literal(b))) return "";
  return dialect_.zero_product(div ? '/' : '*', x, y, t);
}

std::string CLikePrinter::binary(const compiler::Binary &b, int lane) {
  if (std::string f = fused(b, lane, false); !f.empty()) return f;
  DType t = b.a->type.dtype;
  std::string x = scalar(b.a, lane), y = cast(scalar(b.b, lane), b.b->type.dtype, t);
  if (b.op == Op::Mul || b.op == Op::Div)
    if (std::string z = zero_product(b.op == Op::Div, b.a, b.b, x, y, t); !z.empty()) return z;
  return binary_op(b.op, t, x, y, true);
}

std::string CLikePrinter::select(const std::string &cond, const std::string &a,
                                 const std::string &b, DType t) {
  std::string s = "(" + cond + " ? " + a + " : " + b + ")";
  // C promotes narrow integer operands of ?: to int, and min(ushort, int) is ambiguous in
  // OpenCL: the result converts back to its type, as narrow arithmetic does.
  if (tile::is_integer(t) && tile::dtype_bits(t) < 32)
    return dialect_.cast_to(dialect_.compute_type(t), s);
  return s;
}

std::string CLikePrinter::binary_op(Op op, DType t, const std::string &a, const std::string &b,
                                    bool floor_div) {
  // GLSL orders no bools (`b < c` does not compile): they compare as 0 and 1.
  if (is_comparison(op) && t == DType::Bool)
    return "(" + cast(a, t, DType::Int32) + " " + c_op(op) + " " + cast(b, t, DType::Int32) + ")";
  if (is_comparison(op)) return "(" + a + " " + c_op(op) + " " + b + ")";
  if (op == Op::And || op == Op::Or)
    return "(" + truthy(a, t) + " " + c_op(op) + " " + truthy(b, t) + ")";
  std::string ct = dialect_.compute_type(t);
  if (tile::is_float(t)) {
    switch (op) {
      case Op::Add:
      case Op::Sub:
      case Op::Mul:
      case Op::Div: return "(" + a + " " + c_op(op) + " " + b + ")";
      case Op::Mod: return dialect_.math("fmod", t, {a, b});
      case Op::Min: return dialect_.helper("fmin_nan", t) + "(" + a + ", " + b + ")";
      case Op::Max: return dialect_.helper("fmax_nan", t) + "(" + a + ", " + b + ")";
      case Op::EQ:
      case Op::NE:
      case Op::LT:
      case Op::LE:
      case Op::GT:
      case Op::GE:
      case Op::And:
      case Op::Or:  // handled above
      case Op::BitAnd:
      case Op::BitOr:
      case Op::BitXor:
      case Op::Shl:
      case Op::Shr: break;
    }
    throw tile::Error(std::string("error: '") + compiler::binary_op_name(op) +
                      "' is not defined on " + std::string(tile::dtype_name(t)));
  }
  if (t == DType::Bool) {
    if (op == Op::BitAnd || op == Op::BitOr || op == Op::BitXor)
      return truthy("(" + a + " " + c_op(op) + " " + b + ")", DType::Int32);
    // Arithmetic on bools computes on 0/1 and keeps `!= 0` (the interpreter's rule), in int: on 0/1
    // every op gives the same truth in any width, and int needs no device feature that the
    // kernel's types do not show (int8 would need shaderInt8; KernelFrame.h).
    return truthy(
        binary_op(op, DType::Int32, cast(a, t, DType::Int32), cast(b, t, DType::Int32), floor_div),
        DType::Int32);
  }
  auto wrap = [&](const std::string &s) {
    // Narrow integers promote to int in C: convert back so that results wrap.
    return tile::dtype_bits(t) < 32 ? dialect_.cast_to(ct, s) : s;
  };
  switch (op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::BitAnd:
    case Op::BitOr:
    case Op::BitXor: return wrap("(" + a + " " + c_op(op) + " " + b + ")");
    case Op::Div:
      return dialect_.helper(floor_div ? "floordiv" : "truncdiv", t) + "(" + a + ", " + b + ")";
    case Op::Mod:
      return dialect_.helper(floor_div ? "floormod" : "truncmod", t) + "(" + a + ", " + b + ")";
    case Op::Min: return "min(" + a + ", " + b + ")";
    case Op::Max: return "max(" + a + ", " + b + ")";
    case Op::Shl: return dialect_.helper("shl", t) + "(" + a + ", " + b + ")";
    case Op::Shr: return dialect_.helper("shr", t) + "(" + a + ", " + b + ")";
    case Op::EQ:
    case Op::NE:
    case Op::LT:
    case Op::LE:
    case Op::GT:
    case Op::GE:
    case Op::And:
    case Op::Or: break;  // handled above
  }
  TESSERA_INTERNAL_ASSERT(false, "unhandled binary op");
  return "";
}

std::string CLikePrinter::call(const compiler::Call &c, int lane) {
  DType t = c.type.dtype;
  Intrinsic op = c.op;
  std::string name(tile::intrinsic_name(op));
  auto kind = tile::intrinsic_info(op).kind;
  if (kind == tile::IntrinsicKind::Special)
    throw tile::Error("error: '" + name + "' is not an elementwise operation");
  std::vector<std::string> v;
  std::vector<DType> at;
  for (const auto &a : c.args) {
    v.push_back(scalar(a, lane));
    at.push_back(a->type.dtype);
  }
  if (kind == tile::IntrinsicKind::Cast) return cast(v[0], at[0], t);
  if (kind == tile::IntrinsicKind::Compare) {
    // Operands compare in their common type.
    DType ct = at[0];
    if (at[1] != ct && tile::is_float(at[1]) && !tile::is_float(ct)) ct = at[1];
    Op o = op == Intrinsic::CmpEq   ? Op::EQ
           : op == Intrinsic::CmpNe ? Op::NE
           : op == Intrinsic::CmpLt ? Op::LT
           : op == Intrinsic::CmpGt ? Op::GT
           : op == Intrinsic::CmpLe ? Op::LE
                                    : Op::GE;
    return binary_op(o, ct, cast(v[0], at[0], ct), cast(v[1], at[1], ct), false);
  }
  if (op == Intrinsic::Cond)
    return select(truthy(v[0], at[0]), cast(v[1], at[1], t), cast(v[2], at[2], t), t);
  // Every other intrinsic computes in its result type.
  for (size_t i = 0; i < v.size(); ++i) v[i] = cast(v[i], at[i], t);
  bool fl = tile::is_float(t);
  std::string ct = dialect_.compute_type(t);
  if (op == Intrinsic::Mul || op == Intrinsic::Div)
    if (std::string z = zero_product(op == Intrinsic::Div, c.args[0], c.args[1], v[0], v[1], t);
        !z.empty())
      return z;
  switch (op) {
    case Intrinsic::Ident: return v[0];
    case Intrinsic::Add: return binary_op(Op::Add, t, v[0], v[1], false);
    case Intrinsic::Sub: return binary_op(Op::Sub, t, v[0], v[1], false);
    case Intrinsic::Mul: return binary_op(Op::Mul, t, v[0], v[1], false);
    case Intrinsic::Div: return binary_op(Op::Div, t, v[0], v[1], false);
    case Intrinsic::Max: return binary_op(Op::Max, t, v[0], v[1], false);
    case Intrinsic::Min: return binary_op(Op::Min, t, v[0], v[1], false);
    case Intrinsic::BitAnd: return binary_op(Op::BitAnd, t, v[0], v[1], false);
    case Intrinsic::BitOr: return binary_op(Op::BitOr, t, v[0], v[1], false);
    case Intrinsic::BitXor: return binary_op(Op::BitXor, t, v[0], v[1], false);
    case Intrinsic::BitLeft: return binary_op(Op::Shl, t, v[0], v[1], false);
    case Intrinsic::BitRight: return binary_op(Op::Shr, t, v[0], v[1], false);
    case Intrinsic::BitNot:
      if (t == DType::Bool) return "(!" + v[0] + ")";
      return dialect_.cast_to(ct, "(~" + v[0] + ")");
    case Intrinsic::Neg:
      if (fl) return "(-" + v[0] + ")";
      if (t == DType::Bool) return v[0];
      return dialect_.cast_to(ct, "(-" + v[0] + ")");
    case Intrinsic::Abs:
      if (fl) return dialect_.math("fabs", t, {v[0]});
      if (!tile::is_signed_int(t)) return v[0];
      return dialect_.helper("abs", t) + "(" + v[0] + ")";
    case Intrinsic::Relu:
      if (!fl && !tile::is_signed_int(t)) return v[0];
      return dialect_.helper("relu", t) + "(" + v[0] + ")";  // NaN stays NaN
    case Intrinsic::Floor:
    case Intrinsic::Ceil:
    case Intrinsic::Round:  // round: half away from zero
      return fl ? dialect_.math(name, t, {v[0]}) : v[0];
    default: break;
  }
  if (!fl)
    throw tile::Error("error: '" + name + "' needs a float type, not " +
                      std::string(tile::dtype_name(t)));
  if (op == Intrinsic::Sigmoid) {
    std::string one = literal(t, 1, 0, true);
    return "(" + one + " / (" + one + " + " + dialect_.math("exp", t, {"(-" + v[0] + ")"}) + "))";
  }
  return dialect_.math(name, t, v);
}

namespace {

// The dialect's vector helper computing intrinsic `op` (or binary `op`) on floats, if any.
const char *vector_helper_of(Intrinsic op) {
  switch (op) {
    case Intrinsic::Max: return "fmax_nan";
    case Intrinsic::Min: return "fmin_nan";
    case Intrinsic::Relu: return "relu";
    default: return nullptr;
  }
}
const char *vector_helper_of(Op op) {
  return op == Op::Max ? "fmax_nan" : op == Op::Min ? "fmin_nan" : nullptr;
}

}  // namespace

bool CLikePrinter::has_vector_helper(const char *name, DType dtype, int lanes) const {
  return tile::is_float(dtype) && !dialect_.vector_helper(name, dtype, lanes, false).empty();
}

bool CLikePrinter::native_ok(const Expr &e) const {
  int lanes = e->type.lanes;
  if (lanes == 1) return true;
  DType t = e->type.dtype;
  if (dialect_.vector_type(t, lanes).empty()) return false;
  switch (e->kind) {
    case compiler::ExprKind::IntImm:
    case compiler::ExprKind::FloatImm:
    case compiler::ExprKind::Broadcast: return true;
    case compiler::ExprKind::Var: {
      auto it = vars_.find(as<compiler::Var>(e)->name);
      return it != vars_.end() && !it->second.empty() && it->second.back().native &&
             it->second.back().type == e->type;
    }
    case compiler::ExprKind::Load: {
      auto *l = as<compiler::Load>(e);
      auto it = buffers_.find(identifier(l->buffer));
      if (it != buffers_.end() && it->second.register_lanes > 0)
        return it->second.register_lanes == lanes && dense_ramp(l->index) &&
               it->second.dtype == t && constant_element(l->index, 0) % lanes == 0;
      return dense_ramp(l->index) && it != buffers_.end() && it->second.dtype == t;
    }
    case compiler::ExprKind::Binary: {
      auto *b = as<compiler::Binary>(e);
      const char *helper = vector_helper_of(b->op);
      bool arith = b->op == Op::Add || b->op == Op::Sub || b->op == Op::Mul ||
                   (b->op == Op::Div && tile::is_float(t)) ||
                   (helper && has_vector_helper(helper, t, lanes));
      return arith && b->a->type.dtype == t && b->b->type.dtype == t && native_ok(b->a) &&
             native_ok(b->b);
    }
    case compiler::ExprKind::Call: {
      auto *c = as<compiler::Call>(e);
      auto kind = tile::intrinsic_info(c->op).kind;
      const char *helper = vector_helper_of(c->op);
      bool ok = c->op == Intrinsic::Ident || c->op == Intrinsic::Add || c->op == Intrinsic::Sub ||
                c->op == Intrinsic::Mul ||
                (kind == tile::IntrinsicKind::FloatMath && tile::is_float(t)) ||
                (c->op == Intrinsic::Div && tile::is_float(t)) ||
                (helper && has_vector_helper(helper, t, lanes));
      if (!ok) return false;
      for (const auto &a : c->args)
        if (a->type.dtype != t || !native_ok(a)) return false;
      return true;
    }
    case compiler::ExprKind::Cast:
    case compiler::ExprKind::Not:
    case compiler::ExprKind::Select:
    case compiler::ExprKind::Ramp: return false;
  }
  return false;
}

std::string CLikePrinter::vec(const Expr &e) {
  if (e->type.lanes == 1) return scalar(e, 0);
  DType t = e->type.dtype;
  std::string vt = dialect_.vector_type(t, e->type.lanes);
  switch (e->kind) {
    case compiler::ExprKind::IntImm:
    case compiler::ExprKind::FloatImm:
    case compiler::ExprKind::Broadcast: return dialect_.cast_to(vt, "(" + scalar(e, 0) + ")");
    case compiler::ExprKind::Var: return identifier(as<compiler::Var>(e)->name);
    case compiler::ExprKind::Load: {
      auto *l = as<compiler::Load>(e);
      std::string id = identifier(l->buffer);
      const Buffer &buf = buffers_.at(id);
      if (buf.register_lanes > 0) return register_vector(id, buf, constant_element(l->index, 0));
      return dialect_.vector_load(id, e->type.lanes, scalar(dense_ramp(l->index)->base, 0));
    }
    case compiler::ExprKind::Binary: {
      auto *b = as<compiler::Binary>(e);
      if (std::string f = fused(*b, 0, true); !f.empty()) return f;
      if (const char *helper = vector_helper_of(b->op))
        return dialect_.vector_helper(helper, t, e->type.lanes, true) + "(" + vec(b->a) + ", " +
               vec(b->b) + ")";
      return "(" + vec(b->a) + " " + c_op(b->op) + " " + vec(b->b) + ")";
    }
    case compiler::ExprKind::Call: {
      auto *c = as<compiler::Call>(e);
      std::vector<std::string> v;
      for (const auto &a : c->args) v.push_back(vec(a));
      switch (c->op) {
        case Intrinsic::Ident: return v[0];
        case Intrinsic::Add: return "(" + v[0] + " + " + v[1] + ")";
        case Intrinsic::Sub: return "(" + v[0] + " - " + v[1] + ")";
        case Intrinsic::Mul: return "(" + v[0] + " * " + v[1] + ")";
        case Intrinsic::Div: return "(" + v[0] + " / " + v[1] + ")";
        case Intrinsic::Max:
        case Intrinsic::Min:
        case Intrinsic::Relu: {
          std::string args = v[0];
          for (size_t i = 1; i < v.size(); ++i) args += ", " + v[i];
          return dialect_.vector_helper(vector_helper_of(c->op), t, e->type.lanes, true) + "(" +
                 args + ")";
        }
        case Intrinsic::Sigmoid: {
          std::string one = literal(t, 1, 0, true);
          return "(" + one + " / (" + one + " + " + dialect_.math("exp", t, {"(-" + v[0] + ")"}) +
                 "))";
        }
        default: {
          // A math function the dialect computes by a helper on whole vectors (OpenCL's erf).
          std::string name(tile::intrinsic_name(c->op));
          std::string helper = dialect_.vector_helper(name, t, e->type.lanes, true);
          if (helper.empty()) return dialect_.math(name, t, v);
          std::string args = v[0];
          for (size_t i = 1; i < v.size(); ++i) args += ", " + v[i];
          return helper + "(" + args + ")";
        }
      }
    }
    case compiler::ExprKind::Cast:
    case compiler::ExprKind::Not:
    case compiler::ExprKind::Select:
    case compiler::ExprKind::Ramp: break;
  }
  TESSERA_INTERNAL_ASSERT(false, "vector expression the dialect cannot print natively");
  return "";
}

// a * b + c (either operand order of the add) as the dialect's fused multiply-add.
std::string CLikePrinter::fused(const compiler::Binary &b, int lane, bool vector) {
  DType t = b.type.dtype;
  if (b.op != Op::Add || !tile::is_float(t)) return "";
  auto *m = as<compiler::Binary>(b.a);
  Expr other = b.b;
  if (!m || m->op != Op::Mul) {
    m = as<compiler::Binary>(b.b);
    other = b.a;
  }
  if (!m || m->op != Op::Mul) return "";
  if (vector) return dialect_.fma(vec(m->a), vec(m->b), vec(other), t);
  return dialect_.fma(scalar(m->a, lane), scalar(m->b, lane), scalar(other, lane), t);
}

int64_t CLikePrinter::constant_element(const Expr &index, int lane) {
  if (auto *i = as<compiler::IntImm>(index)) return i->value;
  if (auto *b = as<compiler::Broadcast>(index)) return constant_element(b->value, 0);
  auto *r = as<compiler::Ramp>(index);
  if (!r) return -1;
  auto *base = as<compiler::IntImm>(r->base);
  auto *stride = as<compiler::IntImm>(r->stride);
  return base && stride ? base->value + std::max(lane, 0) * stride->value : -1;
}

std::string CLikePrinter::register_vector(const std::string &id, const Buffer &buf,
                                          int64_t first) const {
  return id + "_r" + std::to_string(first / buf.register_lanes);
}

std::string CLikePrinter::register_element(const std::string &id, const Buffer &buf,
                                           int64_t index) const {
  TESSERA_INTERNAL_ASSERT(index >= 0, "register array " + id + " accessed at a variable index");
  int64_t L = buf.register_lanes;
  std::string v = id + "_r" + std::to_string(index / L);
  return L > 1 ? dialect_.lane_of(v, static_cast<int>(index % L)) : v;
}

namespace {

class AccessesOf : public compiler::IRVisitor {
 public:
  explicit AccessesOf(std::string buffer) : buffer_(std::move(buffer)) {}
  std::vector<std::pair<Expr, int>> accesses;  // index, lanes
  using IRVisitor::visit;
  void visit(const compiler::Load *op) override {
    if (op->buffer == buffer_) accesses.push_back({op->index, op->type.lanes});
    IRVisitor::visit(op);
  }
  void visit(const compiler::Store *op) override {
    if (op->buffer == buffer_)
      accesses.push_back({op->index, std::max(op->index->type.lanes, op->value->type.lanes)});
    IRVisitor::visit(op);
  }

 private:
  std::string buffer_;
};

}  // namespace

int CLikePrinter::register_lanes(const compiler::Allocate &a) const {
  if (a.type.dtype == DType::Bool || a.type.lanes != 1) return 0;
  AccessesOf uses(a.buffer);
  uses.visit_stmt(a.body);
  int L = 1;
  for (const auto &[index, lanes] : uses.accesses) {
    for (int l = 0; l < lanes; ++l) {
      int64_t e = constant_element(index, l);
      if (e < 0 || e >= a.size) return 0;
    }
    if (lanes == 1) continue;
    if (L > 1 && lanes != L) return 0;
    L = lanes;
  }
  if (L > 1) {
    for (const auto &[index, lanes] : uses.accesses)
      if (lanes > 1 && (!dense_ramp(index) || constant_element(index, 0) % L != 0)) return 0;
    if (dialect_.vector_type(a.type.dtype, L).empty() || a.size % L != 0) return 0;
  }
  return a.size / L <= 64 ? L : 0;
}

// ---- statements -------------------------------------------------------------------------------

void CLikePrinter::nested(const Stmt &s) {
  ++indent_;
  blocks_.emplace_back();
  stmt(s);
  blocks_.pop_back();
  --indent_;
}

void CLikePrinter::store(const compiler::Store &s) {
  std::string id = identifier(s.buffer);
  auto it = buffers_.find(id);
  TESSERA_INTERNAL_ASSERT(it != buffers_.end(), "buffer " + s.buffer + " is not in scope");
  Buffer buf = it->second;
  DType vt = s.value->type.dtype;
  int lanes = std::max(s.value->type.lanes, s.index->type.lanes);
  if (buf.register_lanes > 0) {
    int64_t first = constant_element(s.index, 0);
    if (lanes == buf.register_lanes && lanes > 1 && dense_ramp(s.index) && first % lanes == 0 &&
        vt == buf.dtype && native_ok(s.value) && s.value->type.lanes == lanes) {
      line(register_vector(id, buf, first) + " = " + vec(s.value) + ";");
      return;
    }
    if (lanes == 1) {
      line(register_element(id, buf, first) + " = " + cast(scalar(s.value, 0), vt, buf.dtype) +
           ";");
      return;
    }
    store_lanes(s, buf.dtype, [&](int l, const std::string &v) {
      return register_element(id, buf, constant_element(s.index, l)) + " = " + v + ";";
    });
    return;
  }
  if (lanes == 1) {
    line(dialect_.store(id, buf.dtype, buf.global, scalar(s.index, 0),
                        cast(scalar(s.value, 0), vt, buf.dtype)));
    return;
  }
  auto *ramp = dense_ramp(s.index);
  if (ramp && vt == buf.dtype && native_ok(s.value) && s.value->type.lanes == lanes) {
    line(dialect_.vector_store(id, buf.dtype, buf.global, lanes, scalar(ramp->base, 0),
                               vec(s.value)));
    return;
  }
  store_lanes(s, buf.dtype, [&](int l, const std::string &v) {
    return dialect_.store(id, buf.dtype, buf.global, scalar(s.index, l), v);
  });
}

void CLikePrinter::store_lanes(
    const compiler::Store &s, DType dtype,
    const std::function<std::string(int lane, const std::string &value)> &store_line) {
  // Every lane's value first, then the stores (lanes may read what others write).
  int lanes = std::max(s.value->type.lanes, s.index->type.lanes);
  std::string tmp = "tsr_t" + std::to_string(temps_++);
  line("{");
  ++indent_;
  for (int l = 0; l < lanes; ++l)
    line("const " + dialect_.compute_type(dtype) + " " + tmp + "_" + std::to_string(l) + " = " +
         cast(scalar(s.value, l), s.value->type.dtype, dtype) + ";");
  for (int l = 0; l < lanes; ++l) line(store_line(l, tmp + "_" + std::to_string(l)));
  --indent_;
  line("}");
}

void CLikePrinter::stmt(const Stmt &s) {
  if (!s) return;
  switch (s->kind) {
    case compiler::StmtKind::For: {
      auto *f = as<compiler::For>(s);
      compiler::Type t = f->min->type;
      std::string ct = dialect_.compute_type(t.dtype), v = identifier(f->var);
      std::string lo = scalar(f->min, 0),
                  ext = cast(scalar(f->extent, 0), f->extent->type.dtype, t.dtype);
      std::string hi = lo == "0" || lo == "0L" ? ext : lo + " + " + ext;
      if (f->for_kind == compiler::ForKind::Unrolled && !dialect_.unroll_pragma().empty())
        line(dialect_.unroll_pragma());
      line("for (" + ct + " " + v + " = " + lo + "; " + v + " < " + hi + "; ++" + v + ") {");
      vars_[f->var].push_back({t, false});
      ++indent_;
      blocks_.push_back({v});
      if (!prefetch_ahead_.empty()) prefetch(*f);
      bool serial = f->for_kind == compiler::ForKind::Serial;
      if (serial) serial_loops_.push_back({v, lo});
      stmt(f->body);
      if (serial) serial_loops_.pop_back();
      blocks_.pop_back();
      --indent_;
      vars_[f->var].pop_back();
      line("}");
      return;
    }
    case compiler::StmtKind::IfThenElse: {
      auto *n = as<compiler::IfThenElse>(s);
      line("if (" + truthy(scalar(n->cond, 0), n->cond->type.dtype) + ") {");
      nested(n->then_case);
      if (n->else_case) {
        line("} else {");
        nested(n->else_case);
      }
      line("}");
      return;
    }
    case compiler::StmtKind::Store: return store(*as<compiler::Store>(s));
    case compiler::StmtKind::LetStmt: {
      auto *n = as<compiler::LetStmt>(s);
      std::string id = identifier(n->var);
      bool block = declared_here(id);
      if (block) {
        line("{");
        ++indent_;
        blocks_.emplace_back();
      }
      compiler::Type t = n->value->type;
      bool native = t.lanes > 1 && native_ok(n->value);
      if (t.lanes == 1) {
        line("const " + dialect_.compute_type(t.dtype) + " " + id + " = " + scalar(n->value, 0) +
             ";");
      } else if (native) {
        line("const " + dialect_.vector_type(t.dtype, t.lanes) + " " + id + " = " + vec(n->value) +
             ";");
      } else {
        for (int l = 0; l < t.lanes; ++l)
          line("const " + dialect_.compute_type(t.dtype) + " " + id + "_l" + std::to_string(l) +
               " = " + scalar(n->value, l) + ";");
      }
      blocks_.back().insert(id);
      vars_[n->var].push_back({t, native});
      stmt(n->body);
      vars_[n->var].pop_back();
      if (block) {
        blocks_.pop_back();
        --indent_;
        line("}");
      }
      return;
    }
    case compiler::StmtKind::Block:
      for (const auto &x : as<compiler::Block>(s)->stmts) stmt(x);
      return;
    case compiler::StmtKind::Allocate: {
      auto *n = as<compiler::Allocate>(s);
      std::string id = identifier(n->buffer);
      // Arrays hold compute types (half computes in float), bools as bytes.
      std::string et = n->type.dtype == DType::Bool ? dialect_.memory_type(DType::Bool)
                                                    : dialect_.compute_type(n->type.dtype);
      std::string decl = et + " " + id + "[" + std::to_string(n->size) + "];";
      int reg = n->local ? 0 : register_lanes(*n);
      if (reg > 0) {
        std::string vt = reg > 1 ? dialect_.vector_type(n->type.dtype, reg) : et;
        decl = vt;
        for (int64_t r = 0; r < n->size / reg; ++r)
          decl += (r ? ", " : " ") + id + "_r" + std::to_string(r);
        decl += ";";
      }
      bool block = !n->local && declared_here(id);
      if (block) {
        line("{");
        ++indent_;
        blocks_.emplace_back();
      }
      if (n->local)
        locals_.push_back(dialect_.local_qualifier() + " " + decl);
      else
        line(decl);
      blocks_.back().insert(id);
      auto saved = buffers_.find(id) == buffers_.end() ? std::optional<Buffer>()
                                                       : std::optional<Buffer>(buffers_[id]);
      buffers_[id] = {n->type.dtype, false, reg};
      stmt(n->body);
      if (saved)
        buffers_[id] = *saved;
      else
        buffers_.erase(id);
      if (block) {
        blocks_.pop_back();
        --indent_;
        line("}");
      }
      return;
    }
    case compiler::StmtKind::Barrier: line(dialect_.barrier()); return;
  }
  TESSERA_INTERNAL_ASSERT(false, "bad statement kind");
}

}  // namespace tessera::clike
