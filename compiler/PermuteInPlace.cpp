#include "compiler/PermuteInPlace.h"

#include <optional>
#include <set>

#include "compiler/ConcatInPlace.h"
#include "compiler/LowerContraction.h"

namespace tessera::compiler {

namespace {

// For `s` as a whole permutation P[...] = =(T[...]) of T: per dimension of P, the dimension of T
// whose coordinate it takes.
std::optional<std::vector<size_t>> permutation_of(const tile::BoundProgram &p,
                                                  const tile::BoundStatement &s) {
  if (!s.is_contraction()) return std::nullopt;
  const tile::BoundContraction &c = s.contraction();
  if (c.agg != tile::AggOp::Assign || c.comb != tile::CombOp::None || c.inputs.size() != 1 ||
      !c.constraints.empty() || c.default_tensor)
    return std::nullopt;
  const tile::BoundAccess &in = c.inputs[0];
  const tile::TensorType &t = p.type_of(in.tensor);
  const size_t r = s.type.shape.size();
  if (t.dtype != s.type.dtype || t.shape.size() != r || c.indices.size() != r ||
      c.output.dims.size() != r || in.dims.size() != r)
    return std::nullopt;
  std::vector<std::optional<size_t>> in_dim_of(r);  // per index: the input dimension it names
  for (size_t d = 0; d < r; ++d) {
    auto j = in.dims[d].plain_index();
    if (!j || in_dim_of[*j]) return std::nullopt;
    in_dim_of[*j] = d;
  }
  std::vector<size_t> from(r);
  for (size_t d = 0; d < r; ++d) {
    auto j = c.output.dims[d].plain_index();
    if (!j || t.shape[*in_dim_of[*j]] != s.type.shape[d]) return std::nullopt;
    from[d] = *in_dim_of[*j];
  }
  // The innermost dimension stays innermost, so that the kernel's vector stores stay contiguous
  // (a transpose would scatter them).
  auto innermost = [](const std::vector<int64_t> &shape) {
    size_t d = shape.size();
    while (d > 0 && shape[d - 1] == 1) --d;
    return d;  // one past it; 0 when every dimension is 1
  };
  size_t out_last = innermost(s.type.shape), in_last = innermost(t.shape);
  if (out_last > 0 && from[out_last - 1] != in_last - 1) return std::nullopt;
  return from;
}

}  // namespace

void place_permutations(const tile::BoundProgram &p, FusionPlan &plan) {
  std::set<std::string> ends;  // inputs and outputs: their buffers are the caller's
  for (const auto &[name, t] : p.inputs) ends.insert(name);
  for (const auto &[name, t] : p.outputs) ends.insert(name);
  std::map<std::string, int> reads;
  for (const auto &s : p.statements)
    for (const auto &r : statement_reads(s)) ++reads[r];
  for (const auto &s : p.statements) {
    auto from = permutation_of(p, s);
    if (!from || ends.count(s.output) || plan.inlined(s.output) || plan.view_of.count(s.output) ||
        plan.placed.count(s.output) || plan.assembled_in.count(s.output))
      continue;
    const std::string &part = s.contraction().inputs[0].tensor;
    if (ends.count(part) || reads[part] != 1 || !plan.position.count(part)) continue;
    const auto &producer = p.statements[plan.position.at(part)];
    if (plan.owner.at(part) != part || plan.view_of.count(part) || plan.placed.count(part) ||
        plan.assembled_in.count(part) || is_special(producer) ||
        assign_may_write_twice(p, producer) || !stores_whole(p, plan, part))
      continue;
    plan.placed[part] = {s.output, std::vector<int64_t>(from->size(), 0), *from};
    plan.assembled_in[s.output] = s.output;
  }
}

}  // namespace tessera::compiler
