// import_program: each bound statement of a tile::Program rebuilt with the EDSL's own calls, so
// that the result composes with other Tensors (and is typed by the EDSL's checks, not copied).
#include <optional>
#include <set>

#include "tessera/import.h"
#include "tile/Bind.h"
#include "tile/Diagnostics.h"

namespace tessera {

namespace {

using Env = std::map<std::string, Tensor>;

/// An affine form over the contraction's indices (by position) as an index expression, written
/// as the terms then the constant (`2*x + k - 1`) so that the built Tile reads naturally.
IndexExpr affine(const tile::Affine &a, const std::vector<TensorIndex> &indices) {
  std::optional<IndexExpr> e;
  for (size_t i = 0; i < a.coeffs.size(); ++i) {
    const tile::Rational &r = a.coeffs[i];
    if (r.num == 0) continue;
    IndexExpr x = indices.at(i);
    IndexExpr term = r.num == 1 ? x : r.num == -1 ? -x : IndexExpr(r.num) * x;
    if (r.den != 1) term = term / IndexExpr(r.den);
    e = e ? *e + term : term;
  }
  if (a.constant.num == 0 && e) return *e;
  IndexExpr k = a.constant.den == 1 ? IndexExpr(a.constant.num)
                                    : IndexExpr(a.constant.num) / IndexExpr(a.constant.den);
  return e ? *e + k : k;
}

std::vector<IndexExpr> affines(const tile::BoundAccess &acc,
                               const std::vector<TensorIndex> &indices) {
  std::vector<IndexExpr> idx;
  for (const auto &d : acc.dims) idx.push_back(affine(d, indices));
  return idx;
}

IndexedTensor access(const tile::BoundAccess &acc, const std::vector<TensorIndex> &indices,
                     const Env &env) {
  return env.at(acc.tensor)(affines(acc, indices));
}

Tensor contraction(const tile::BoundStatement &s, const Env &env) {
  const tile::BoundContraction &c = s.contraction();
  std::vector<TensorIndex> indices;
  for (const auto &name : c.indices) indices.emplace_back(name);
  std::vector<TensorDim> sizes(s.type.shape.begin(), s.type.shape.end());
  Tensor out = TensorOutput(sizes);
  for (const auto &k : c.constraints)
    out.add_constraint(Constraint{affine(k.poly, indices), k.bound});
  if (c.default_tensor) out.use_default(env.at(*c.default_tensor));
  if (c.no_defract) out.no_defract();

  std::vector<IndexedTensor> in;
  for (const auto &a : c.inputs) in.push_back(access(a, indices, env));
  ContractionInput rhs = in.at(0);
  switch (c.comb) {
    case tile::CombOp::None: break;
    case tile::CombOp::Mul: rhs = in.at(0) * in.at(1); break;
    case tile::CombOp::Add: rhs = in.at(0) + in.at(1); break;
    case tile::CombOp::Eq: rhs = in.at(0) == in.at(1); break;
    case tile::CombOp::Cond: rhs = cond(in.at(0) == in.at(1), in.at(2)); break;
  }
  IndexedTensor lhs = out(affines(c.output, indices));
  switch (c.agg) {
    case tile::AggOp::Sum: lhs += rhs; break;
    case tile::AggOp::Prod: lhs *= rhs; break;
    case tile::AggOp::Max: lhs >= rhs; break;
    case tile::AggOp::Min: lhs <= rhs; break;
    case tile::AggOp::Assign: lhs = rhs; break;
  }
  return out;
}

Tensor expression(const tile::BoundExpr &e, const Env &env) {
  switch (e.kind) {
    case tile::Expr::Kind::Int: return Tensor(e.int_value);
    case tile::Expr::Kind::Float: return Tensor(e.float_value);
    case tile::Expr::Kind::Ref: return env.at(e.name);
    case tile::Expr::Kind::Call: break;
  }
  std::vector<Tensor> args;
  for (const auto &a : e.args) args.push_back(expression(*a, env));
  return call(e.op, args);
}

}  // namespace

std::map<std::string, Tensor> import_program(const tile::Program &p,
                                             const std::map<std::string, Tensor> &inputs) {
  std::map<std::string, tile::TensorType> types;
  Env env;
  std::set<std::string> declared;
  for (const auto &in : p.inputs) {
    declared.insert(in.name);
    auto it = inputs.find(in.name);
    if (it == inputs.end())
      throw EdslError("import_program: no Tensor for input '" + in.name + "'");
    if (!it->second.defined())
      throw EdslError("import_program: input '" + in.name + "' is an undefined Tensor");
    types[in.name] = tile::TensorType{it->second.dtype(), it->second.shape()};
    env[in.name] = it->second;
  }
  for (const auto &[name, t] : inputs)
    if (!declared.count(name))
      throw EdslError("import_program: the program has no input '" + name + "'");

  tile::BoundProgram b;
  try {
    b = tile::bind(p, types);
  } catch (const tile::Error &e) {
    throw EdslError(std::string("import_program: ") + e.what());
  }
  for (const auto &s : b.statements) {
    try {
      env[s.output] = s.is_contraction() ? contraction(s, env) : expression(*s.expr(), env);
    } catch (const EdslError &e) {
      throw EdslError("import_program: statement '" + s.output + "': " + e.what());
    }
  }
  std::map<std::string, Tensor> outputs;
  for (const auto &o : b.outputs) outputs[o.first] = env.at(o.first);
  return outputs;
}

}  // namespace tessera
