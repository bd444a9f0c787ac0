#include "compiler/IR.h"

#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {
bool is_comparison(Binary::Op op) {
  using Op = Binary::Op;
  return op == Op::EQ || op == Op::NE || op == Op::LT || op == Op::LE || op == Op::GT ||
         op == Op::GE;
}
}  // namespace

Expr IntImm::make(Type t, int64_t v) {
  TESSERA_INTERNAL_ASSERT(!tile::is_float(t.dtype), "IntImm of a float type");
  return std::make_shared<IntImm>(t, v);
}

Expr FloatImm::make(Type t, double v) {
  TESSERA_INTERNAL_ASSERT(tile::is_float(t.dtype), "FloatImm of a non-float type");
  return std::make_shared<FloatImm>(t, v);
}

Expr Var::make(Type t, std::string name) {
  TESSERA_INTERNAL_ASSERT(!name.empty(), "Var without a name");
  return std::make_shared<Var>(t, std::move(name));
}

Expr Cast::make(Type t, Expr v) {
  TESSERA_INTERNAL_ASSERT(v && v->type.lanes == t.lanes, "Cast changes the lane count");
  return std::make_shared<Cast>(t, std::move(v));
}

Expr Binary::make(Op op, Expr a, Expr b) {
  TESSERA_INTERNAL_ASSERT(a && b, "Binary with a null operand");
  TESSERA_INTERNAL_ASSERT(a->type == b->type, std::string("Binary ") + binary_op_name(op) +
                                                  " of different types " +
                                                  std::string(tile::dtype_name(a->type.dtype)) +
                                                  "x" + std::to_string(a->type.lanes) + " and " +
                                                  std::string(tile::dtype_name(b->type.dtype)) +
                                                  "x" + std::to_string(b->type.lanes));
  Type t = a->type;
  if (is_comparison(op) || op == Op::And || op == Op::Or) t = Type::boolean(a->type.lanes);
  if (op == Op::And || op == Op::Or)
    TESSERA_INTERNAL_ASSERT(a->type.dtype == tile::DType::Bool, "And/Or of non-bool operands");
  return std::make_shared<Binary>(t, op, std::move(a), std::move(b));
}

const char *binary_op_name(Binary::Op op) {
  switch (op) {
    case Binary::Op::Add: return "+";
    case Binary::Op::Sub: return "-";
    case Binary::Op::Mul: return "*";
    case Binary::Op::Div: return "/";
    case Binary::Op::Mod: return "%";
    case Binary::Op::Min: return "min";
    case Binary::Op::Max: return "max";
    case Binary::Op::EQ: return "==";
    case Binary::Op::NE: return "!=";
    case Binary::Op::LT: return "<";
    case Binary::Op::LE: return "<=";
    case Binary::Op::GT: return ">";
    case Binary::Op::GE: return ">=";
    case Binary::Op::And: return "&&";
    case Binary::Op::Or: return "||";
    case Binary::Op::BitAnd: return "&";
    case Binary::Op::BitOr: return "|";
    case Binary::Op::BitXor: return "^";
    case Binary::Op::Shl: return "<<";
    case Binary::Op::Shr: return ">>";
  }
  return "?";
}

Expr Not::make(Expr a) {
  TESSERA_INTERNAL_ASSERT(a && a->type.dtype == tile::DType::Bool, "Not of a non-bool");
  Type t = a->type;
  return std::make_shared<Not>(t, std::move(a));
}

Expr Select::make(Expr cond, Expr a, Expr b) {
  TESSERA_INTERNAL_ASSERT(cond && a && b, "Select with a null operand");
  TESSERA_INTERNAL_ASSERT(cond->type.dtype == tile::DType::Bool, "Select condition is not bool");
  TESSERA_INTERNAL_ASSERT(a->type == b->type, "Select branches of different types");
  TESSERA_INTERNAL_ASSERT(cond->type.lanes == 1 || cond->type.lanes == a->type.lanes,
                          "Select condition lanes differ from its values");
  Type t = a->type;
  return std::make_shared<Select>(t, std::move(cond), std::move(a), std::move(b));
}

Expr Load::make(Type element, std::string buffer, Expr index) {
  TESSERA_INTERNAL_ASSERT(index && tile::is_integer(index->type.dtype),
                          "Load index is not an integer");
  TESSERA_INTERNAL_ASSERT(!buffer.empty(), "Load from an unnamed buffer");
  Type t = element.with_lanes(index->type.lanes);
  return std::make_shared<Load>(t, std::move(buffer), std::move(index));
}

Expr Call::make(Type t, tile::Intrinsic op, std::vector<Expr> args) {
  TESSERA_INTERNAL_ASSERT(!tile::is_special(op), "Call of a special intrinsic");
  for (const auto &a : args)
    TESSERA_INTERNAL_ASSERT(a && a->type.lanes == t.lanes, "Call argument lanes");
  return std::make_shared<Call>(t, op, std::move(args));
}

Expr Broadcast::make(Expr scalar, int lanes) {
  TESSERA_INTERNAL_ASSERT(scalar && scalar->type.lanes == 1, "Broadcast of a vector");
  TESSERA_INTERNAL_ASSERT(lanes > 1, "Broadcast to fewer than 2 lanes");
  Type t = scalar->type.with_lanes(lanes);
  return std::make_shared<Broadcast>(t, std::move(scalar));
}

Expr Ramp::make(Expr base, Expr stride, int lanes) {
  TESSERA_INTERNAL_ASSERT(base && stride && base->type == stride->type && base->type.lanes == 1,
                          "Ramp base and stride must be scalars of one type");
  TESSERA_INTERNAL_ASSERT(tile::is_integer(base->type.dtype), "Ramp of a non-integer");
  TESSERA_INTERNAL_ASSERT(lanes > 1, "Ramp of fewer than 2 lanes");
  Type t = base->type.with_lanes(lanes);
  return std::make_shared<Ramp>(t, std::move(base), std::move(stride));
}

const char *for_kind_name(ForKind k) {
  switch (k) {
    case ForKind::Serial: return "serial";
    case ForKind::Parallel: return "parallel";
    case ForKind::Vectorized: return "vectorized";
    case ForKind::Unrolled: return "unrolled";
    case ForKind::GpuBlock: return "gpu_block";
    case ForKind::GpuThread: return "gpu_thread";
  }
  return "?";
}

Stmt For::make(std::string var, Expr min, Expr extent, ForKind kind, Stmt body, int gpu_dim) {
  TESSERA_INTERNAL_ASSERT(!var.empty() && min && extent && body, "For with a missing part");
  TESSERA_INTERNAL_ASSERT(min->type.lanes == 1 && extent->type.lanes == 1 &&
                              tile::is_integer(min->type.dtype) &&
                              tile::is_integer(extent->type.dtype),
                          "For bounds must be scalar integers");
  TESSERA_INTERNAL_ASSERT(gpu_dim >= 0 && gpu_dim < 3, "gpu_dim out of range");
  return std::make_shared<For>(std::move(var), std::move(min), std::move(extent), kind, gpu_dim,
                               std::move(body));
}

Stmt IfThenElse::make(Expr cond, Stmt then_case, Stmt else_case) {
  TESSERA_INTERNAL_ASSERT(cond && then_case, "IfThenElse with a missing part");
  TESSERA_INTERNAL_ASSERT(cond->type == Type::boolean(),
                          "IfThenElse condition is not a scalar bool");
  return std::make_shared<IfThenElse>(std::move(cond), std::move(then_case), std::move(else_case));
}

Stmt Store::make(std::string buffer, Expr index, Expr value) {
  TESSERA_INTERNAL_ASSERT(index && value && !buffer.empty(), "Store with a missing part");
  TESSERA_INTERNAL_ASSERT(tile::is_integer(index->type.dtype), "Store index is not an integer");
  TESSERA_INTERNAL_ASSERT(index->type.lanes == value->type.lanes,
                          "Store index and value lanes differ");
  return std::make_shared<Store>(std::move(buffer), std::move(index), std::move(value));
}

Stmt LetStmt::make(std::string var, Expr value, Stmt body) {
  TESSERA_INTERNAL_ASSERT(!var.empty() && value && body, "LetStmt with a missing part");
  return std::make_shared<LetStmt>(std::move(var), std::move(value), std::move(body));
}

Stmt Block::make(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto &s : stmts) {
    if (!s) continue;
    if (auto *b = as<Block>(s)) {
      flat.insert(flat.end(), b->stmts.begin(), b->stmts.end());
      continue;
    }
    flat.push_back(std::move(s));
  }
  TESSERA_INTERNAL_ASSERT(!flat.empty(), "empty Block");
  if (flat.size() == 1) return flat[0];
  return std::make_shared<Block>(std::move(flat));
}

Stmt Allocate::make(std::string buffer, Type type, int64_t size, bool local, Stmt body) {
  TESSERA_INTERNAL_ASSERT(!buffer.empty() && body, "Allocate with a missing part");
  TESSERA_INTERNAL_ASSERT(size > 0 && type.lanes == 1, "Allocate of a bad size or a vector type");
  return std::make_shared<Allocate>(std::move(buffer), type, size, local, std::move(body));
}

Stmt Barrier::make() { return std::make_shared<Barrier>(); }

}  // namespace tessera::compiler
