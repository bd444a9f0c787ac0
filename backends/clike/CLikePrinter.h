// A printer of loop IR kernels as C-like source, shared by OpenCL C and GLSL: the dialect supplies
// type names, buffer access, vector syntax, built-in ids and helper functions; this prints the
// statements (and clike/KernelFrame.h the frame around them that both share).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "backends/clike/GpuLaunch.h"
#include "compiler/IR.h"

namespace tessera::clike {

/// What a dialect decides. Every hook gets C expressions already printed.
class Dialect {
 public:
  virtual ~Dialect() = default;
  /// The C type that computes values of `dtype` (half may compute in float; bool in `bool`).
  virtual std::string compute_type(tile::DType dtype) const = 0;
  /// The C type of elements of an array of `dtype` in memory.
  virtual std::string memory_type(tile::DType dtype) const = 0;
  /// A native vector type of `lanes` x `dtype`, or "" when the dialect has none (the printer then
  /// computes such vectors lane by lane).
  virtual std::string vector_type(tile::DType dtype, int lanes) const = 0;
  /// The element `index` of `buffer` (of `dtype`, in global memory when `global`), as a value of
  /// compute_type, and the statement storing `value` there.
  virtual std::string load(const std::string &buffer, tile::DType dtype, bool global,
                           const std::string &index) const;
  virtual std::string store(const std::string &buffer, tile::DType dtype, bool global,
                            const std::string &index, const std::string &value) const;
  /// Whether loads of `buffer` whose index is `first + component` (compiler/AlignedLoads.h) print
  /// through aligned_load: the dialect reads that buffer by aligned groups of four elements.
  virtual bool reads_groups(const std::string &buffer) const {
    (void)buffer;
    return false;
  }
  /// Element `first + component` of `buffer` (`first` a multiple of 4, `component` in [0, 4)).
  virtual std::string aligned_load(const std::string &buffer, const std::string &first,
                                   int component) const {
    (void)buffer, (void)first, (void)component;
    return "";
  }
  /// A contiguous vector load/store of `lanes` elements starting at `base`; a store names the
  /// elements' type and whether `buffer` is in global memory.
  virtual std::string vector_load(const std::string &buffer, int lanes,
                                  const std::string &base) const = 0;
  virtual std::string vector_store(const std::string &buffer, tile::DType dtype, bool global,
                                   int lanes, const std::string &base,
                                   const std::string &value) = 0;
  /// Lane `lane` of a native vector value.
  virtual std::string lane_of(const std::string &vector, int lane) const = 0;
  /// `value` (of `from`) converted to `to` with Tile's semantics (float -> int saturates, NaN ->
  /// 0).
  virtual std::string convert(const std::string &value, tile::DType from, tile::DType to) = 0;
  /// A named helper function (floor division, NaN-propagating max, ...) the source needs; the
  /// dialect returns the function's name and records its definition.
  virtual std::string helper(const std::string &name, tile::DType dtype) = 0;
  /// The definitions of the helpers named so far, each once and before the helpers that call it.
  virtual std::string helper_definitions() const = 0;
  /// Helper `name` (fmax_nan, fmin_nan or relu) on native vectors of `lanes` x float `dtype`, or
  /// "" when the dialect has none (the printer then applies the scalar one lane by lane). A query
  /// (`define` false) records nothing.
  virtual std::string vector_helper(const std::string &name, tile::DType dtype, int lanes,
                                    bool define) {
    (void)name, (void)dtype, (void)lanes, (void)define;
    return "";
  }
  /// The math function `name` (exp, tanh, ...) on a value of `dtype`.
  virtual std::string math(const std::string &name, tile::DType dtype,
                           const std::vector<std::string> &args);
  virtual std::string literal_suffix(tile::DType dtype) const;
  /// `value` (a parenthesized expression or a name) converted to the type named `type`: a C cast by
  /// default; GLSL has constructor syntax instead.
  virtual std::string cast_to(const std::string &type, const std::string &value) const {
    return "((" + type + ")" + value + ")";
  }
  /// The unroll hint line before a fully unrolled loop ("" for none).
  virtual std::string unroll_pragma() const { return "#pragma unroll"; }
  /// a * b + c fused (one rounding), or "" to print it unfused. `dtype` is a float type.
  virtual std::string fma(const std::string &a, const std::string &b, const std::string &c,
                          tile::DType dtype) const {
    (void)a, (void)b, (void)c, (void)dtype;
    return "";
  }
  /// `a * b` or `a / b` (`op` is '*' or '/') in float `dtype` where an operand is the literal
  /// zero, or "" to print it as any other. For compilers that fold such a product to 0 even where
  /// the other operand is Inf or NaN, which must give NaN (0 / 0 too).
  virtual std::string zero_product(char op, const std::string &a, const std::string &b,
                                   tile::DType dtype) {
    (void)op, (void)a, (void)b, (void)dtype;
    return "";
  }
  /// The built-in id `kind` of dimension `dim` (get_group_id(0), gl_WorkGroupID.x, ...): an
  /// unsigned integer, converted with cast_to.
  virtual std::string gpu_id(GpuId::Kind kind, int dim) const = 0;
  virtual std::string barrier() const = 0;
  /// The statement prefetching the element at `address` of global `buffer` into the cache, or ""
  /// for none (BufferParam::prefetch_ahead).
  virtual std::string prefetch(const std::string &buffer, const std::string &address) const {
    (void)buffer, (void)address;
    return "";
  }
  virtual std::string local_qualifier() const = 0;
};

/// The printed body of one kernel.
struct PrintedBody {
  std::string code;                 // statements, indented by `indent`
  std::vector<std::string> locals;  // work-group local arrays, hoisted to the kernel's top
};

/// Prints statements of a kernel whose buffer parameters are `params` (global memory).
class CLikePrinter {
 public:
  CLikePrinter(Dialect &dialect, const std::vector<compiler::BufferParam> &params);
  PrintedBody print(const compiler::Stmt &body, int indent);
  /// Declares a scalar variable already in scope (e.g. a work-item id) of `type`.
  void declare(const std::string &name, compiler::Type type);
  /// A legal C identifier for an IR name (keywords and builtins get a trailing '_').
  static std::string identifier(const std::string &name);

  /// The scalar value of lane `lane` of `e` (lane ignored for scalars) in compute type.
  std::string scalar(const compiler::Expr &e, int lane);

 private:
  struct Buffer {
    tile::DType dtype;
    bool global;
    // > 0: a private array every access of which has a constant index, held in variables of
    // this many lanes (`name_rN` is elements [N*lanes, (N+1)*lanes)) so the driver keeps it in
    // registers; a private array indexed by variables may live in memory.
    int register_lanes = 0;
  };
  struct VarInfo {
    compiler::Type type;
    bool native;  // a vector held in a native vector type (else one variable per lane)
  };

  bool native_ok(const compiler::Expr &e) const;
  bool has_vector_helper(const char *name, tile::DType dtype, int lanes) const;
  std::string fused(const compiler::Binary &b, int lane, bool vector);
  /// The variable (and lane) holding element `index` of a register array.
  std::string register_element(const std::string &id, const Buffer &buf, int64_t index) const;
  /// The whole variable of a register array holding the aligned vector starting at `first`.
  std::string register_vector(const std::string &id, const Buffer &buf, int64_t first) const;
  /// The first element of a register array access, lane `lane`; -1 when not constant.
  static int64_t constant_element(const compiler::Expr &index, int lane);
  int register_lanes(const compiler::Allocate &a) const;
  std::string vec(const compiler::Expr &e);
  std::string literal(tile::DType dtype, double fv, int64_t iv, bool is_float_value);
  std::string binary(const compiler::Binary &b, int lane);
  /// `cond ? a : b` of type `t`, all three printed.
  std::string select(const std::string &cond, const std::string &a, const std::string &b,
                     tile::DType t);
  /// The dialect's zero_product of printed operands `x`, `y` of `a * b` (or `a / b`) when one of
  /// `a`, `b` is the literal zero, else "".
  std::string zero_product(bool div, const compiler::Expr &a, const compiler::Expr &b,
                           const std::string &x, const std::string &y, tile::DType t);
  std::string binary_op(compiler::Binary::Op op, tile::DType t, const std::string &a,
                        const std::string &b, bool floor_div);
  std::string call(const compiler::Call &c, int lane);
  std::string cast(const std::string &v, tile::DType from, tile::DType to) {
    return from == to ? v : dialect_.convert(v, from, to);
  }
  std::string truthy(const std::string &v, tile::DType t) { return cast(v, t, tile::DType::Bool); }
  std::string var_lane(const std::string &name, const VarInfo &info, int lane) const;

  void stmt(const compiler::Stmt &s);
  void store(const compiler::Store &s);
  /// A store of a vector value lane by lane; `store_line` prints lane l's store of a value.
  void
  store_lanes(const compiler::Store &s, tile::DType dtype,
              const std::function<std::string(int lane, const std::string &value)> &store_line);
  void line(const std::string &text) { out_ += std::string(2 * indent_, ' ') + text + "\n"; }
  void nested(const compiler::Stmt &s);
  /// At the top of `loop`'s body, the prefetches of the contiguous reads of buffers with a
  /// prefetch_ahead directly in it, in the first iteration of the serial loops around it only.
  void prefetch(const compiler::For &loop);
  /// Whether `name` is already declared in the innermost C block (so a redeclaration needs a
  /// block).
  bool declared_here(const std::string &name) const { return blocks_.back().count(name) > 0; }

  Dialect &dialect_;
  std::map<std::string, Buffer> buffers_;
  std::map<std::string, std::vector<VarInfo>> vars_;  // a stack per name (shadowing)
  std::map<std::string, int64_t> prefetch_ahead_;       // buffer (IR name) -> elements ahead
  std::vector<std::pair<std::string, std::string>> serial_loops_;  // printed var, lower bound
  std::vector<std::set<std::string>> blocks_{{}};
  std::vector<std::string> locals_;
  std::string out_;
  int indent_ = 0;
  int temps_ = 0;
};

}  // namespace tessera::clike
