// The loop IR: small Halide-style expression and statement nodes that kernels are lowered to and
// that every backend (LLVM, OpenCL C, GLSL) prints or compiles.
//
// Semantics. A Kernel is a statement over named buffers (its parameters) and scalar variables.
// Buffers are flat arrays of one dtype; Load/Store index them by element (not byte). Expressions
// are pure and typed: a Type is a dtype and a lane count (lanes > 1 is a SIMD vector; Ramp and
// Broadcast build vector indices and values). `For` runs `min <= var < min + extent`; its kind says
// how a backend may map it (serial, parallel across threads or work-groups, vectorized, unrolled).
// Allocate introduces a kernel-local array (register accumulators, or work-group local memory when
// `local` is set); Barrier synchronizes a work-group. Integer division and modulo on indices are
// floor operations (index math is non-negative after lowering; see Binary::Op). Nodes are
// immutable and shared; build them with make(), which checks their invariants.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tile/DataType.h"
#include "tile/Intrinsics.h"

namespace tessera::compiler {

struct Type {
  tile::DType dtype = tile::DType::Int32;
  int lanes = 1;
  bool operator==(const Type &) const = default;
  Type with_lanes(int n) const { return {dtype, n}; }
  static Type i32() { return {tile::DType::Int32, 1}; }
  static Type i64() { return {tile::DType::Int64, 1}; }
  static Type boolean(int lanes = 1) { return {tile::DType::Bool, lanes}; }
};

enum class ExprKind {
#define LOOP_EXPR(Name) Name,
#include "compiler/IR.def"
};
enum class StmtKind {
#define LOOP_STMT(Name) Name,
#include "compiler/IR.def"
};

struct ExprNode {
  ExprNode(ExprKind k, Type t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const Type type;
};
struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
};
using Expr = std::shared_ptr<const ExprNode>;
using Stmt = std::shared_ptr<const StmtNode>;

/// Downcasts when the kind matches, else null: `if (auto *f = as<For>(s)) ...`.
template <typename T, typename P>
const T *as(const P &p) {
  return p && p->kind == T::kKind ? static_cast<const T *>(p.get()) : nullptr;
}

// ---- Expressions ------------------------------------------------------------------------------

struct IntImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::IntImm;
  int64_t value;
  IntImm(Type t, int64_t v) : ExprNode(kKind, t), value(v) {}
  static Expr make(Type t, int64_t v);
  static Expr make(int64_t v) { return make(Type::i64(), v); }
};

struct FloatImm : ExprNode {
  static constexpr ExprKind kKind = ExprKind::FloatImm;
  double value;
  FloatImm(Type t, double v) : ExprNode(kKind, t), value(v) {}
  static Expr make(Type t, double v);
};

/// A scalar variable: a loop counter, a LetStmt name or a kernel's scalar parameter.
struct Var : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Var;
  std::string name;
  Var(Type t, std::string n) : ExprNode(kKind, t), name(std::move(n)) {}
  static Expr make(Type t, std::string name);
};

/// Value conversion (C semantics for in-range values; float -> int truncates).
struct Cast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Cast;
  Expr value;
  Cast(Type t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  static Expr make(Type t, Expr v);
};

struct Binary : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Binary;
  enum class Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Min,
    Max,
    EQ,
    NE,
    LT,
    LE,
    GT,
    GE,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr
  };
  Op op;
  Expr a, b;
  Binary(Type t, Op o, Expr x, Expr y)
      : ExprNode(kKind, t), op(o), a(std::move(x)), b(std::move(y)) {}
  /// Operands must have equal types; comparisons and And/Or give bool of the same lanes. Div and
  /// Mod of integers are floor division and its modulo (Tile's index semantics); of floats, IEEE.
  static Expr make(Op op, Expr a, Expr b);
};
const char *binary_op_name(Binary::Op op);

struct Not : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Not;
  Expr a;
  Not(Type t, Expr x) : ExprNode(kKind, t), a(std::move(x)) {}
  static Expr make(Expr a);
};

struct Select : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Select;
  Expr cond, true_value, false_value;
  Select(Type t, Expr c, Expr a, Expr b)
      : ExprNode(kKind, t), cond(std::move(c)), true_value(std::move(a)),
        false_value(std::move(b)) {}
  static Expr make(Expr cond, Expr a, Expr b);
};

/// buffer[index]; a vector load when index has lanes > 1 (a Ramp for contiguous access).
struct Load : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Load;
  std::string buffer;
  Expr index;
  Load(Type t, std::string buf, Expr i)
      : ExprNode(kKind, t), buffer(std::move(buf)), index(std::move(i)) {}
  static Expr make(Type element, std::string buffer, Expr index);
};

/// An elementwise math intrinsic of Tile (exp, tanh, pow, ...), same semantics as the interpreter.
struct Call : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Call;
  tile::Intrinsic op;
  std::vector<Expr> args;
  Call(Type t, tile::Intrinsic o, std::vector<Expr> a)
      : ExprNode(kKind, t), op(o), args(std::move(a)) {}
  static Expr make(Type t, tile::Intrinsic op, std::vector<Expr> args);
};

struct Broadcast : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Broadcast;
  Expr value;
  Broadcast(Type t, Expr v) : ExprNode(kKind, t), value(std::move(v)) {}
  static Expr make(Expr scalar, int lanes);
};

/// base, base + stride, ..., base + (lanes - 1) * stride.
struct Ramp : ExprNode {
  static constexpr ExprKind kKind = ExprKind::Ramp;
  Expr base, stride;
  Ramp(Type t, Expr b, Expr s) : ExprNode(kKind, t), base(std::move(b)), stride(std::move(s)) {}
  static Expr make(Expr base, Expr stride, int lanes);
};

// ---- Statements -------------------------------------------------------------------------------

enum class ForKind { Serial, Parallel, Vectorized, Unrolled, GpuBlock, GpuThread };
const char *for_kind_name(ForKind k);

struct For : StmtNode {
  static constexpr StmtKind kKind = StmtKind::For;
  std::string var;
  Expr min, extent;
  ForKind for_kind;
  int gpu_dim = 0;  // GpuBlock/GpuThread: which of the 3 dimensions
  Stmt body;
  For(std::string v, Expr m, Expr e, ForKind k, int d, Stmt b)
      : StmtNode(kKind), var(std::move(v)), min(std::move(m)), extent(std::move(e)), for_kind(k),
        gpu_dim(d), body(std::move(b)) {}
  static Stmt make(std::string var, Expr min, Expr extent, ForKind kind, Stmt body,
                   int gpu_dim = 0);
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind kKind = StmtKind::IfThenElse;
  Expr cond;
  Stmt then_case, else_case;  // else_case may be null
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(kKind), cond(std::move(c)), then_case(std::move(t)), else_case(std::move(e)) {}
  static Stmt make(Expr cond, Stmt then_case, Stmt else_case = nullptr);
};

struct Store : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Store;
  std::string buffer;
  Expr index, value;
  Store(std::string b, Expr i, Expr v)
      : StmtNode(kKind), buffer(std::move(b)), index(std::move(i)), value(std::move(v)) {}
  static Stmt make(std::string buffer, Expr index, Expr value);
};

struct LetStmt : StmtNode {
  static constexpr StmtKind kKind = StmtKind::LetStmt;
  std::string var;
  Expr value;
  Stmt body;
  LetStmt(std::string n, Expr v, Stmt b)
      : StmtNode(kKind), var(std::move(n)), value(std::move(v)), body(std::move(b)) {}
  static Stmt make(std::string var, Expr value, Stmt body);
};

struct Block : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Block;
  std::vector<Stmt> stmts;
  explicit Block(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  /// Flattens nested blocks; a single statement is returned as itself.
  static Stmt make(std::vector<Stmt> stmts);
};

/// A kernel-local array of `size` elements of `type`, visible in `body`.
struct Allocate : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Allocate;
  std::string buffer;
  Type type;
  int64_t size;
  bool local;  // work-group shared memory (GPU) rather than private registers/stack
  Stmt body;
  Allocate(std::string b, Type t, int64_t s, bool l, Stmt bd)
      : StmtNode(kKind), buffer(std::move(b)), type(t), size(s), local(l), body(std::move(bd)) {}
  static Stmt make(std::string buffer, Type type, int64_t size, bool local, Stmt body);
};

struct Barrier : StmtNode {
  static constexpr StmtKind kKind = StmtKind::Barrier;
  Barrier() : StmtNode(kKind) {}
  static Stmt make();
};

// ---- Kernels ----------------------------------------------------------------------------------

struct BufferParam {
  std::string name;
  tile::DType dtype;
  int64_t elements;
  bool is_output;
  /// Read by aligned groups of four elements (Target::grouped_read_limit; set by finish_kernel).
  bool grouped_reads = false;
  /// Elements ahead of each contiguous read that the backend prefetches into L2; 0: none. On
  /// `cpu` the next reduction block of a constant panel (ApplySchedule.cpp), at every read; in
  /// OpenCL C only in the first iteration of the serial loops around the read (the first row tile
  /// of a register-tiled kernel: later passes find the panel in cache; Target::panel_prefetch_bytes).
  int64_t prefetch_ahead = 0;
  /// A constant panel (compiler/ConstantPanel.h): weights packed once, read by every work-item.
  bool constant_panel = false;
};

/// One kernel: a body over its buffer parameters. What the runtime launches.
struct Kernel {
  std::string name;
  std::vector<BufferParam> params;
  Stmt body;
};

}  // namespace tessera::compiler
