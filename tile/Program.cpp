#include "tile/Program.h"

namespace tessera::tile {

PolyPtr Poly::make_int(int64_t v, SourceRange r) {
  auto p = std::make_shared<Poly>();
  p->kind = Kind::Int;
  p->value = v;
  p->range = r;
  return p;
}
PolyPtr Poly::make_index(std::string n, SourceRange r) {
  auto p = std::make_shared<Poly>();
  p->kind = Kind::Index;
  p->name = std::move(n);
  p->range = r;
  return p;
}
PolyPtr Poly::make_name(std::string n, SourceRange r) {
  auto p = std::make_shared<Poly>();
  p->kind = Kind::Name;
  p->name = std::move(n);
  p->range = r;
  return p;
}
PolyPtr Poly::make_unary(Kind k, PolyPtr a, SourceRange r) {
  auto p = std::make_shared<Poly>();
  p->kind = k;
  p->lhs = std::move(a);
  p->range = r;
  return p;
}
PolyPtr Poly::make_binary(Kind k, PolyPtr a, PolyPtr b, SourceRange r) {
  auto p = std::make_shared<Poly>();
  p->kind = k;
  p->lhs = std::move(a);
  p->rhs = std::move(b);
  p->range = r;
  return p;
}

ExprPtr Expr::make_int(int64_t v, SourceRange r) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::Int;
  e->int_value = v;
  e->range = r;
  return e;
}
ExprPtr Expr::make_float(double v, std::string text, SourceRange r) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::Float;
  e->float_value = v;
  e->text = std::move(text);
  e->range = r;
  return e;
}
ExprPtr Expr::make_ref(std::string name, SourceRange r) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::Ref;
  e->name = std::move(name);
  e->range = r;
  return e;
}
ExprPtr Expr::make_call(Intrinsic op, std::vector<ExprPtr> args, SourceRange r) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::Call;
  e->op = op;
  e->args = std::move(args);
  e->range = r;
  return e;
}

ExprPtr Expr::make_builtin_call(Builtin fn, std::vector<ExprPtr> args, SourceRange r) {
  auto e = std::make_shared<Expr>();
  e->kind = Kind::Call;
  e->name = builtin_name(fn);
  e->args = std::move(args);
  e->range = r;
  return e;
}

char agg_symbol(AggOp op) {
  switch (op) {
    case AggOp::Sum: return '+';
    case AggOp::Prod: return '*';
    case AggOp::Max: return '>';
    case AggOp::Min: return '<';
    case AggOp::Assign: return '=';
  }
  return '?';
}

const char *comb_symbol(CombOp op) {
  switch (op) {
    case CombOp::None: return "";
    case CombOp::Mul: return "*";
    case CombOp::Add: return "+";
    case CombOp::Eq: return "==";
    case CombOp::Cond: return "==";
  }
  return "?";
}

const Statement *Program::find_statement(const std::string &name) const {
  for (const auto &s : statements)
    if (s.output == name) return &s;
  return nullptr;
}

const Input *Program::find_input(const std::string &name) const {
  for (const auto &i : inputs)
    if (i.name == name) return &i;
  return nullptr;
}

bool structurally_equal(const PolyPtr &a, const PolyPtr &b) {
  if (!a || !b) return !a && !b;
  return a->kind == b->kind && a->value == b->value && a->name == b->name &&
         structurally_equal(a->lhs, b->lhs) && structurally_equal(a->rhs, b->rhs);
}

bool structurally_equal(const ExprPtr &a, const ExprPtr &b) {
  if (!a || !b) return !a && !b;
  if (a->kind != b->kind || a->int_value != b->int_value || a->name != b->name || a->op != b->op ||
      a->args.size() != b->args.size())
    return false;
  // Float literals compare by value: the printer may respell them.
  if (a->kind == Expr::Kind::Float && a->float_value != b->float_value) return false;
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!structurally_equal(a->args[i], b->args[i])) return false;
  return true;
}

namespace {
template <typename T, typename F>
bool all_equal(const std::vector<T> &a, const std::vector<T> &b, F eq) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!eq(a[i], b[i])) return false;
  return true;
}

bool access_equal(const Access &a, const Access &b) {
  return a.tensor == b.tensor &&
         all_equal(a.indices, b.indices, [](auto &x, auto &y) { return structurally_equal(x, y); });
}

bool contraction_equal(const Contraction &a, const Contraction &b) {
  return a.agg == b.agg && a.comb == b.comb && access_equal(a.output, b.output) &&
         all_equal(a.sizes, b.sizes, [](auto &x, auto &y) { return structurally_equal(x, y); }) &&
         all_equal(a.inputs, b.inputs, access_equal) &&
         all_equal(a.constraints, b.constraints,
                   [](auto &x, auto &y) {
                     return structurally_equal(x.poly, y.poly) &&
                            structurally_equal(x.bound, y.bound);
                   }) &&
         a.default_tensor == b.default_tensor && a.no_defract == b.no_defract;
}

bool builtin_equal(const BuiltinCall &a, const BuiltinCall &b) {
  return a.fn == b.fn &&
         all_equal(a.args, b.args, [](auto &x, auto &y) { return structurally_equal(x, y); });
}

bool statement_equal(const Statement &a, const Statement &b) {
  if (a.output != b.output || a.body.index() != b.body.index()) return false;
  if (!all_equal(a.attributes, b.attributes,
                 [](auto &x, auto &y) { return x.name == y.name && x.params == y.params; }))
    return false;
  if (a.is_contraction()) return contraction_equal(a.contraction(), b.contraction());
  if (a.is_builtin()) return builtin_equal(a.builtin(), b.builtin());
  return structurally_equal(a.expr(), b.expr());
}

bool input_equal(const Input &a, const Input &b) {
  return a.name == b.name && a.has_dims == b.has_dims &&
         all_equal(a.dims, b.dims,
                   [](auto &x, auto &y) { return x.name == y.name && x.size == y.size; });
}
}  // namespace

bool structurally_equal(const Program &a, const Program &b) {
  return all_equal(a.inputs, b.inputs, input_equal) &&
         all_equal(a.outputs, b.outputs, [](auto &x, auto &y) { return x.name == y.name; }) &&
         all_equal(a.statements, b.statements, statement_equal);
}

}  // namespace tessera::tile
