#include "autodiff/Gradient.h"

#include <algorithm>
#include <set>

#include "autodiff/DerivativeRules.h"
#include "tile/Diagnostics.h"

namespace tessera::autodiff {

using tile::Expr;
using tile::ExprPtr;
using tile::PolyPtr;
using tile::Program;
using tile::Statement;

namespace {

void expr_refs(const ExprPtr &e, std::set<std::string> &out) {
  if (!e) return;
  if (e->kind == Expr::Kind::Ref) out.insert(e->name);
  for (const auto &a : e->args) expr_refs(a, out);
}

void poly_names(const PolyPtr &p, std::set<std::string> &out) {
  if (!p) return;
  if (p->kind == tile::Poly::Kind::Name) out.insert(p->name);
  poly_names(p->lhs, out);
  poly_names(p->rhs, out);
}

// Every name a statement reads: tensors, dimensions and constants.
std::set<std::string> reads(const Statement &s) {
  std::set<std::string> out;
  if (s.is_builtin()) {
    for (const auto &a : s.builtin().args) expr_refs(a, out);
    return out;
  }
  if (!s.is_contraction()) {
    expr_refs(s.expr(), out);
    return out;
  }
  const auto &c = s.contraction();
  for (const auto &a : c.inputs) {
    out.insert(a.tensor);
    for (const auto &p : a.indices) poly_names(p, out);
  }
  for (const auto &p : c.output.indices) poly_names(p, out);
  for (const auto &e : c.sizes) expr_refs(e, out);
  for (const auto &k : c.constraints) {
    poly_names(k.poly, out);
    expr_refs(k.bound, out);
  }
  if (c.default_tensor) out.insert(*c.default_tensor);
  return out;
}

tile::SourceRange where(const Program &p, const std::string &name) {
  if (const Statement *s = p.find_statement(name)) return s->range;
  if (const tile::Input *in = p.find_input(name)) return in->range;
  return {};
}

bool is_dimension(const Program &p, const std::string &name) {
  for (const auto &in : p.inputs)
    for (const auto &d : in.dims)
      if (d.name == name) return true;
  return false;
}

void check_tensor(const Program &p, const std::string &name, const std::string &what) {
  if (p.find_statement(name) || p.find_input(name)) return;
  if (is_dimension(p, name))
    throw tile::Error("error: " + what + " '" + name + "' is a dimension, not a tensor");
  throw tile::Error("error: " + what + ": unknown name '" + name + "'");
}

const char *kind_name(Kind k) { return k == Kind::Bool ? "bool" : "an integer"; }

// Zeros of x's shape and element type: a sum over no point (a constraint that never holds).
ExprPtr zeros_like(GradientBuilder &b, const std::string &x) {
  const Dims &d = b.dims(x);
  if (d.empty()) return ex::mul(ex::ref(x), ex::int_lit(0));
  tile::Contraction c;
  tile::Access in;
  in.tensor = x;
  for (size_t i = 0; i < d.size(); ++i) {
    PolyPtr idx = tile::Poly::make_index(b.fresh_index());
    in.indices.push_back(idx);
    c.output.indices.push_back(idx);
  }
  c.sizes = d;
  c.inputs.push_back(in);
  c.constraints.push_back({in.indices[0], ex::int_lit(0), {}});
  return ex::ref(b.emit(std::move(c), "zero"));
}

}  // namespace

Program gradient(const Program &p, const std::string &of, const std::vector<std::string> &wrt,
                 const GradientOverrides &overrides,
                 const std::map<std::string, tile::DType> &input_types) {
  check_tensor(p, of, "--of");
  if (wrt.empty()) throw tile::Error("error: --wrt names no tensor");
  for (const auto &x : wrt) {
    check_tensor(p, x, "--wrt");
    // d_<of> names the seed input; an output may not be an input, and the answer is the seed.
    if (x == of)
      throw tile::Error("error: --wrt '" + x + "' is the --of tensor: its gradient is the seed d_" +
                        of);
  }

  std::map<std::string, Kind> kinds;
  for (const auto &[name, t] : input_types)
    kinds[name] = tile::is_float(t) ? Kind::Float : t == tile::DType::Bool ? Kind::Bool : Kind::Int;
  GradientBuilder b(p, kinds);

  if (!differentiable(b.kind(of)))
    tile::user_error(p.source, where(p, of),
                     "cannot differentiate '" + of + "': it is " + kind_name(b.kind(of)) +
                         " tensor");
  for (const auto &x : wrt)
    if (!differentiable(b.kind(x)))
      tile::user_error(p.source, where(p, x),
                       "cannot differentiate with respect to '" + x + "': it is " +
                           kind_name(b.kind(x)) + " tensor");

  // Active: depends on a wrt name through float values. Needed: `of` depends on it.
  b.active.insert(wrt.begin(), wrt.end());
  for (const auto &s : p.statements) {
    if (!differentiable(b.kind(s.output))) continue;
    for (const auto &r : reads(s))
      if (b.active.count(r)) {
        b.active.insert(s.output);
        break;
      }
  }
  std::set<std::string> needed{of};
  for (auto it = p.statements.rbegin(); it != p.statements.rend(); ++it)
    if (needed.count(it->output)) {
      auto r = reads(*it);
      needed.insert(r.begin(), r.end());
    }

  std::string seed = "d_" + of;
  for (const auto &x : wrt)
    if (p.find_statement("d_" + x) || p.find_input("d_" + x))
      throw tile::Error("error: the program already has a tensor named 'd_" + x + "'");
  b.declare(seed, b.dims(of), b.kind(of));
  b.add_grad(of, seed);

  for (auto it = p.statements.rbegin(); it != p.statements.rend(); ++it) {
    const Statement &s = *it;
    if (!b.active.count(s.output) || !needed.count(s.output)) continue;
    std::string g = b.total_grad(s.output);
    if (g.empty()) continue;
    if (auto o = overrides.find(s.output); o != overrides.end()) {
      for (const auto &[name, grad] : o->second(b, s, g))
        if (b.active.count(name) && differentiable(b.kind(name))) b.add_grad(name, grad);
      continue;
    }
    if (s.is_contraction())
      contraction_rule(b, s, g);
    else if (s.is_builtin())
      builtin_rule(b, s, g);
    else
      expression_rule(b, s, g);
  }

  Program out;
  out.source = p.source;
  out.inputs = p.inputs;
  tile::Input seed_in;
  seed_in.name = seed;
  seed_in.has_dims = true;
  const Dims &od = b.dims(of);
  for (size_t i = 0; i < od.size(); ++i) {
    tile::InputDim d;
    if (od[i]->kind == Expr::Kind::Ref)
      d.name = od[i]->name;
    else if (od[i]->kind == Expr::Kind::Int)
      d.size = od[i]->int_value;
    else
      d.name = b.fresh("D" + std::to_string(i) + "_" + of);  // a computed size: the seed brings it
    seed_in.dims.push_back(d);
  }
  out.inputs.push_back(seed_in);

  std::vector<std::string> results;
  for (const auto &x : wrt) {
    std::string g = b.total_grad(x);
    ExprPtr value = g.empty() ? zeros_like(b, x) : ex::ref(g);
    std::string name = "d_" + x;
    if (std::find(results.begin(), results.end(), name) != results.end()) continue;
    b.emit(value, "", name);
    results.push_back(name);
    out.outputs.push_back({name, {}});
  }

  // The forward statements the gradient reads, in their original order.
  std::set<std::string> keep;
  std::vector<std::string> todo;
  for (const auto &s : b.statements())
    for (const auto &r : reads(s)) todo.push_back(r);
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    const Statement *s = p.find_statement(n);
    if (!s || !keep.insert(n).second) continue;
    for (const auto &r : reads(*s)) todo.push_back(r);
  }
  for (const auto &s : p.statements)
    if (keep.count(s.output)) out.statements.push_back(s);
  for (const auto &s : b.statements()) out.statements.push_back(s);
  return out;
}

}  // namespace tessera::autodiff
