#include "autodiff/Builder.h"

#include "tile/Diagnostics.h"
#include "tile/Printer.h"

namespace tessera::autodiff {

using tile::Expr;
using tile::ExprPtr;
using tile::Intrinsic;
using tile::IntrinsicKind;
using tile::Poly;
using tile::PolyPtr;

Kind promote_kind(Kind a, Kind b) {
  if (a == Kind::Float || b == Kind::Float) return Kind::Float;
  if (a == Kind::Unknown || b == Kind::Unknown) return Kind::Unknown;
  if (a == Kind::Int || b == Kind::Int) return Kind::Int;
  return Kind::Bool;
}

namespace ex {
ExprPtr ref(const std::string &name) { return Expr::make_ref(name); }
ExprPtr lit(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string text(buf);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return Expr::make_float(v, text);
}
ExprPtr int_lit(int64_t v) { return Expr::make_int(v); }
ExprPtr call(Intrinsic op, std::vector<ExprPtr> args) {
  return Expr::make_call(op, std::move(args));
}
ExprPtr add(ExprPtr a, ExprPtr b) { return call(Intrinsic::Add, {std::move(a), std::move(b)}); }
ExprPtr sub(ExprPtr a, ExprPtr b) { return call(Intrinsic::Sub, {std::move(a), std::move(b)}); }
ExprPtr mul(ExprPtr a, ExprPtr b) { return call(Intrinsic::Mul, {std::move(a), std::move(b)}); }
ExprPtr div(ExprPtr a, ExprPtr b) { return call(Intrinsic::Div, {std::move(a), std::move(b)}); }
ExprPtr neg(ExprPtr a) { return call(Intrinsic::Neg, {std::move(a)}); }
ExprPtr select(ExprPtr c, ExprPtr a, ExprPtr b) {
  return call(Intrinsic::Cond, {std::move(c), std::move(a), std::move(b)});
}
bool is_int(const ExprPtr &e, int64_t v) { return e->kind == Expr::Kind::Int && e->int_value == v; }
bool same_dims(const Dims &a, const Dims &b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!tile::structurally_equal(a[i], b[i])) return false;
  return true;
}
PolyPtr to_poly(const ExprPtr &e) {
  switch (e->kind) {
    case Expr::Kind::Int: return Poly::make_int(e->int_value);
    case Expr::Kind::Ref: return Poly::make_name(e->name);
    case Expr::Kind::Float: return nullptr;
    case Expr::Kind::Call: break;
  }
  std::vector<PolyPtr> a;
  for (const auto &x : e->args) {
    a.push_back(to_poly(x));
    if (!a.back()) return nullptr;
  }
  switch (e->op) {
    case Intrinsic::Ident: return a[0];
    case Intrinsic::Neg: return Poly::make_unary(Poly::Kind::Neg, a[0]);
    case Intrinsic::Add: return Poly::make_binary(Poly::Kind::Add, a[0], a[1]);
    case Intrinsic::Sub: return Poly::make_binary(Poly::Kind::Sub, a[0], a[1]);
    case Intrinsic::Mul: return Poly::make_binary(Poly::Kind::Mul, a[0], a[1]);
    case Intrinsic::Div: return Poly::make_binary(Poly::Kind::Div, a[0], a[1]);
    default: return nullptr;
  }
}
}  // namespace ex

namespace {

void collect_poly_names(const PolyPtr &p, std::set<std::string> &out) {
  if (!p) return;
  if (p->kind == Poly::Kind::Index || p->kind == Poly::Kind::Name) out.insert(p->name);
  collect_poly_names(p->lhs, out);
  collect_poly_names(p->rhs, out);
}

// A broadcast dimension: equal names stay, a literal 1 stretches, two different names give
// max(a, b), which is right whichever of them is 1 when the program is bound.
ExprPtr broadcast_dim(const ExprPtr &a, const ExprPtr &b) {
  if (tile::structurally_equal(a, b) || ex::is_int(b, 1)) return a;
  if (ex::is_int(a, 1)) return b;
  if (a->kind == Expr::Kind::Int && b->kind == Expr::Kind::Int)
    throw tile::Error("error: cannot broadcast dimensions " + std::to_string(a->int_value) +
                      " and " + std::to_string(b->int_value));
  return ex::call(Intrinsic::Max, {a, b});
}

Dims broadcast(const Dims &a, const Dims &b) {
  const Dims &lo = a.size() < b.size() ? a : b, &hi = a.size() < b.size() ? b : a;
  Dims out = hi;
  size_t off = hi.size() - lo.size();
  for (size_t i = 0; i < lo.size(); ++i) out[off + i] = broadcast_dim(hi[off + i], lo[i]);
  return out;
}

// 1 when a dimension of size d is bigger than 1, else 0, as a constant index polynomial:
// floor(2d / (d + 2)) is 0 for d = 0 or 1 and 1 for every d >= 2. It turns a dimension that may or
// may not have been stretched into an index coefficient (see unbroadcast).
PolyPtr stretch_coefficient(const ExprPtr &d) {
  if (d->kind == Expr::Kind::Call && d->op == Intrinsic::Max) {
    PolyPtr a = stretch_coefficient(d->args[0]), b = stretch_coefficient(d->args[1]);
    if (!a || !b) return nullptr;
    // max(a, b) > 1 iff either is: ca + cb - ca * cb.
    return Poly::make_binary(Poly::Kind::Sub, Poly::make_binary(Poly::Kind::Add, a, b),
                             Poly::make_binary(Poly::Kind::Mul, a, b));
  }
  PolyPtr p = ex::to_poly(d);
  if (!p) return nullptr;
  return Poly::make_binary(Poly::Kind::Div,
                           Poly::make_binary(Poly::Kind::Mul, Poly::make_int(2), p),
                           Poly::make_binary(Poly::Kind::Add, p, Poly::make_int(2)));
}

}  // namespace

GradientBuilder::GradientBuilder(const tile::Program &src,
                                 const std::map<std::string, Kind> &input_kinds)
    : src_(src) {
  for (const auto &in : src.inputs) {
    used_.insert(in.name);
    for (const auto &d : in.dims)
      if (!d.name.empty()) used_.insert(d.name);
    auto k = input_kinds.find(in.name);
    kinds_[in.name] = k == input_kinds.end() ? Kind::Unknown : k->second;
    Dims dims;
    for (const auto &d : in.dims)
      dims.push_back(d.name.empty() ? ex::int_lit(d.size) : ex::ref(d.name));
    dims_[in.name] = dims;
    if (!in.has_dims) unshaped_.insert(in.name);
  }
  for (const auto &s : src.statements) {
    used_.insert(s.output);
    if (!s.is_contraction()) continue;
    const auto &c = s.contraction();
    for (const auto &p : c.output.indices) collect_poly_names(p, used_);
    for (const auto &a : c.inputs)
      for (const auto &p : a.indices) collect_poly_names(p, used_);
    for (const auto &k : c.constraints) collect_poly_names(k.poly, used_);
  }
  infer_source();
}

void GradientBuilder::infer_source() {
  for (const auto &s : src_.statements) {
    if (s.is_builtin()) {
      dims_[s.output] = builtin_shape(s.builtin());
      kinds_[s.output] = builtin_kind(s.builtin());
      continue;
    }
    if (s.is_contraction()) {
      const auto &c = s.contraction();
      dims_[s.output] = c.sizes;
      Kind k = kind(c.inputs[0].tensor);
      if (c.comb == tile::CombOp::Eq)
        k = Kind::Bool;
      else if (c.comb == tile::CombOp::Cond)
        k = kind(c.inputs[2].tensor);
      else if (c.inputs.size() == 2)
        k = promote_kind(k, kind(c.inputs[1].tensor));
      kinds_[s.output] = k;
      continue;
    }
    const ExprPtr &e = s.expr();
    if (e->kind == Expr::Kind::Call && tile::is_special(e->op)) {
      dims_[s.output] = special_shape(e);
      kinds_[s.output] = special_kind(e);
      continue;
    }
    dims_[s.output] = shape_of(e);
    kinds_[s.output] = kind_of(e);
  }
}

Dims GradientBuilder::special_shape(const ExprPtr &e) const {
  auto arg_dims = [&](size_t i) { return shape_of(e->args[i]); };
  switch (e->op) {
    case Intrinsic::Gather: {
      Dims x = arg_dims(0), out = arg_dims(1);
      if (!x.empty()) out.insert(out.end(), x.begin() + 1, x.end());
      return out;
    }
    case Intrinsic::Scatter: return arg_dims(2);
    case Intrinsic::Shape: return {ex::int_lit(static_cast<int64_t>(arg_dims(0).size()))};
    case Intrinsic::Reshape:
    case Intrinsic::PrngStep: return Dims(e->args.begin() + 1, e->args.end());
    case Intrinsic::Index:
    case Intrinsic::PrngValue: return arg_dims(0);
    default: return {};
  }
}

Kind GradientBuilder::special_kind(const ExprPtr &e) const {
  switch (e->op) {
    case Intrinsic::Gather:
    case Intrinsic::Scatter:
    case Intrinsic::Reshape: return kind_of(e->args[0]);
    case Intrinsic::PrngValue: return Kind::Float;
    default: return Kind::Int;
  }
}

// The shapes of the statements inline_builtin writes: softmax divides X by a column of one value
// per row (X2 rows), binary crossentropy broadcasts its two tensors, reverse_grad copies X.
Dims GradientBuilder::builtin_shape(const tile::BuiltinCall &call) const {
  const Dims &x = dims(call.args[0]->name);
  switch (call.fn) {
    case tile::Builtin::Softmax:
    case tile::Builtin::LogSoftmax:
      // A literal row count other than 1 stays (any other X2 than it or 1 does not bind).
      if (x.size() == 2 && x[0]->kind == Expr::Kind::Int && x[0]->int_value != 1) return x;
      return broadcast(x, {call.args[1], ex::int_lit(1)});
    case tile::Builtin::BinaryCrossentropy: return broadcast(x, dims(call.args[1]->name));
    case tile::Builtin::ReverseGrad: return x;
  }
  return x;
}

Kind GradientBuilder::builtin_kind(const tile::BuiltinCall &call) const {
  if (call.fn == tile::Builtin::ReverseGrad) return kind(call.args[0]->name);
  return Kind::Float;  // exp and log make floats
}

const Dims &GradientBuilder::dims(const std::string &name) const {
  auto it = dims_.find(name);
  TESSERA_INTERNAL_ASSERT(it != dims_.end(), "no shape for " + name);
  if (unshaped_.count(name)) {
    const tile::Input *in = src_.find_input(name);
    tile::user_error(src_.source, in ? in->range : tile::SourceRange{},
                     "autodiff needs the dimensions of input '" + name + "' (declare it as " +
                         name + "[...])");
  }
  return it->second;
}

Kind GradientBuilder::kind(const std::string &name) const {
  auto it = kinds_.find(name);
  return it == kinds_.end() ? Kind::Int : it->second;  // dimension names are integers
}

Dims GradientBuilder::shape_of(const ExprPtr &e) const {
  switch (e->kind) {
    case Expr::Kind::Int:
    case Expr::Kind::Float: return {};
    case Expr::Kind::Ref: return is_tensor(e->name) ? dims(e->name) : Dims{};
    case Expr::Kind::Call: break;
  }
  if (tile::is_special(e->op)) return special_shape(e);
  auto info = tile::intrinsic_info(e->op);
  size_t n =
      info.kind == IntrinsicKind::Cast ? 1 : e->args.size();  // a cast's bit width is no tensor
  Dims out;
  for (size_t i = 0; i < n; ++i) out = broadcast(out, shape_of(e->args[i]));
  return out;
}

Kind GradientBuilder::kind_of(const ExprPtr &e) const {
  switch (e->kind) {
    case Expr::Kind::Int: return Kind::Int;
    case Expr::Kind::Float: return Kind::Float;
    case Expr::Kind::Ref: return kind(e->name);
    case Expr::Kind::Call: break;
  }
  if (tile::is_special(e->op)) return special_kind(e);
  switch (tile::intrinsic_info(e->op).kind) {
    case IntrinsicKind::Compare: return Kind::Bool;
    case IntrinsicKind::FloatMath: return Kind::Float;
    case IntrinsicKind::Cast:
      return e->op == Intrinsic::AsFloat  ? Kind::Float
             : e->op == Intrinsic::AsBool ? Kind::Bool
                                          : Kind::Int;
    case IntrinsicKind::Select: return promote_kind(kind_of(e->args[1]), kind_of(e->args[2]));
    default: {
      Kind k = kind_of(e->args[0]);
      for (size_t i = 1; i < e->args.size(); ++i) k = promote_kind(k, kind_of(e->args[i]));
      return k;
    }
  }
}

std::string GradientBuilder::fresh(const std::string &hint) {
  for (;;) {
    std::string name = "G" + std::to_string(++counter_) + (hint.empty() ? "" : "_" + hint);
    if (used_.insert(name).second) return name;
  }
}

std::string GradientBuilder::fresh_index() {
  for (;;) {
    std::string name = "g" + std::to_string(index_counter_++);
    if (used_.insert(name).second) return name;
  }
}

void GradientBuilder::declare(const std::string &name, Dims d, Kind k) {
  used_.insert(name);
  dims_[name] = std::move(d);
  kinds_[name] = k;
}

std::string GradientBuilder::emit(const ExprPtr &e, const std::string &hint,
                                  const std::string &name) {
  std::string out = name.empty() ? fresh(hint) : name;
  used_.insert(out);
  Dims d = shape_of(e);
  Kind k = kind_of(e);
  tile::Statement s;
  s.output = out;
  s.body = e;
  out_.push_back(std::move(s));
  declare(out, std::move(d), k);
  return out;
}

std::string GradientBuilder::emit(tile::Contraction c, const std::string &hint,
                                  const std::string &name) {
  std::string out = name.empty() ? fresh(hint) : name;
  c.output.tensor = out;
  Kind k = kind(c.inputs[0].tensor);
  if (c.comb == tile::CombOp::Cond)
    k = kind(c.inputs[2].tensor);
  else if (c.inputs.size() == 2)
    k = promote_kind(k, kind(c.inputs[1].tensor));
  Dims d = c.sizes;
  tile::Statement s;
  s.output = out;
  s.body = std::move(c);
  out_.push_back(std::move(s));
  declare(out, std::move(d), k);
  return out;
}

std::string GradientBuilder::name_of(const ExprPtr &e, const std::string &hint) {
  if (e->kind == Expr::Kind::Ref && is_tensor(e->name)) return e->name;
  return emit(e, hint);
}

ExprPtr GradientBuilder::unbroadcast(const ExprPtr &g, const Dims &from, const Dims &to,
                                     const std::string &hint) {
  if (ex::same_dims(from, to)) return g;
  TESSERA_INTERNAL_ASSERT(from.size() >= to.size(), "unbroadcast to a larger rank");
  std::string t = name_of(g, hint);
  // One sum contraction: leading dimensions are summed; a target dimension that is literally 1
  // sums to index 0; a target dimension d that differs symbolically from the source dimension
  // (either may be 1 at bind time) is written at `c(d) * i`, with c(d) = 1 when d > 1 (no
  // stretch: identity) and 0 when d = 1 (stretched: everything sums into index 0). Linear cost.
  tile::Contraction c;
  c.agg = tile::AggOp::Sum;
  tile::Access in;
  in.tensor = t;
  size_t lead = from.size() - to.size();
  for (size_t k = 0; k < lead; ++k) in.indices.push_back(Poly::make_index(fresh_index()));
  for (size_t j = 0; j < to.size(); ++j) {
    const ExprPtr &fd = from[lead + j], &td = to[j];
    PolyPtr idx = Poly::make_index(fresh_index());
    in.indices.push_back(idx);
    if (tile::structurally_equal(fd, td)) {
      c.output.indices.push_back(idx);
    } else if (ex::is_int(td, 1)) {
      c.output.indices.push_back(Poly::make_int(0));
    } else {
      PolyPtr coeff = stretch_coefficient(td);
      if (!coeff)
        throw tile::Error("error: autodiff cannot undo broadcasting over the dimension " +
                          tile::print_expr(td));
      c.output.indices.push_back(Poly::make_binary(Poly::Kind::Mul, coeff, idx));
    }
  }
  c.sizes = to;
  c.inputs.push_back(std::move(in));
  return ex::ref(emit(std::move(c), hint));
}

void GradientBuilder::add_grad(const std::string &name, const std::string &grad) {
  grads_[name].push_back(grad);
}

std::string GradientBuilder::total_grad(const std::string &name) {
  auto it = grads_.find(name);
  if (it == grads_.end() || it->second.empty()) return "";
  auto &v = it->second;
  if (v.size() > 1) {
    ExprPtr sum = ex::ref(v[0]);
    for (size_t i = 1; i < v.size(); ++i) sum = ex::add(sum, ex::ref(v[i]));
    std::string total = emit(sum, "d" + name);
    v = {total};
  }
  return v[0];
}

}  // namespace tessera::autodiff
