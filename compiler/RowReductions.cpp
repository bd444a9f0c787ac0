#include "compiler/RowReductions.h"

#include <set>

namespace tessera::compiler {

namespace {

// The reduction's extent where `s` qualifies (RowReductions.h), else 0.
int64_t row_extent(const tile::BoundProgram &p, const tile::BoundStatement &s, int lanes) {
  if (!s.is_contraction() || s.type.dtype != tile::DType::Float32) return 0;
  const tile::BoundContraction &c = s.contraction();
  if (c.indices.empty()) return 0;
  size_t r = c.indices.size() - 1;
  if ((c.agg != tile::AggOp::Sum && c.agg != tile::AggOp::Max && c.agg != tile::AggOp::Min) ||
      c.comb != tile::CombOp::None || c.inputs.size() != 1 || c.default_tensor ||
      !c.constraints.empty())
    return 0;
  // One reduction index: the last one, used by no output dimension.
  for (const auto &d : c.output.dims)
    if (d.coeffs.size() != c.indices.size() || d.coeffs[r] != 0) return 0;
  for (size_t j = 0; j < r; ++j) {
    bool in_output = false;
    for (const auto &d : c.output.dims) in_output |= d.coeffs[j] != 0;
    if (!in_output) return 0;  // a second reduction index
  }
  const tile::BoundAccess &in = c.inputs[0];
  const tile::TensorType &t = p.type_of(in.tensor);
  if (t.dtype != tile::DType::Float32 || in.dims.empty()) return 0;
  for (const auto &d : in.dims)
    if (d.coeffs.size() != c.indices.size()) return 0;
  if (in.dims.back().plain_index() != r) return 0;
  for (size_t d = 0; d + 1 < in.dims.size(); ++d)
    if (in.dims[d].coeffs[r] != 0) return 0;
  int64_t e = t.shape.back();
  return e % lanes == 0 && e / lanes >= 4 ? e : 0;
}

std::string fresh(const std::string &base, const std::set<std::string> &taken) {
  std::string name = base;
  for (int i = 2; taken.count(name); ++i) name = base + std::to_string(i);
  return name;
}

// `a` over `n` indices: the coefficient of old index j moves to position to[j].
tile::Affine remap(const tile::Affine &a, const std::vector<size_t> &to, size_t n) {
  tile::Affine out;
  out.coeffs.assign(n, tile::Rational(0));
  out.constant = a.constant;
  for (size_t j = 0; j < a.coeffs.size(); ++j)
    if (!(a.coeffs[j] == tile::Rational(0))) out.coeffs[to.at(j)] = a.coeffs[j];
  return out;
}

tile::Affine index_form(size_t index, size_t n, int64_t coeff = 1) {
  tile::Affine a;
  a.coeffs.assign(n, tile::Rational(0));
  a.coeffs[index] = tile::Rational(coeff);
  return a;
}

}  // namespace

tile::BoundProgram split_row_reductions(const tile::BoundProgram &program, int lanes) {
  if (lanes < 2) return program;
  tile::BoundProgram out = program;
  out.statements.clear();
  std::set<std::string> tensors;
  for (const auto &[name, t] : program.types) tensors.insert(name);
  for (const auto &s : program.statements) {
    int64_t e = row_extent(program, s, lanes);
    if (!e) {
      out.statements.push_back(s);
      continue;
    }
    const tile::BoundContraction &c = s.contraction();
    size_t r = c.indices.size() - 1;
    std::set<std::string> names(c.indices.begin(), c.indices.end());
    std::string lane = fresh(c.indices[r] + "_lane", names);
    names.insert(lane);
    std::string chunk = fresh(c.indices[r] + "_chunk", names);

    // Stage 1: P[o, lane] = agg(X[..., lanes * chunk + lane]); indices o..., lane, chunk.
    tile::BoundStatement partial;
    partial.output = fresh(s.output + "_lanes", tensors);
    tensors.insert(partial.output);
    partial.type = s.type;
    partial.type.shape.push_back(lanes);
    partial.range = s.range;
    tile::BoundContraction pc;
    pc.agg = c.agg;
    pc.comb = c.comb;
    pc.indices.assign(c.indices.begin(), c.indices.begin() + r);
    pc.indices.push_back(lane);
    pc.indices.push_back(chunk);
    std::vector<size_t> keep(r);
    for (size_t j = 0; j < r; ++j) keep[j] = j;
    keep.push_back(r + 1);  // the old reduction index's coefficients (none but the last dim's)
    pc.output.tensor = partial.output;
    for (const auto &d : c.output.dims) pc.output.dims.push_back(remap(d, keep, r + 2));
    pc.output.dims.push_back(index_form(r, r + 2));
    tile::BoundAccess in = c.inputs[0];
    for (auto &d : in.dims) d = remap(d, keep, r + 2);
    in.dims.back() = index_form(r + 1, r + 2, lanes);
    in.dims.back().coeffs[r] = tile::Rational(1);
    pc.inputs.push_back(std::move(in));
    partial.body = std::move(pc);
    out.types[partial.output] = partial.type;

    // Stage 2: R[o] = agg(P[o, lane]); indices o..., lane.
    tile::BoundStatement rows = s;
    tile::BoundContraction rc;
    rc.agg = c.agg;
    rc.comb = c.comb;
    rc.indices.assign(c.indices.begin(), c.indices.begin() + r);
    rc.indices.push_back(lane);
    rc.output = c.output;  // its forms never use the reduction index, now `lane`
    tile::BoundAccess from{partial.output, {}};
    for (const auto &d : c.output.dims) from.dims.push_back(d);
    from.dims.push_back(index_form(r, r + 1));
    rc.inputs.push_back(std::move(from));
    rows.body = std::move(rc);

    out.statements.push_back(std::move(partial));
    out.statements.push_back(std::move(rows));
  }
  return out;
}

}  // namespace tessera::compiler
