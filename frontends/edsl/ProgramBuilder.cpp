#include <algorithm>
#include <map>
#include <set>

#include "frontends/edsl/TensorNode.h"
#include "tile/Diagnostics.h"

namespace tessera::edsl_detail {

NodePtr make_node(TensorNode::Kind kind) {
  static int64_t serial = 0;
  auto n = std::make_shared<TensorNode>();
  n->kind = kind;
  n->serial = ++serial;
  return n;
}

namespace {

// Index variables are written into polynomials as "%<serial>" and get readable, unique names per
// contraction when the program is built.
void collect_index_keys(const tile::PolyPtr &p, std::vector<std::string> &keys) {
  if (!p) return;
  if (p->kind == tile::Poly::Kind::Index &&
      std::find(keys.begin(), keys.end(), p->name) == keys.end())
    keys.push_back(p->name);
  collect_index_keys(p->lhs, keys);
  collect_index_keys(p->rhs, keys);
}

tile::PolyPtr rename_indices(const tile::PolyPtr &p,
                             const std::map<std::string, std::string> &names) {
  if (!p) return p;
  using K = tile::Poly::Kind;
  switch (p->kind) {
    case K::Index: return tile::Poly::make_index(names.at(p->name));
    case K::Int:
    case K::Name: return p;
    case K::Neg: return tile::Poly::make_unary(K::Neg, rename_indices(p->lhs, names));
    case K::Add:
    case K::Sub:
    case K::Mul:
    case K::Div:
      return tile::Poly::make_binary(p->kind, rename_indices(p->lhs, names),
                                     rename_indices(p->rhs, names));
  }
  return p;
}

}  // namespace

std::string ProgramBuilder::name_of(const NodePtr &n) {
  for (const auto &[node, name] : names_)
    if (node == n.get()) return name;
  std::string name;
  bool is_input = std::find(inputs_.begin(), inputs_.end(), n.get()) != inputs_.end();
  auto taken = [&](const std::string &s) {
    return std::any_of(names_.begin(), names_.end(), [&](auto &e) { return e.second == s; });
  };
  if (is_input && !n->name.empty() && !taken(n->name)) {
    name = n->name;
  } else {
    do name = (is_input ? "X_I_" : "X_T") + std::to_string(next_temp_++);
    while (taken(name));
  }
  names_.emplace_back(n.get(), name);
  return name;
}

tile::ExprPtr ProgramBuilder::operand(const NodePtr &n) {
  if (n->kind == TensorNode::Kind::Literal) {
    if (!n->is_float) return tile::Expr::make_int(n->int_value);
    return tile::Expr::make_float(n->float_value, "");  // the printer spells it as a float
  }
  emit(n);
  return tile::Expr::make_ref(name_of(n));
}

tile::Statement ProgramBuilder::contraction_statement(const NodePtr &n) {
  if (!n->contraction) throw EdslError("a TensorOutput is used before its contraction is defined");
  const ContractionSpec &spec = *n->contraction;
  std::vector<std::string> keys;
  for (const auto &e : spec.output) collect_index_keys(e.poly(), keys);
  for (const auto &in : spec.inputs)
    for (const auto &e : in.indices) collect_index_keys(e.poly(), keys);
  for (const auto &c : n->constraints) collect_index_keys(c.expr.poly(), keys);

  // Readable names: the TensorIndex's own name where it is free, else i, j, k, ... then i1, j1, ...
  std::map<std::string, std::string> names;
  std::set<std::string> used;
  std::map<std::string, std::string> hints;
  auto add_hints = [&](const IndexExpr &e) {
    for (const auto &idx : e.index_nodes()) hints[idx->key] = idx->hint;
  };
  for (const auto &e : spec.output) add_hints(e);
  for (const auto &in : spec.inputs)
    for (const auto &e : in.indices) add_hints(e);
  for (const auto &c : n->constraints) add_hints(c.expr);
  static const char *kLetters[] = {"i", "j", "k", "l", "m", "n", "p",
                                   "q", "r", "s", "t", "u", "v", "w"};
  int generated = 0;
  for (const auto &key : keys) {
    std::string name = hints[key];
    while (name.empty() || used.count(name)) {
      int round = generated / 14;
      name = std::string(kLetters[generated % 14]) + (round ? std::to_string(round) : "");
      ++generated;
    }
    used.insert(name);
    names[key] = name;
  }

  tile::Contraction c;
  c.agg = spec.agg;
  c.comb = spec.comb;
  c.output.tensor = name_of(n);
  for (const auto &e : spec.output) c.output.indices.push_back(rename_indices(e.poly(), names));
  for (int64_t s : n->shape) c.sizes.push_back(tile::Expr::make_int(s));
  for (const auto &in : spec.inputs) {
    tile::Access a;
    a.tensor = name_of(in.tensor);
    for (const auto &e : in.indices) a.indices.push_back(rename_indices(e.poly(), names));
    c.inputs.push_back(std::move(a));
  }
  for (const auto &k : n->constraints)
    c.constraints.push_back(
        {rename_indices(k.expr.poly(), names), tile::Expr::make_int(k.bound), {}});
  if (n->default_value) c.default_tensor = name_of(n->default_value);
  c.no_defract = n->no_defract;

  tile::Statement s;
  s.output = c.output.tensor;
  s.body = std::move(c);
  return s;
}

void ProgramBuilder::emit(const NodePtr &n) {
  if (std::find(emitted_.begin(), emitted_.end(), n.get()) != emitted_.end()) return;
  if (std::find(inputs_.begin(), inputs_.end(), n.get()) != inputs_.end()) return;
  emitted_.push_back(n.get());
  switch (n->kind) {
    case TensorNode::Kind::Placeholder:
      throw EdslError("placeholder '" + n->name + "' is not among the program's inputs");
    case TensorNode::Kind::Literal: {
      tile::Statement s;
      s.output = name_of(n);
      s.body = operand(n);
      program_.statements.push_back(std::move(s));
      return;
    }
    case TensorNode::Kind::Call: {
      std::vector<tile::ExprPtr> args;
      for (const auto &a : n->args) args.push_back(operand(a));
      tile::Statement s;
      s.output = name_of(n);
      s.body = tile::Expr::make_call(n->op, std::move(args));
      program_.statements.push_back(std::move(s));
      return;
    }
    case TensorNode::Kind::Contraction: {
      if (n->contraction) {
        for (const auto &in : n->contraction->inputs) emit(in.tensor);
      }
      if (n->default_value) emit(n->default_value);
      program_.statements.push_back(contraction_statement(n));
      return;
    }
  }
}

tile::Program ProgramBuilder::build(const std::vector<std::pair<std::string, NodePtr>> &outputs,
                                    std::vector<NodePtr> inputs) {
  for (const auto &n : inputs) inputs_.push_back(n.get());
  for (const auto &n : inputs) {
    tile::Input in;
    in.name = name_of(n);
    in.has_dims = true;
    for (int64_t d : n->shape) in.dims.push_back({"", d, {}});
    program_.inputs.push_back(std::move(in));
  }
  // Outputs take their names first so that their statements carry them.
  std::set<std::string> out_names;
  for (const auto &[name, node] : outputs) {
    if (!out_names.insert(name).second) throw EdslError("output '" + name + "' is named twice");
    bool named =
        std::any_of(names_.begin(), names_.end(), [&](auto &e) { return e.first == node.get(); });
    if (!named) names_.emplace_back(node.get(), name);
  }
  for (const auto &[name, node] : outputs) {
    emit(node);
    if (name_of(node) != name) {  // an input, or a node listed under two names: copy it
      tile::Statement s;
      s.output = name;
      s.body = tile::Expr::make_call(tile::Intrinsic::Ident, {operand(node)});
      program_.statements.push_back(std::move(s));
    }
    program_.outputs.push_back({name, {}});
  }
  return std::move(program_);
}

void infer_type(const NodePtr &node) {
  TensorNode &n = *node;
  // The operands become inputs of a one-statement program; binding it types the statement.
  std::vector<NodePtr> operands;
  auto add = [&](const NodePtr &a) {
    if (a->kind != TensorNode::Kind::Literal &&
        std::find(operands.begin(), operands.end(), a) == operands.end())
      operands.push_back(a);
  };
  for (const auto &a : n.args) {
    // prng_value and prng_state read their step's statement, so the step stays in the program.
    bool step = a->kind == TensorNode::Kind::Call && a->op == tile::Intrinsic::PrngStep;
    if (!step) {
      add(a);
      continue;
    }
    for (const auto &s : a->args) add(s);
  }
  if (n.contraction)
    for (const auto &in : n.contraction->inputs) add(in.tensor);
  if (n.default_value) add(n.default_value);

  ProgramBuilder builder;
  tile::Program p = builder.build({{"O", node}}, operands);
  std::map<std::string, tile::TensorType> types;
  for (size_t i = 0; i < operands.size(); ++i)
    types[p.inputs[i].name] = tile::TensorType{operands[i]->type.dtype, operands[i]->shape};
  try {
    tile::BoundProgram b = tile::bind(p, types);
    const tile::BoundStatement &s = b.statements.back();
    n.shape = s.type.shape;
    n.type = {s.type.dtype, !s.is_contraction() && s.expr()->type.weak};
  } catch (const tile::Error &e) {
    std::string msg = e.what();
    if (msg.rfind("error: ", 0) == 0) msg = msg.substr(7);
    throw EdslError(msg);
  }
}

}  // namespace tessera::edsl_detail
