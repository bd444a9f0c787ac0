#include "compiler/LowerSpecial.h"

#include "compiler/IRBuild.h"
#include "compiler/LowerElementwise.h"
#include "compiler/Simplify.h"

namespace tessera::compiler {

namespace {

using namespace ir_build;  // NOLINT: imm, var, bin, Op
using tile::Intrinsic;

Type scalar(tile::DType t) { return Type{t, 1}; }

Expr clamp_index(Expr raw, int64_t n) {
  Expr i = raw->type.dtype == tile::DType::Int64 ? raw : Cast::make(Type::i64(), raw);
  return Binary::make(Op::Min, Binary::make(Op::Max, i, imm(0)), imm(n - 1));
}

}  // namespace

std::optional<ContractionNest> special_nest(const tile::BoundProgram &p,
                                            const tile::BoundStatement &s, const FusionPlan &plan) {
  const tile::BoundExpr &e = *s.expr();
  auto tensor = [&](size_t i) -> const tile::BoundExpr * {
    return i < e.args.size() && e.args[i]->kind == tile::Expr::Kind::Ref ? e.args[i].get()
                                                                         : nullptr;
  };
  auto load = [&](const std::string &name, Expr index) {
    return Load::make(scalar(p.type_of(name).dtype), plan.storage(name), index);
  };
  if (e.op == Intrinsic::Reshape && tensor(0)) {
    // The same elements in the same C order: element i of the output is element i of X.
    return assign_nest(s, [&](const std::vector<Expr> &c) {
      return load(tensor(0)->name, broadcast_index(s.type.shape, c));
    });
  }
  if (e.op == Intrinsic::Gather && tensor(0) && tensor(1)) {
    // out[ic..., rc...] = X[clamp(I[ic...]), rc...]: the row through the index buffer.
    auto xt = p.type_of(tensor(0)->name), it = p.type_of(tensor(1)->name);
    std::vector<int64_t> row_shape(xt.shape.begin() + 1, xt.shape.end());
    int64_t row_elems = 1;
    for (int64_t d : row_shape) row_elems *= d;
    return assign_nest(s, [&](const std::vector<Expr> &c) {
      std::vector<Expr> ic(c.begin(), c.begin() + it.shape.size()),
          rc(c.begin() + it.shape.size(), c.end());
      Expr row = clamp_index(load(tensor(1)->name, broadcast_index(it.shape, ic)), xt.shape[0]);
      return load(tensor(0)->name,
                  bin(Op::Add, bin(Op::Mul, row, imm(row_elems)), broadcast_index(row_shape, rc)));
    });
  }
  return std::nullopt;
}

std::optional<Stmt> lower_special(const tile::BoundProgram &p, const tile::BoundStatement &s) {
  const tile::BoundExpr &e = *s.expr();
  Type out = scalar(s.type.dtype);
  auto ref_arg = [&](size_t i) -> const tile::BoundExpr * {
    return i < e.args.size() && e.args[i]->kind == tile::Expr::Kind::Ref ? e.args[i].get()
                                                                         : nullptr;
  };
  if (s.type.elements() == 0) return std::nullopt;
  switch (e.op) {
    case Intrinsic::Shape: {
      auto t = p.type_of(e.args[0]->kind == tile::Expr::Kind::Ref ? e.args[0]->name : s.output);
      if (e.args[0]->kind != tile::Expr::Kind::Ref) t.shape = e.args[0]->shape;
      std::vector<Stmt> stores;
      for (size_t d = 0; d < t.shape.size(); ++d)
        stores.push_back(Store::make(s.output, imm(d), IntImm::make(out, t.shape[d])));
      return Block::make(stores);
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
