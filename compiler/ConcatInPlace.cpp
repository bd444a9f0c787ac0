#include "compiler/ConcatInPlace.h"

#include <algorithm>
#include <optional>
#include <set>

#include "compiler/LowerContraction.h"
#include "compiler/LowerElementwise.h"

namespace tessera::compiler {

namespace {

// `s` as a link `R[x0 + c0, ..., xn + cn] = =(P[x0, ..., xn])`: the offsets c, when P's whole box
// lies inside R.
std::optional<std::vector<int64_t>> link_offset(const tile::BoundProgram &p,
                                                const tile::BoundStatement &s) {
  const tile::BoundAccess *copied = same_rank_copy(p, s);
  if (!copied) return std::nullopt;
  const tile::BoundContraction &c = s.contraction();
  const tile::BoundAccess &in = *copied;
  const tile::TensorType &part = p.type_of(in.tensor);
  const size_t r = s.type.shape.size();
  std::vector<int64_t> offset(r);
  for (size_t d = 0; d < r; ++d) {
    const tile::Affine &from = in.dims[d], &to = c.output.dims[d];
    for (size_t j = 0; j < r; ++j) {
      tile::Rational unit = j == d ? 1 : 0;
      if (from.coeffs[j] != unit || to.coeffs[j] != unit) return std::nullopt;
    }
    if (from.constant != 0 || !to.constant.is_integer()) return std::nullopt;
    offset[d] = to.constant.num;
    if (offset[d] < 0 || offset[d] + part.shape[d] > s.type.shape[d]) return std::nullopt;
  }
  return offset;
}

struct Chain {
  std::vector<std::string> links;  // the last one holds the concatenation
  std::vector<std::string> parts;  // one per link
  std::vector<std::vector<int64_t>> offsets;
};

// Whether the parts' boxes are disjoint and fill `shape`: then every element is stored once, by
// one part's kernel, and nothing is left for Tile's unwritten value (0) or a default to fill.
bool tiles_exactly(const tile::BoundProgram &p, const Chain &c, const std::vector<int64_t> &shape) {
  int64_t covered = 0, whole = 1;
  for (int64_t n : shape) whole *= n;
  for (size_t a = 0; a < c.parts.size(); ++a) {
    const auto &sa = p.type_of(c.parts[a]).shape;
    covered += p.type_of(c.parts[a]).elements();
    for (size_t b = 0; b < a; ++b) {
      const auto &sb = p.type_of(c.parts[b]).shape;
      bool overlap = true;
      for (size_t d = 0; d < shape.size(); ++d)
        overlap &=
            c.offsets[a][d] < c.offsets[b][d] + sb[d] && c.offsets[b][d] < c.offsets[a][d] + sa[d];
      if (overlap) return false;
    }
  }
  return covered == whole;
}

}  // namespace

bool stores_whole(const tile::BoundProgram &p, const FusionPlan &plan, const std::string &part) {
  const auto &root = p.statements[plan.position.at(part)];
  const tile::BoundStatement *contraction = root.is_contraction() ? &root : nullptr;
  if (auto it = plan.contraction_of.find(part); it != plan.contraction_of.end())
    contraction = &p.statements[plan.position.at(it->second)];
  if (!contraction) return true;
  ElementwiseContext ctx{p, plan, ""};
  return contraction_nest(*contraction, root, ctx).stores_every_element(root.type.shape);
}

void place_concatenations(const tile::BoundProgram &p, FusionPlan &plan) {
  std::set<std::string> outputs, inputs;
  for (const auto &[name, t] : p.outputs) outputs.insert(name);
  for (const auto &[name, t] : p.inputs) inputs.insert(name);
  std::map<std::string, std::vector<std::string>> readers;  // one entry per read
  for (const auto &s : p.statements)
    for (const auto &r : statement_reads(s)) readers[r].push_back(s.output);
  auto read_only_by = [&](const std::string &t, const std::string &reader) {
    const auto &rs = readers[t];
    return rs.size() == 1 && rs[0] == reader;
  };

  // Chains in program order; a link whose default is the last link of a chain extends it.
  std::vector<Chain> chains;
  std::map<std::string, size_t> open;  // last link -> its chain
  for (const auto &s : p.statements) {
    auto offset = link_offset(p, s);
    if (!offset) continue;
    const auto &dflt = s.contraction().default_tensor;
    size_t k = chains.size();
    if (dflt) {
      auto it = open.find(*dflt);
      if (it == open.end()) continue;
      k = it->second;
      open.erase(it);
    } else {
      chains.emplace_back();
    }
    chains[k].links.push_back(s.output);
    chains[k].parts.push_back(s.contraction().inputs[0].tensor);
    chains[k].offsets.push_back(*offset);
    open[s.output] = k;
  }
  // Inner concatenations first (a part precedes its link), so a part that is one is decided.
  std::sort(chains.begin(), chains.end(), [&](const Chain &a, const Chain &b) {
    return plan.position.at(a.links.back()) < plan.position.at(b.links.back());
  });

  std::set<std::string> in_place;  // concatenations done in place so far
  for (const Chain &c : chains) {
    const std::string &result = c.links.back();
    const auto &type = p.type_of(result);
    bool ok = plan.owner.at(result) == result && tiles_exactly(p, c, type.shape);
    for (size_t i = 0; ok && i < c.links.size(); ++i) {
      const std::string &link = c.links[i], &part = c.parts[i];
      ok = !outputs.count(link) && (i + 1 == c.links.size() || read_only_by(link, c.links[i + 1]));
      ok = ok && !inputs.count(part) && !outputs.count(part) && read_only_by(part, link);
      if (!ok || in_place.count(part)) continue;
      const auto &producer = p.statements[plan.position.at(part)];
      ok = plan.owner.at(part) == part && !plan.view_of.count(part) && !is_special(producer) &&
           !assign_may_write_twice(p, producer) && stores_whole(p, plan, part);
    }
    if (!ok) continue;
    in_place.insert(result);
    for (size_t i = 0; i < c.links.size(); ++i) {
      plan.placed[c.parts[i]] = {result, c.offsets[i], {}};
      plan.assembled_in[c.links[i]] = result;
    }
  }
  // A concatenation placed in an outer one: its parts and links go to the outer buffer.
  for (auto &[name, where] : plan.placed)
    for (auto it = plan.placed.find(where.buffer); it != plan.placed.end();
         it = plan.placed.find(where.buffer)) {
      for (size_t d = 0; d < where.offset.size(); ++d) where.offset[d] += it->second.offset[d];
      where.buffer = it->second.buffer;
    }
  for (auto &[link, buffer] : plan.assembled_in)
    for (auto it = plan.placed.find(buffer); it != plan.placed.end(); it = plan.placed.find(buffer))
      buffer = it->second.buffer;
}

void store_in_place(ContractionNest &nest, const FusionPlan::Placement &placement,
                    const std::vector<int64_t> &buffer_shape) {
  std::vector<Expr> coords;
  for (size_t d = 0; d < placement.offset.size(); ++d) {
    size_t from = placement.from.empty() ? d : placement.from[d];
    Expr x = Var::make(Type::i64(), nest.indices[from].name);
    coords.push_back(placement.offset[d] == 0
                         ? x
                         : Binary::make(Binary::Op::Add, x, IntImm::make(placement.offset[d])));
  }
  nest.out_buffer = placement.buffer;
  nest.out_index = broadcast_index(buffer_shape, coords);
}

}  // namespace tessera::compiler
