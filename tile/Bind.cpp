#include "tile/Bind.h"

#include <algorithm>
#include <set>

#include "tile/Diagnostics.h"
#include "tile/IndexRanges.h"
#include "tile/InlineBuiltin.h"

namespace tessera::tile {

namespace {

// The element count of `shape`, or nullopt where it overflows int64 (a zero anywhere makes 0).
std::optional<int64_t> checked_elements(const std::vector<int64_t> &shape) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  return n;
}

}  // namespace

int64_t TensorType::elements() const {
  auto n = checked_elements(shape);
  TESSERA_INTERNAL_ASSERT(n, "the element count of " + str() + " overflows");
  return *n;
}

std::optional<int64_t> TensorType::checked_bytes() const {
  auto n = checked_elements(shape);
  int64_t bytes = 0;
  if (!n || __builtin_mul_overflow(*n, static_cast<int64_t>(dtype_size(dtype)), &bytes))
    return std::nullopt;
  return bytes;
}

namespace {

std::string overflow_message(const std::string &name, const TensorType &type) {
  return "tensor '" + name + "' " + type.str() + " needs more than " + std::to_string(INT64_MAX) +
         " bytes; no device holds that much";
}

}  // namespace

int64_t tensor_bytes(const std::string &name, const TensorType &type) {
  if (auto bytes = type.checked_bytes()) return *bytes;
  throw Error("error: " + overflow_message(name, type));
}

std::string too_large_message(const std::string &name, const TensorType &type,
                              const std::string &device, int64_t limit) {
  return "tensor '" + name + "' " + type.str() + " needs " +
         std::to_string(tensor_bytes(name, type)) + " bytes; device " + device + " holds at most " +
         std::to_string(limit);
}

std::string TensorType::str() const {
  std::string out(dtype_name(dtype));
  out += "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

const TensorType &BoundProgram::type_of(const std::string &name) const {
  auto it = types.find(name);
  TESSERA_INTERNAL_ASSERT(it != types.end(), "no type for " + name);
  return it->second;
}

namespace {

// A folded scalar constant: an integer unless is_float.
struct Number {
  bool is_float = false;
  int64_t i = 0;
  double f = 0;
  double as_double() const { return is_float ? f : static_cast<double>(i); }
};

// The final dtype of a weak value is int32 or float32, which promote() already gives it.
DType final_dtype(ValueType t) { return t.dtype; }

class Binder {
 public:
  Binder(const Program &p, const std::map<std::string, TensorType> &inputs)
      : prog_(p), given_(inputs) {
    out_.source = p.source;
  }

  BoundProgram run() {
    bind_inputs();
    for (const auto &s : prog_.statements) bind_statement(s);
    for (const auto &o : prog_.outputs) {
      auto it = out_.types.find(o.name);
      if (it == out_.types.end()) error(o.range, "output '" + o.name + "' is never defined");
      out_.outputs.emplace_back(o.name, it->second);
    }
    return std::move(out_);
  }

 private:
  [[noreturn]] void error(SourceRange r, const std::string &msg) const {
    user_error(prog_.source, r, msg);
  }

  std::string where(SourceRange r) const {
    if (!prog_.source) return "elsewhere";
    LineCol lc = prog_.source->line_col(r.begin);
    return "at " + prog_.source->name() + ":" + std::to_string(lc.line) + ":" +
           std::to_string(lc.column);
  }

  // ---- inputs and dimensions ----

  void bind_inputs() {
    for (const auto &[name, type] : given_) {
      if (prog_.find_input(name)) continue;
      std::string known;
      for (const auto &in : prog_.inputs) known += (known.empty() ? "" : ", ") + in.name;
      throw Error(format_diagnostic(nullptr, {},
                                    "unknown input '" + name + "' (the program's inputs are " +
                                        (known.empty() ? "none" : known) + ")"));
    }
    for (const auto &in : prog_.inputs) {
      auto it = given_.find(in.name);
      if (it == given_.end()) error(in.range, "no value for input '" + in.name + "'");
      const TensorType &t = it->second;
      if (in.has_dims) {
        if (t.shape.size() != in.dims.size())
          error(in.range, "input '" + in.name + "' is declared with " +
                              std::to_string(in.dims.size()) + " dimensions but its value " +
                              t.str() + " has " + std::to_string(t.shape.size()));
        for (size_t d = 0; d < in.dims.size(); ++d) bind_dim(in, in.dims[d], t.shape[d]);
      }
      if (!t.checked_bytes()) error(in.range, overflow_message(in.name, t));
      out_.inputs.emplace_back(in.name, t);
      out_.types[in.name] = t;
      value_types_[in.name] = {t.dtype, false};
    }
  }

  void bind_dim(const Input &in, const InputDim &d, int64_t size) {
    if (d.name.empty()) {
      if (d.size != size)
        error(d.range, "dimension of input '" + in.name + "' is declared as " +
                           std::to_string(d.size) + " but is " + std::to_string(size));
      return;
    }
    auto [it, fresh] = out_.dims.emplace(d.name, size);
    if (fresh) {
      dim_ranges_[d.name] = d.range;
      return;
    }
    if (it->second != size)
      error(d.range, "dimension " + d.name + " bound to " + std::to_string(size) + " here and to " +
                         std::to_string(it->second) + " " + where(dim_ranges_[d.name]));
  }

  // ---- constant folding ----

  std::optional<Number> fold(const ExprPtr &e) const {
    switch (e->kind) {
      case Expr::Kind::Int: return Number{false, e->int_value, 0};
      case Expr::Kind::Float: return Number{true, 0, e->float_value};
      case Expr::Kind::Ref: {
        if (auto d = out_.dims.find(e->name); d != out_.dims.end())
          return Number{false, d->second, 0};
        if (auto c = constants_.find(e->name); c != constants_.end()) return c->second;
        return std::nullopt;
      }
      case Expr::Kind::Call: break;
    }
    std::vector<Number> a;
    for (const auto &arg : e->args) {
      auto v = fold(arg);
      if (!v) return std::nullopt;
      a.push_back(*v);
    }
    bool fl = false;
    for (const auto &n : a) fl |= n.is_float;
    auto num = [&](double f, int64_t i) { return fl ? Number{true, 0, f} : Number{false, i, 0}; };
    // Only the arithmetic a size or a constant needs folds; other calls are run-time values.
    Intrinsic op = e->op;
    if (op == Intrinsic::Ident) return a[0];
    if (op == Intrinsic::Neg) return num(-a[0].as_double(), -a[0].i);
    if (op == Intrinsic::Add) return num(a[0].as_double() + a[1].as_double(), a[0].i + a[1].i);
    if (op == Intrinsic::Sub) return num(a[0].as_double() - a[1].as_double(), a[0].i - a[1].i);
    if (op == Intrinsic::Mul) return num(a[0].as_double() * a[1].as_double(), a[0].i * a[1].i);
    if (op == Intrinsic::Div) {
      // Integer division truncates, as elementwise evaluation does; x / 0 folds to 0 likewise.
      if (!fl) return Number{false, a[1].i == 0 ? 0 : a[0].i / a[1].i, 0};
      return num(a[0].as_double() / a[1].as_double(), 0);
    }
    if (op == Intrinsic::Max) return a[0].as_double() >= a[1].as_double() ? a[0] : a[1];
    if (op == Intrinsic::Min) return a[0].as_double() <= a[1].as_double() ? a[0] : a[1];
    return std::nullopt;
  }

  int64_t fold_int(const ExprPtr &e, const std::string &what) const {
    auto v = fold(e);
    if (!v) error(e->range, what + " must be a constant integer");
    if (v->is_float) {
      if (v->f != static_cast<double>(static_cast<int64_t>(v->f)))
        error(e->range, what + " is not an integer");
      return static_cast<int64_t>(v->f);
    }
    return v->i;
  }

  int64_t fold_size(const ExprPtr &e, const std::string &what) const {
    int64_t v = fold_int(e, what);
    if (v < 0) error(e->range, what + " must not be negative (it is " + std::to_string(v) + ")");
    return v;
  }

  // ---- elementwise expressions ----

  static BoundExprPtr make_int(int64_t v, SourceRange r) {
    auto b = std::make_shared<BoundExpr>();
    b->kind = Expr::Kind::Int;
    b->type = {DType::Int32, true};
    b->int_value = v;
    b->range = r;
    return b;
  }

  std::vector<int64_t> broadcast(const std::vector<BoundExprPtr> &args, SourceRange r) const {
    std::vector<int64_t> shape;
    TensorType shape_type{DType::Float32, {}};
    for (size_t k = 0; k < args.size(); ++k) {
      const auto &s = args[k]->shape;
      std::vector<int64_t> out(std::max(shape.size(), s.size()), 1);
      for (size_t i = 0; i < out.size(); ++i) {
        int64_t a = i < shape.size() ? shape[shape.size() - 1 - i] : 1;
        int64_t b = i < s.size() ? s[s.size() - 1 - i] : 1;
        if (a != b && a != 1 && b != 1) {
          TensorType lhs{k == 1 ? final_dtype(args[0]->type) : shape_type.dtype, shape};
          TensorType rhs{final_dtype(args[k]->type), s};
          error(r, "cannot broadcast " + lhs.str() + " with " + rhs.str());
        }
        out[out.size() - 1 - i] = a == 1 ? b : a;
      }
      shape = out;
      shape_type.dtype =
          final_dtype(k == 0 ? args[0]->type : promote(args[0]->type, args[k]->type));
    }
    return shape;
  }

  BoundExprPtr bind_expr(const ExprPtr &e, bool root) {
    auto b = std::make_shared<BoundExpr>();
    b->kind = e->kind;
    b->range = e->range;
    switch (e->kind) {
      case Expr::Kind::Int: return make_int(e->int_value, e->range);
      case Expr::Kind::Float:
        b->type = {DType::Float32, true};
        b->float_value = e->float_value;
        return b;
      case Expr::Kind::Ref: {
        if (auto d = out_.dims.find(e->name); d != out_.dims.end())
          return make_int(d->second, e->range);
        auto t = out_.types.find(e->name);
        if (t == out_.types.end()) error(e->range, "unknown name '" + e->name + "'");
        b->name = e->name;
        b->type = value_types_.at(e->name);
        b->shape = t->second.shape;
        return b;
      }
      case Expr::Kind::Call: break;
    }
    b->op = e->op;
    const IntrinsicInfo &info = intrinsic_info(e->op);
    int n = static_cast<int>(e->args.size());
    if (n < info.min_args || (info.max_args >= 0 && n > info.max_args))
      error(e->range, "wrong number of arguments to '" + std::string(info.name) + "'");
    if (info.kind == IntrinsicKind::Special) {
      if (!root)
        error(e->range, "'" + std::string(info.name) + "' must be the whole right-hand side");
      bind_special(*b, e);
      return b;
    }
    if (info.kind == IntrinsicKind::Cast) return bind_cast(b, e);
    for (const auto &a : e->args) b->args.push_back(bind_expr(a, false));
    b->shape = broadcast(b->args, e->range);
    const auto &a = b->args;
    switch (info.kind) {
      case IntrinsicKind::Arith: b->type = promote(a[0]->type, a[1]->type); break;
      case IntrinsicKind::Compare: b->type = {DType::Bool, false}; break;
      case IntrinsicKind::Bitwise:
        b->type = a[0]->type;
        for (const auto &x : a) {
          if (is_float(x->type.dtype))
            error(e->range, "'" + std::string(info.name) +
                                "' needs integer or bool operands, not " +
                                std::string(dtype_name(x->type.dtype)));
          b->type = promote(b->type, x->type);
        }
        break;
      case IntrinsicKind::Select: b->type = promote(a[1]->type, a[2]->type); break;
      case IntrinsicKind::FloatMath:
        b->type = a.size() == 2 ? promote(a[0]->type, a[1]->type) : a[0]->type;
        if (!is_float(b->type.dtype)) b->type = {DType::Float32, b->type.weak};
        break;
      case IntrinsicKind::SameType: b->type = a[0]->type; break;
      case IntrinsicKind::Cast:
      case IntrinsicKind::Special: TESSERA_INTERNAL_ASSERT(false, "handled above");
    }
    return b;
  }

  BoundExprPtr bind_cast(std::shared_ptr<BoundExpr> b, const ExprPtr &e) {
    b->args.push_back(bind_expr(e->args[0], false));
    b->shape = b->args[0]->shape;
    if (e->op == Intrinsic::AsBool) {
      b->type = {DType::Bool, false};
      return b;
    }
    int64_t bits =
        fold_int(e->args[1], "the bit width of '" + std::string(intrinsic_name(e->op)) + "'");
    bool is_f = e->op == Intrinsic::AsFloat;
    bool ok = is_f ? (bits == 16 || bits == 32 || bits == 64)
                   : (bits == 8 || bits == 16 || bits == 32 || bits == 64);
    if (!ok)
      error(e->args[1]->range, "'" + std::string(intrinsic_name(e->op)) + "' takes " +
                                   (is_f ? "16, 32 or 64" : "8, 16, 32 or 64") + " bits, not " +
                                   std::to_string(bits));
    b->args.push_back(make_int(bits, e->args[1]->range));
    int ib = static_cast<int>(bits);
    b->type = {is_f                        ? float_of_bits(ib)
               : e->op == Intrinsic::AsInt ? signed_int_of_bits(ib)
                                           : unsigned_int_of_bits(ib),
               false};
    return b;
  }

  void bind_special(BoundExpr &b, const ExprPtr &e) {
    auto tensor_arg = [&](size_t i) {
      auto a = bind_expr(e->args[i], false);
      b.args.push_back(a);
      return a;
    };
    auto int_arg = [&](size_t i, const std::string &what) {
      int64_t v = fold_int(e->args[i], what);
      b.args.push_back(make_int(v, e->args[i]->range));
      return v;
    };
    std::string name(intrinsic_name(e->op));
    if (e->op == Intrinsic::Shape) {
      auto x = tensor_arg(0);
      b.type = {DType::Int32, false};
      b.shape = {static_cast<int64_t>(x->shape.size())};
      return;
    }
    if (e->op == Intrinsic::Reshape) {
      auto x = tensor_arg(0);
      for (size_t i = 1; i < e->args.size(); ++i) {
        int64_t d = int_arg(i, "a reshape size");
        if (d < 0) error(e->args[i]->range, "a reshape size must not be negative");
        b.shape.push_back(d);
      }
      TensorType from{final_dtype(x->type), x->shape}, to{from.dtype, b.shape};
      std::optional<int64_t> count = to.checked_bytes();
      if (count) count = to.elements();
      if (count != from.elements())
        error(e->range, "cannot reshape " + from.str() + " (" + std::to_string(from.elements()) +
                            " elements) to " + to.str() + " (" +
                            (count ? std::to_string(*count) : "too many") + " elements)");
      b.type = x->type;
      return;
    }
    if (e->op == Intrinsic::Index) {
      auto x = tensor_arg(0);
      int64_t axis = int_arg(1, "the axis of 'index'");
      if (axis < 0 || axis >= static_cast<int64_t>(x->shape.size()))
        error(e->args[1]->range, "axis " + std::to_string(axis) +
                                     " is out of range for a tensor of rank " +
                                     std::to_string(x->shape.size()));
      b.type = {DType::Int32, false};
      b.shape = x->shape;
      return;
    }
    if (e->op == Intrinsic::Gather) {
      auto x = tensor_arg(0), idx = tensor_arg(1);
      if (x->shape.empty()) error(e->args[0]->range, "'gather' needs a tensor of rank 1 or more");
      if (!is_integer(idx->type.dtype))
        error(e->args[1]->range, "'gather' indices must be integers");
      b.type = x->type;
      b.shape = idx->shape;
      b.shape.insert(b.shape.end(), x->shape.begin() + 1, x->shape.end());
      return;
    }
    if (e->op == Intrinsic::Scatter) {
      auto x = tensor_arg(0), idx = tensor_arg(1), s = tensor_arg(2);
      if (s->shape.empty())
        error(e->args[2]->range, "'scatter' needs a shape tensor of rank 1 or more");
      if (!is_integer(idx->type.dtype))
        error(e->args[1]->range, "'scatter' indices must be integers");
      std::vector<int64_t> want = idx->shape;
      want.insert(want.end(), s->shape.begin() + 1, s->shape.end());
      if (x->shape != want)
        error(e->range,
              "'scatter' values have shape " + TensorType{final_dtype(x->type), x->shape}.str() +
                  " but indices and target need " + TensorType{final_dtype(x->type), want}.str());
      b.type = x->type;
      b.shape = s->shape;
      return;
    }
    if (e->op == Intrinsic::PrngStep) {
      if (tensor_arg(0)->kind != Expr::Kind::Ref)
        error(e->args[0]->range, "'prng_step' needs a state tensor, not an expression");
      for (size_t i = 1; i < e->args.size(); ++i) {
        int64_t d = int_arg(i, "a prng_step size");
        if (d < 0) error(e->args[i]->range, "a prng_step size must not be negative");
        b.shape.push_back(d);
      }
      b.type = {DType::UInt32, false};
      return;
    }
    if (e->op == Intrinsic::PrngState || e->op == Intrinsic::PrngValue) {
      auto step = tensor_arg(0);
      const Statement *s =
          step->kind == Expr::Kind::Ref ? prog_.find_statement(step->name) : nullptr;
      if (!s || s->is_contraction() || s->expr()->kind != Expr::Kind::Call ||
          s->expr()->op != Intrinsic::PrngStep)
        error(e->args[0]->range, "'" + name + "' needs the result of prng_step");
      if (e->op == Intrinsic::PrngValue) {
        b.type = {DType::Float32, false};
        b.shape = step->shape;
        return;
      }
      const auto &state_expr = std::get<BoundExprPtr>(find_bound(step->name).body)->args[0];
      b.type = state_expr->type;
      b.shape = state_expr->shape;
      return;
    }
    TESSERA_INTERNAL_ASSERT(false, "not a special: " + name);
  }

  const BoundStatement &find_bound(const std::string &name) const {
    auto it = std::find_if(out_.statements.begin(), out_.statements.end(),
                           [&](const BoundStatement &s) { return s.output == name; });
    TESSERA_INTERNAL_ASSERT(it != out_.statements.end(), "no bound statement " + name);
    return *it;
  }

  // ---- contractions ----

  struct PolyValue {
    Affine a;
    bool has_index() const { return !a.is_constant(); }
  };

  PolyValue to_affine(const PolyPtr &p, const std::vector<std::string> &indices) const {
    PolyValue v;
    v.a.coeffs.assign(indices.size(), Rational(0));
    switch (p->kind) {
      case Poly::Kind::Int: v.a.constant = p->value; return v;
      case Poly::Kind::Index: {
        for (size_t i = 0; i < indices.size(); ++i)
          if (indices[i] == p->name) v.a.coeffs[i] = 1;
        return v;
      }
      case Poly::Kind::Name: {
        ExprPtr ref = Expr::make_ref(p->name, p->range);
        auto n = fold(ref);
        if (!n) error(p->range, "'" + p->name + "' is not a dimension or a constant");
        v.a.constant = fold_int(ref, "'" + p->name + "' in an index expression");
        return v;
      }
      case Poly::Kind::Neg: {
        auto x = to_affine(p->lhs, indices);
        return scale(x, Rational(-1));
      }
      case Poly::Kind::Add:
      case Poly::Kind::Sub: {
        auto x = to_affine(p->lhs, indices), y = to_affine(p->rhs, indices);
        if (p->kind == Poly::Kind::Sub) y = scale(y, Rational(-1));
        for (size_t i = 0; i < indices.size(); ++i) x.a.coeffs[i] = x.a.coeffs[i] + y.a.coeffs[i];
        x.a.constant = x.a.constant + y.a.constant;
        return x;
      }
      case Poly::Kind::Mul: {
        auto x = to_affine(p->lhs, indices), y = to_affine(p->rhs, indices);
        if (x.has_index() && y.has_index()) error(p->range, "index expression is not affine");
        return x.has_index() ? scale(x, y.a.constant) : scale(y, x.a.constant);
      }
      case Poly::Kind::Div: {
        auto x = to_affine(p->lhs, indices), y = to_affine(p->rhs, indices);
        if (y.has_index()) error(p->range, "index expression is not affine");
        if (y.a.constant.num == 0) error(p->rhs->range, "division by zero in an index expression");
        if (!x.has_index()) {
          // Integer division of sizes floors: (KH - 1) / 2 with KH = 4 is 1.
          x.a.constant = Rational((x.a.constant / y.a.constant).floor());
          return x;
        }
        return scale(x, Rational(1) / y.a.constant);
      }
    }
    TESSERA_INTERNAL_ASSERT(false, "bad poly kind");
  }

  static PolyValue scale(PolyValue v, Rational k) {
    for (auto &c : v.a.coeffs) c = c * k;
    v.a.constant = v.a.constant * k;
    return v;
  }

  static void collect_indices(const PolyPtr &p, std::vector<std::string> &out) {
    if (!p) return;
    if (p->kind == Poly::Kind::Index && std::find(out.begin(), out.end(), p->name) == out.end())
      out.push_back(p->name);
    collect_indices(p->lhs, out);
    collect_indices(p->rhs, out);
  }

  BoundAccess bind_access(const Access &a, const std::vector<std::string> &indices) const {
    BoundAccess b;
    b.tensor = a.tensor;
    for (const auto &p : a.indices) b.dims.push_back(to_affine(p, indices).a);
    return b;
  }

  void bind_contraction(const Statement &s) {
    const Contraction &c = s.contraction();
    BoundContraction b;
    b.agg = c.agg;
    b.comb = c.comb;
    b.default_tensor = c.default_tensor;
    b.no_defract = c.no_defract;
    for (const auto &p : c.output.indices) collect_indices(p, b.indices);
    for (const auto &in : c.inputs)
      for (const auto &p : in.indices) collect_indices(p, b.indices);
    for (const auto &k : c.constraints) collect_indices(k.poly, b.indices);

    TensorType type;
    if (c.sizes.size() != c.output.indices.size())
      error(c.output.range, "the output has " + std::to_string(c.output.indices.size()) +
                                " indices but " + std::to_string(c.sizes.size()) + " sizes");
    for (const auto &e : c.sizes) type.shape.push_back(fold_size(e, "an output size"));

    std::vector<ValueType> operand_types;
    for (const auto &in : c.inputs) {
      auto t = out_.types.find(in.tensor);
      if (t == out_.types.end()) error(in.range, "unknown tensor '" + in.tensor + "'");
      if (t->second.shape.size() != in.indices.size())
        error(in.range, "tensor '" + in.tensor + "' has rank " +
                            std::to_string(t->second.shape.size()) + " but is accessed with " +
                            std::to_string(in.indices.size()) + " indices");
      operand_types.push_back(value_types_.at(in.tensor));
      b.inputs.push_back(bind_access(in, b.indices));
    }
    b.output = bind_access(c.output, b.indices);
    b.output.tensor = s.output;
    for (const auto &k : c.constraints)
      b.constraints.push_back(
          {to_affine(k.poly, b.indices).a, fold_int(k.bound, "a constraint bound")});

    ValueType vt = operand_types.empty() ? ValueType{DType::Float32, true} : operand_types[0];
    switch (c.comb) {
      case CombOp::None: break;
      case CombOp::Mul:
      case CombOp::Add: vt = promote(operand_types[0], operand_types[1]); break;
      case CombOp::Eq: vt = {DType::Bool, false}; break;
      case CombOp::Cond: vt = operand_types[2]; break;
    }
    type.dtype = final_dtype(vt);

    if (c.default_tensor) {
      auto t = out_.types.find(*c.default_tensor);
      if (t == out_.types.end())
        error(c.default_range, "unknown tensor '" + *c.default_tensor + "'");
      if (t->second.shape != type.shape)
        error(c.default_range, "the default " + t->second.str() +
                                   " does not have the output's shape " +
                                   TensorType{t->second.dtype, type.shape}.str());
    }

    auto ranges = index_ranges(b, type.shape, out_.types);
    for (size_t i = 0; i < ranges.size(); ++i)
      if (!ranges[i]) error(s.range, "index '" + b.indices[i] + "' is unbounded");

    add_statement(s, type, {vt.dtype, false}, std::move(b));
  }

  // ---- statements ----

  void bind_statement(const Statement &s) {
    if (out_.types.count(s.output) || prog_.find_input(s.output))
      error(s.range, "'" + s.output + "' is defined twice");
    if (s.is_contraction()) return bind_contraction(s);
    if (s.is_builtin()) return bind_builtin(s);
    BoundExprPtr e = bind_expr(s.expr(), true);
    if (auto n = fold(s.expr())) constants_[s.output] = *n;
    add_statement(s, TensorType{final_dtype(e->type), e->shape}, e->type, e);
  }

  // A builtin binds as the statements that define it, under names no statement of the program
  // uses (`Y_max`, `Y_exp`, ... for `Y = builtin_softmax(...)`).
  void bind_builtin(const Statement &s) {
    const BuiltinCall &call = s.builtin();
    if (call.fn == Builtin::Softmax || call.fn == Builtin::LogSoftmax) {
      const ExprPtr &x = call.args[0];
      const TensorType &t = out_.types.at(x->name);
      if (t.shape.size() != 2)
        error(x->range, "'" + std::string(builtin_name(call.fn)) + "' needs a 2-D tensor, but '" +
                            x->name + "' is " + t.str());
      fold_size(call.args[2], "the column count of '" + std::string(builtin_name(call.fn)) + "'");
    }
    auto fresh = [&](const std::string &suffix) {
      std::string name = s.output + "_" + suffix;
      for (int k = 2; taken(name); ++k) name = s.output + "_" + suffix + std::to_string(k);
      inlined_.insert(name);
      return name;
    };
    for (const Statement &t : inline_builtin(s, fresh)) bind_statement(t);
  }

  bool taken(const std::string &name) const {
    if (inlined_.count(name) || prog_.find_input(name) || prog_.find_statement(name)) return true;
    for (const auto &in : prog_.inputs)
      for (const auto &d : in.dims)
        if (d.name == name) return true;
    return false;
  }

  void add_statement(const Statement &s, TensorType type, ValueType vt,
                     std::variant<BoundExprPtr, BoundContraction> body) {
    if (!type.checked_bytes()) error(s.range, overflow_message(s.output, type));
    BoundStatement b;
    b.output = s.output;
    b.type = type;
    b.range = s.range;
    b.body = std::move(body);
    out_.types[s.output] = type;
    value_types_[s.output] = vt;
    out_.statements.push_back(std::move(b));
  }

  const Program &prog_;
  const std::map<std::string, TensorType> &given_;
  BoundProgram out_;
  std::map<std::string, SourceRange> dim_ranges_;
  std::map<std::string, ValueType> value_types_;  // weak for constants (`C = 0.5;`)
  std::map<std::string, Number> constants_;       // statements that fold to a number
  std::set<std::string> inlined_;                 // names of the statements builtins expand into
};

}  // namespace

BoundProgram bind(const Program &program, const std::map<std::string, TensorType> &inputs) {
  return Binder(program, inputs).run();
}

}  // namespace tessera::tile
