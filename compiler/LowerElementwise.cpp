#include "compiler/LowerElementwise.h"

#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

using Op = Binary::Op;
using tile::Intrinsic;
using tile::IntrinsicKind;

Type scalar(tile::DType t) { return Type{t, 1}; }

Expr literal(const tile::BoundExpr &e, tile::DType t) {
  bool is_int = e.kind == tile::Expr::Kind::Int;
  if (tile::is_float(t))
    return FloatImm::make(scalar(t), is_int ? static_cast<double>(e.int_value) : e.float_value);
  if (t == tile::DType::Bool)
    return IntImm::make(scalar(t), is_int ? e.int_value != 0 : e.float_value != 0);
  return IntImm::make(scalar(t), is_int ? e.int_value : static_cast<int64_t>(e.float_value));
}

// An argument in the dtype `t` the node computes in; literals are built there directly.
Expr arg_in(const tile::BoundExpr &a, tile::DType t, const std::vector<Expr> &coords,
            const ElementwiseContext &ctx, const std::vector<int64_t> &shape) {
  if (a.kind == tile::Expr::Kind::Int || a.kind == tile::Expr::Kind::Float) return literal(a, t);
  // The argument's coordinates: broadcast from the right.
  std::vector<Expr> sub;
  size_t off = shape.size() - a.shape.size();
  for (size_t d = 0; d < a.shape.size(); ++d)
    sub.push_back(a.shape[d] == 1 ? IntImm::make(0) : coords[off + d]);
  return convert_value(lower_value(a, sub, ctx), t);
}

Expr truthy(Expr e) {
  if (e->type.dtype == tile::DType::Bool) return e;
  return convert_value(e, tile::DType::Bool);
}

}  // namespace

Expr convert_value(Expr e, tile::DType to) {
  if (e->type.dtype == to) return e;
  if (to == tile::DType::Bool) {
    Type t = e->type;
    Expr zero = tile::is_float(t.dtype) ? FloatImm::make(t, 0) : IntImm::make(t, 0);
    return Binary::make(Op::NE, e, zero);
  }
  return Cast::make(Type{to, e->type.lanes}, e);
}

Expr broadcast_index(const std::vector<int64_t> &shape, const std::vector<Expr> &coords) {
  Expr idx = IntImm::make(0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    size_t d = shape.size() - 1 - i, c = coords.size() - 1 - i;
    if (shape[d] != 1) {
      Expr term = stride == 1 ? coords[c] : Binary::make(Op::Mul, coords[c], IntImm::make(stride));
      idx = Binary::make(Op::Add, term, idx);
    }
    stride *= shape[d];
  }
  return idx;
}

Expr value_at(const std::string &name, const std::vector<Expr> &coords,
              const ElementwiseContext &ctx) {
  const auto &type = ctx.program.type_of(name);
  if (name == ctx.acc_tensor) return Var::make(scalar(type.dtype), kAccName);
  if (ctx.plan.inlined(name)) {
    const auto &s = ctx.program.statements[ctx.plan.position.at(name)];
    if (!s.is_contraction()) return convert_value(lower_value(*s.expr(), coords, ctx), type.dtype);
    if (auto it = ctx.plan.permutations.find(name); it != ctx.plan.permutations.end()) {
      std::vector<Expr> at(coords.size());  // its input's coordinates (FusionPlan::permutations)
      for (size_t d = 0; d < coords.size(); ++d) at[it->second[d]] = coords[d];
      return value_at(s.contraction().inputs[0].tensor, at, ctx);
    }
  }
  return Load::make(scalar(type.dtype), ctx.plan.storage(name),
                    broadcast_index(type.shape, coords));
}

Expr lower_value(const tile::BoundExpr &e, const std::vector<Expr> &coords,
                 const ElementwiseContext &ctx) {
  tile::DType t = e.type.dtype;
  switch (e.kind) {
    case tile::Expr::Kind::Int:
    case tile::Expr::Kind::Float: return literal(e, t);
    case tile::Expr::Kind::Ref: return value_at(e.name, coords, ctx);
    case tile::Expr::Kind::Call: break;
  }
  const auto kind = tile::intrinsic_info(e.op).kind;
  auto arg = [&](size_t i, tile::DType in) { return arg_in(*e.args[i], in, coords, ctx, e.shape); };
  switch (kind) {
    case IntrinsicKind::Cast: {
      Expr x = lower_value(
          *e.args[0],
          [&] {
            std::vector<Expr> sub;
            size_t off = e.shape.size() - e.args[0]->shape.size();
            for (size_t d = 0; d < e.args[0]->shape.size(); ++d)
              sub.push_back(e.args[0]->shape[d] == 1 ? IntImm::make(0) : coords[off + d]);
            return sub;
          }(),
          ctx);
      if (e.args[0]->kind == tile::Expr::Kind::Int || e.args[0]->kind == tile::Expr::Kind::Float)
        x = literal(*e.args[0], e.args[0]->type.dtype);
      return convert_value(x, t);
    }
    case IntrinsicKind::Compare: {
      tile::ValueType pt = e.args[0]->type;
      for (const auto &a : e.args) pt = tile::promote(pt, a->type);
      Expr a = arg(0, pt.dtype), b = arg(1, pt.dtype);
      Op op = e.op == Intrinsic::CmpEq   ? Op::EQ
              : e.op == Intrinsic::CmpNe ? Op::NE
              : e.op == Intrinsic::CmpLt ? Op::LT
              : e.op == Intrinsic::CmpGt ? Op::GT
              : e.op == Intrinsic::CmpLe ? Op::LE
                                         : Op::GE;
      return Binary::make(op, a, b);
    }
    case IntrinsicKind::Select: {
      const auto &c = *e.args[0];
      Expr cond =
          c.kind == tile::Expr::Kind::Int || c.kind == tile::Expr::Kind::Float
              ? IntImm::make(Type::boolean(), c.kind == tile::Expr::Kind::Int ? c.int_value != 0
                                                                              : c.float_value != 0)
              : truthy(arg(0, c.type.dtype));
      return Select::make(cond, arg(1, t), arg(2, t));
    }
    case IntrinsicKind::Special:
      // `index(X, axis)`: the coordinate itself; X gives only the shape.
      TESSERA_INTERNAL_ASSERT(e.op == Intrinsic::Index, "special inside an elementwise expression");
      return convert_value(coords[e.args[1]->int_value], t);
    case IntrinsicKind::Arith:
    case IntrinsicKind::Bitwise:
    case IntrinsicKind::FloatMath:
    case IntrinsicKind::SameType: break;
  }
  std::vector<Expr> args;
  for (size_t i = 0; i < e.args.size(); ++i) args.push_back(arg(i, t));
  bool is_bool = t == tile::DType::Bool;
  switch (e.op) {
    case Intrinsic::Ident: return args[0];
    case Intrinsic::Add:
      if (!is_bool) return Binary::make(Op::Add, args[0], args[1]);
      break;
    case Intrinsic::Sub:
      if (!is_bool) return Binary::make(Op::Sub, args[0], args[1]);
      break;
    case Intrinsic::Mul:
      if (!is_bool) return Binary::make(Op::Mul, args[0], args[1]);
      break;
    case Intrinsic::BitAnd: return Binary::make(is_bool ? Op::And : Op::BitAnd, args[0], args[1]);
    case Intrinsic::BitOr: return Binary::make(is_bool ? Op::Or : Op::BitOr, args[0], args[1]);
    case Intrinsic::BitXor:
      return is_bool ? Binary::make(Op::NE, args[0], args[1])
                     : Binary::make(Op::BitXor, args[0], args[1]);
    case Intrinsic::BitNot:
      if (is_bool) return Not::make(args[0]);
      break;
    default: break;
  }
  // Everything else keeps the interpreter's exact semantics through Call (integer division
  // truncating with x/0 = 0, NaN-propagating max/min, shift ranges, ...).
  return Call::make(scalar(t), e.op, args);
}

ContractionNest assign_nest(const tile::BoundStatement &s,
                            const std::function<Expr(const std::vector<Expr> &)> &value) {
  ContractionNest n;
  n.name = s.output;
  std::vector<Expr> coords;
  for (size_t d = 0; d < s.type.shape.size(); ++d) {
    std::string name = "i" + std::to_string(d);
    n.indices.push_back({name, 0, s.type.shape[d], true});
    coords.push_back(Var::make(Type::i64(), name));
  }
  n.agg = tile::AggOp::Assign;
  n.result_type = scalar(s.type.dtype);
  n.acc_type = n.result_type;
  n.value = convert_value(value(coords), s.type.dtype);
  n.out_buffer = s.output;
  n.out_index = broadcast_index(s.type.shape, coords);
  n.empty = s.type.elements() == 0;
  return n;
}

ContractionNest elementwise_nest(const tile::BoundStatement &s, const ElementwiseContext &ctx) {
  return assign_nest(s, [&](const std::vector<Expr> &c) { return lower_value(*s.expr(), c, ctx); });
}

}  // namespace tessera::compiler
