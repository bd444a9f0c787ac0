#include "compiler/PermuteInPlace.h"

#include <set>

#include "compiler/ConcatInPlace.h"
#include "compiler/LowerContraction.h"

namespace tessera::compiler {

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
