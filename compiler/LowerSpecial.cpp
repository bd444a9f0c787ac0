#include "compiler/LowerSpecial.h"

#include "compiler/IRBuild.h"
#include "compiler/LowerElementwise.h"
#include "compiler/Simplify.h"

namespace tessera::compiler {

namespace {

using namespace ir_build;  // NOLINT: imm, var, bin, Op
using tile::Intrinsic;

Type scalar(tile::DType t) { return Type{t, 1}; }

// Loops i0..i{n-1} over `shape` around body(coords).
template <typename F>
Stmt loops(const std::vector<int64_t> &shape, F body) {
  std::vector<Expr> coords;
  for (size_t d = 0; d < shape.size(); ++d) coords.push_back(var("i" + std::to_string(d)));
  Stmt s = body(coords);
  for (size_t d = shape.size(); d-- > 0;)
    s = For::make("i" + std::to_string(d), imm(0), imm(shape[d]),
                  d == 0 ? ForKind::Parallel : ForKind::Serial, s);
  return s;
}

Expr clamp_index(Expr raw, int64_t n) {
  Expr i = raw->type.dtype == tile::DType::Int64 ? raw : Cast::make(Type::i64(), raw);
  return Binary::make(Op::Min, Binary::make(Op::Max, i, imm(0)), imm(n - 1));
}

}  // namespace

std::optional<Stmt> lower_special(const tile::BoundProgram &p, const tile::BoundStatement &s) {
  const tile::BoundExpr &e = *s.expr();
  Type out = scalar(s.type.dtype);
  auto ref_arg = [&](size_t i) -> const tile::BoundExpr * {
    return i < e.args.size() && e.args[i]->kind == tile::Expr::Kind::Ref ? e.args[i].get()
                                                                         : nullptr;
  };
  if (s.type.elements() == 0) return std::nullopt;
  switch (e.op) {
    case Intrinsic::Reshape: {
      auto *x = ref_arg(0);
      if (!x) return std::nullopt;
      auto t = p.type_of(x->name);
      return simplify(loops({s.type.elements()}, [&](const std::vector<Expr> &c) {
        return Store::make(s.output, c[0],
                           convert_value(Load::make(scalar(t.dtype), x->name, c[0]), s.type.dtype));
      }));
    }
    case Intrinsic::Shape: {
      auto t = p.type_of(e.args[0]->kind == tile::Expr::Kind::Ref ? e.args[0]->name : s.output);
      if (e.args[0]->kind != tile::Expr::Kind::Ref) t.shape = e.args[0]->shape;
      std::vector<Stmt> stores;
      for (size_t d = 0; d < t.shape.size(); ++d)
        stores.push_back(Store::make(s.output, imm(d), IntImm::make(out, t.shape[d])));
      return Block::make(stores);
    }
    case Intrinsic::Index: {
      int64_t axis = e.args[1]->int_value;
      return simplify(loops(s.type.shape, [&](const std::vector<Expr> &c) {
        return Store::make(s.output, broadcast_index(s.type.shape, c), Cast::make(out, c[axis]));
      }));
    }
    case Intrinsic::Gather: {
      auto *x = ref_arg(0), *idx = ref_arg(1);
      if (!x || !idx) return std::nullopt;
      auto xt = p.type_of(x->name), it = p.type_of(idx->name);
      size_t ir = it.shape.size();
      std::vector<int64_t> row_shape(xt.shape.begin() + 1, xt.shape.end());
      return simplify(loops(s.type.shape, [&](const std::vector<Expr> &c) {
        std::vector<Expr> ic(c.begin(), c.begin() + ir), rc(c.begin() + ir, c.end());
        Expr row = clamp_index(
            Load::make(scalar(it.dtype), idx->name, broadcast_index(it.shape, ic)), xt.shape[0]);
        int64_t row_elems = 1;
        for (int64_t d : row_shape) row_elems *= d;
        Expr src = Binary::make(Op::Add, Binary::make(Op::Mul, row, imm(row_elems)),
                                broadcast_index(row_shape, rc));
        return Store::make(s.output, broadcast_index(s.type.shape, c),
                           convert_value(Load::make(scalar(xt.dtype), x->name, src), s.type.dtype));
      }));
    }
    case Intrinsic::Scatter: {
      auto *x = ref_arg(0), *idx = ref_arg(1);
      if (!x || !idx) return std::nullopt;
      auto xt = p.type_of(x->name), it = p.type_of(idx->name);
      int64_t row = 1;
      for (size_t d = 1; d < s.type.shape.size(); ++d) row *= s.type.shape[d];
      Expr zero = tile::is_float(out.dtype) ? FloatImm::make(out, 0) : IntImm::make(out, 0);
      Stmt clear = For::make("i", imm(0), imm(s.type.elements()), ForKind::Serial,
                             Store::make(s.output, var("i"), zero));
      // Serial: two indices may name one row, so rows are accumulated in index order.
      Expr dst =
          Binary::make(Op::Add,
                       Binary::make(Op::Mul,
                                    clamp_index(Load::make(scalar(it.dtype), idx->name, var("n")),
                                                s.type.shape[0]),
                                    imm(row)),
                       var("r"));
      Expr src = Binary::make(Op::Add, Binary::make(Op::Mul, var("n"), imm(row)), var("r"));
      Stmt acc = Store::make(
          s.output, dst,
          Binary::make(Op::Add, Load::make(out, s.output, dst),
                       convert_value(Load::make(scalar(xt.dtype), x->name, src), out.dtype)));
      Stmt body = For::make("n", imm(0), imm(it.elements()), ForKind::Serial,
                            For::make("r", imm(0), imm(row), ForKind::Serial, acc));
      return simplify(Block::make({clear, body}));
    }
    default: return std::nullopt;  // prng_*: host steps
  }
}

}  // namespace tessera::compiler
