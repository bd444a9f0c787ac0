#include "tile/Sema.h"

#include <map>
#include <set>

#include "tile/Diagnostics.h"

namespace tessera::tile {

namespace {

enum class NameKind { Tensor, Dim };

struct Definition {
  NameKind kind;
  SourceRange range;
  bool is_input = false;
};

std::string location(const SourcePtr &source, SourceRange range) {
  if (!source) return "an earlier statement";
  LineCol lc = source->line_col(range.begin);
  return source->name() + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column);
}

// Arguments of specials that are tensors (the rest are sizes or axes, folded to numbers at bind).
bool is_tensor_argument(Intrinsic op, size_t i) {
  if (op == Intrinsic::Gather) return i < 2;
  if (op == Intrinsic::Scatter) return i < 3;
  return is_special(op) && i == 0;
}

class Analyzer {
 public:
  explicit Analyzer(Program &program) : program_(program), source_(program.source) {}

  Program run() {
    collect_all_names();
    declare_inputs();
    for (auto &stmt : program_.statements) later_.emplace(stmt.output, stmt.range);
    std::vector<Statement> statements;
    for (auto &stmt : program_.statements) {
      later_.erase(later_.find(stmt.output));
      out_ = &statements;
      analyze_statement(stmt);
      statements.push_back(stmt);
      define(stmt.output, NameKind::Tensor, stmt.range);
    }
    program_.statements = std::move(statements);
    check_outputs();
    return std::move(program_);
  }

 private:
  [[noreturn]] void error(SourceRange range, const std::string &message) {
    user_error(source_, range, message);
  }

  void collect_all_names() {
    for (const auto &in : program_.inputs) {
      all_names_.insert(in.name);
      for (const auto &d : in.dims) all_names_.insert(d.name);
    }
    for (const auto &s : program_.statements) all_names_.insert(s.output);
  }

  void define(const std::string &name, NameKind kind, SourceRange range, bool is_input = false) {
    defs_[name] = {kind, range, is_input};
  }

  void declare_inputs() {
    for (const auto &in : program_.inputs) {
      if (auto it = defs_.find(in.name); it != defs_.end()) {
        if (it->second.kind == NameKind::Dim)
          error(in.range, "'" + in.name + "' names both a dimension and a tensor");
        error(in.range, "input '" + in.name + "' is declared twice (first at " +
                            location(source_, it->second.range) + ")");
      }
      define(in.name, NameKind::Tensor, in.range, true);
    }
    for (const auto &in : program_.inputs) {
      for (const auto &d : in.dims) {
        if (d.name.empty()) continue;
        auto it = defs_.find(d.name);
        if (it != defs_.end() && it->second.kind == NameKind::Tensor)
          error(d.range, "'" + d.name + "' names both a tensor and a dimension");
        if (it == defs_.end()) define(d.name, NameKind::Dim, d.range);
      }
    }
  }

  // A name used as a value: a tensor or a dimension defined earlier.
  const Definition &lookup(const std::string &name, SourceRange range) {
    if (auto it = defs_.find(name); it != defs_.end()) return it->second;
    if (auto it = later_.find(name); it != later_.end())
      error(range, "'" + name + "' is used before it is defined (at " +
                       location(source_, it->second) + ")");
    if (!name.empty() && name[0] >= 'a' && name[0] <= 'z')
      error(range, "unknown name '" + name +
                       "' (index variables may only appear in a contraction's tensor accesses)");
    error(range, "unknown name '" + name + "'");
  }

  void check_tensor(const std::string &name, SourceRange range) {
    if (lookup(name, range).kind == NameKind::Dim)
      error(range, "'" + name + "' is a dimension, not a tensor");
  }

  void check_arity(const Expr &call) {
    const IntrinsicInfo &info = intrinsic_info(call.op);
    int n = static_cast<int>(call.args.size());
    if (n >= info.min_args && (info.max_args < 0 || n <= info.max_args)) return;
    std::string want = info.max_args < 0 ? "at least " + std::to_string(info.min_args)
                       : info.min_args == info.max_args
                           ? std::to_string(info.min_args)
                           : std::to_string(info.min_args) + " to " + std::to_string(info.max_args);
    bool singular = want == "1" || want == "at least 1";
    error(call.range, "'" + std::string(info.name) + "' takes " + want + " argument" +
                          (singular ? "" : "s") + ", got " + std::to_string(n));
  }

  // A prime may only end a name, so `Y'` hoists into `Y_1`: `Y'_1` would not parse back.
  std::string fresh_name(const std::string &base) {
    std::string stem =
        !base.empty() && base.back() == '\'' ? base.substr(0, base.size() - 1) : base;
    for (int k = 1;; ++k) {
      std::string name = stem + "_" + std::to_string(k);
      if (all_names_.insert(name).second) return name;
    }
  }

  // Moves `e` into a statement of its own and returns a reference to it.
  ExprPtr hoist(const ExprPtr &e, const std::string &owner) {
    Statement s;
    s.output = fresh_name(owner);
    s.range = e->range;
    s.body = statement_body(e);
    out_->push_back(s);
    define(s.output, NameKind::Tensor, s.range);
    return Expr::make_ref(s.output, e->range);
  }

  // Checks an expression; returns it with nested specials (and non-name tensor arguments of
  // specials) hoisted into statements placed before the current one.
  ExprPtr analyze_expr(const ExprPtr &e, const std::string &owner, bool at_root) {
    switch (e->kind) {
      case Expr::Kind::Int:
      case Expr::Kind::Float: return e;
      case Expr::Kind::Ref: lookup(e->name, e->range); return e;
      case Expr::Kind::Call: break;
    }
    if (e->is_builtin_call()) return analyze_builtin(e, owner, at_root);
    check_arity(*e);
    bool special = is_special(e->op);
    std::vector<ExprPtr> args;
    bool changed = false;
    for (size_t i = 0; i < e->args.size(); ++i) {
      ExprPtr a = analyze_expr(e->args[i], owner, false);
      if (special && is_tensor_argument(e->op, i)) {
        if (a->kind != Expr::Kind::Ref)
          a = hoist(a, owner);
        else
          check_tensor(a->name, a->range);
      }
      changed |= a != e->args[i];
      args.push_back(a);
    }
    ExprPtr result = changed ? Expr::make_call(e->op, args, e->range) : e;
    if (special && !at_root) return hoist(result, owner);
    return result;
  }

  // A builtin call is a statement of its own: the whole right-hand side, or hoisted like a special.
  // Its Tensor arguments become names of tensors, hoisting any other expression.
  ExprPtr analyze_builtin(const ExprPtr &e, const std::string &owner, bool at_root) {
    const BuiltinInfo &info = builtin_info(*lookup_builtin(e->name));
    int n = static_cast<int>(e->args.size());
    if (n != info.arity)
      error(e->range, "'" + e->name + "' takes " + std::to_string(info.arity) + " arguments, got " +
                          std::to_string(n));
    std::vector<ExprPtr> args;
    for (int i = 0; i < n; ++i) {
      const ExprPtr &arg = e->args[i];
      switch (info.params[i]) {
        case BuiltinParam::Tensor: {
          ExprPtr a = analyze_expr(arg, owner, false);
          bool tensor =
              a->kind == Expr::Kind::Ref && lookup(a->name, a->range).kind == NameKind::Tensor;
          args.push_back(tensor ? a : hoist(a, owner));
          break;
        }
        case BuiltinParam::Size:
          check_size_expr(arg);
          args.push_back(arg);
          break;
        case BuiltinParam::Value: args.push_back(analyze_expr(arg, owner, false)); break;
      }
    }
    ExprPtr call = Expr::make_builtin_call(info.fn, std::move(args), e->range);
    return at_root ? call : hoist(call, owner);
  }

  static std::variant<ExprPtr, Contraction, BuiltinCall> statement_body(const ExprPtr &e) {
    if (!e->is_builtin_call()) return e;
    return BuiltinCall{*lookup_builtin(e->name), e->args, e->range};
  }

  // The first builtin call in `e`, or null.
  static const Expr *find_builtin_call(const ExprPtr &e) {
    if (e->is_builtin_call()) return e.get();
    for (const auto &a : e->args)
      if (const Expr *b = find_builtin_call(a)) return b;
    return nullptr;
  }

  void collect_indices(const PolyPtr &p, std::map<std::string, SourceRange> &indices) {
    if (!p) return;
    switch (p->kind) {
      case Poly::Kind::Index: indices.emplace(p->name, p->range); return;
      case Poly::Kind::Name: lookup(p->name, p->range); return;
      case Poly::Kind::Int: return;
      case Poly::Kind::Neg:
      case Poly::Kind::Add:
      case Poly::Kind::Sub:
      case Poly::Kind::Mul:
      case Poly::Kind::Div:
        collect_indices(p->lhs, indices);
        collect_indices(p->rhs, indices);
        return;
    }
  }

  void analyze_contraction(Contraction &c) {
    std::map<std::string, SourceRange> accessed;
    for (const auto &p : c.output.indices) collect_indices(p, accessed);
    for (const auto &in : c.inputs) {
      check_tensor(in.tensor, in.range);
      for (const auto &p : in.indices) collect_indices(p, accessed);
    }
    for (const auto &k : c.constraints) {
      std::map<std::string, SourceRange> used;
      collect_indices(k.poly, used);
      for (const auto &[name, range] : used)
        if (!accessed.count(name)) error(range, "index '" + name + "' appears in no tensor access");
      check_size_expr(k.bound);
    }
    if (c.default_tensor) check_tensor(*c.default_tensor, c.default_range);
    size_t rank = c.output.indices.size();
    if (c.sizes.empty() && rank > 0)
      error(c.output.range, "contraction output '" + c.output.tensor + "' needs its sizes, as in " +
                                c.output.tensor + "[i, j : I, J]");
    if (c.sizes.size() != rank)
      error(c.output.range, "output '" + c.output.tensor + "' has " + std::to_string(rank) +
                                " indices but " + std::to_string(c.sizes.size()) + " sizes");
    for (const auto &s : c.sizes) check_size_expr(s);
  }

  // Sizes and bounds are integer expressions over literals, dimensions and constants.
  // Specials are tensors, so none may appear anywhere in a size; checked before analyze_expr,
  // which would hoist a nested one into a statement of the program (`N / shape(1)`).
  void check_size_expr(const ExprPtr &e) {
    if (const Expr *b = find_builtin_call(e))
      error(b->range, "'" + b->name + "' cannot be used as a size");
    if (const Expr *c = find_special_call(e))
      error(c->range, "'" + std::string(intrinsic_name(c->op)) + "' cannot be used as a size");
    analyze_expr(e, "Size", true);
  }

  static const Expr *find_special_call(const ExprPtr &e) {
    if (e->kind == Expr::Kind::Call && !e->is_builtin_call() && is_special(e->op)) return e.get();
    for (const auto &a : e->args)
      if (const Expr *c = find_special_call(a)) return c;
    return nullptr;
  }

  void analyze_statement(Statement &s) {
    if (auto it = defs_.find(s.output); it != defs_.end()) {
      if (it->second.is_input)
        error(s.range, "'" + s.output + "' is an input and cannot be assigned");
      error(s.range,
            "'" + s.output + "' is already defined at " + location(source_, it->second.range));
    }
    if (s.is_contraction()) {
      analyze_contraction(std::get<Contraction>(s.body));
      return;
    }
    s.body = statement_body(analyze_expr(s.expr(), s.output, true));
  }

  void check_outputs() {
    std::set<std::string> seen;
    for (const auto &out : program_.outputs) {
      if (!seen.insert(out.name).second)
        error(out.range, "output '" + out.name + "' is listed twice");
      auto it = defs_.find(out.name);
      if (it == defs_.end()) error(out.range, "output '" + out.name + "' is never defined");
      if (it->second.kind == NameKind::Dim)
        error(out.range, "output '" + out.name + "' is a dimension, not a tensor");
      if (it->second.is_input)
        error(out.range, "output '" + out.name +
                             "' is an input; return a copy instead (Y = " + out.name + ";)");
    }
  }

  Program &program_;
  SourcePtr source_;
  std::map<std::string, Definition> defs_;
  std::multimap<std::string, SourceRange> later_;  // statements not yet reached
  std::set<std::string> all_names_;
  std::vector<Statement> *out_ = nullptr;
};

}  // namespace

Program analyze(Program program) { return Analyzer(program).run(); }

}  // namespace tessera::tile
