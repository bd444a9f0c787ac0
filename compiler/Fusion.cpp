#include "compiler/Fusion.h"

#include <algorithm>
#include <set>

#include "compiler/LowerContraction.h"

namespace tessera::compiler {

namespace {

void collect(const tile::BoundExpr &e, std::vector<std::string> &out) {
  if (e.kind == tile::Expr::Kind::Ref) out.push_back(e.name);
  for (const auto &a : e.args) collect(*a, out);
}

bool is_plain_elementwise(const tile::BoundStatement &s) {
  if (s.is_contraction()) return false;
  const auto &e = *s.expr();
  return !(e.kind == tile::Expr::Kind::Call && tile::is_special(e.op));
}

// Whether `root`'s expression reaches a Ref to `name` only through same-shape nodes, so the
// referenced element is the one at the root's own coordinates.
bool reached_in_place(const tile::BoundExpr &e, const std::string &name,
                      const std::vector<int64_t> &shape, const tile::BoundProgram &p,
                      const FusionPlan &plan) {
  if (e.kind == tile::Expr::Kind::Ref) {
    if (e.name == name) return e.shape == shape;
    if (!plan.inlined(e.name)) return true;
    const auto &s = p.statements[plan.position.at(e.name)];
    return s.type.shape == shape && reached_in_place(*s.expr(), name, shape, p, plan);
  }
  for (const auto &a : e.args)
    if (!reached_in_place(*a, name, shape, p, plan)) return false;
  return true;
}

// A fused kernel computes one expression tree: its root's, with each inlined statement's tree in
// place of its Ref. Lowering, simplification and code generation walk that tree recursively, so
// its depth is capped: a longer chain (20,000 statements `T1 = T0 + 1; T2 = T1 + 1; ...`) is cut
// into kernels of at most this depth each.
constexpr int kMaxFusedDepth = 256;

int depth_of(const tile::BoundExpr &e) {
  int d = 0;
  for (const auto &a : e.args) d = std::max(d, depth_of(*a));
  return d + 1;
}

}  // namespace

std::vector<std::string> statement_reads(const tile::BoundStatement &s) {
  std::vector<std::string> out;
  if (s.is_contraction()) {
    for (const auto &in : s.contraction().inputs) out.push_back(in.tensor);
    if (s.contraction().default_tensor) out.push_back(*s.contraction().default_tensor);
    return out;
  }
  collect(*s.expr(), out);
  return out;
}

FusionPlan plan_fusion(const tile::BoundProgram &p) {
  std::set<std::string> outputs;
  for (const auto &[name, t] : p.outputs) outputs.insert(name);
  std::map<std::string, std::vector<const tile::BoundStatement *>> consumers;
  std::map<std::string, int> ref_count;
  std::map<std::string, const tile::BoundStatement *> by_name;
  for (const auto &s : p.statements) {
    by_name[s.output] = &s;
    std::set<std::string> seen;
    for (const auto &r : statement_reads(s)) {
      ++ref_count[r];
      if (seen.insert(r).second) consumers[r].push_back(&s);
    }
  }
  FusionPlan plan;
  for (size_t i = 0; i < p.statements.size(); ++i) {
    plan.owner[p.statements[i].output] = p.statements[i].output;
    plan.position[p.statements[i].output] = i;
  }
  // How deep in its kernel's tree a statement's own tree starts, at most (0 for a root).
  std::map<std::string, int> starts_at;
  // Later statements first, so a chain a -> b -> c resolves to c's kernel.
  for (auto it = p.statements.rbegin(); it != p.statements.rend(); ++it) {
    const auto &s = *it;
    if (outputs.count(s.output) || ref_count[s.output] != 1) continue;
    const auto *consumer = consumers[s.output][0];
    if (!is_plain_elementwise(*consumer)) continue;
    const std::string &root = plan.owner[consumer->output];
    if (is_plain_elementwise(s)) {
      int start = starts_at[consumer->output] + depth_of(*consumer->expr());
      if (start + depth_of(*s.expr()) > kMaxFusedDepth) continue;
      starts_at[s.output] = start;
      plan.owner[s.output] = root;
      continue;
    }
    if (!s.is_contraction() || plan.contraction_of.count(root) || assign_may_write_twice(p, s))
      continue;
    const auto &rs = *by_name[root];
    if (rs.type.shape != s.type.shape ||
        !reached_in_place(*rs.expr(), s.output, rs.type.shape, p, plan))
      continue;
    // The root kernel writes its output while reading the epilogue's other inputs: fine, they
    // are distinct tensors.
    plan.owner[s.output] = root;
    plan.contraction_of[root] = s.output;
  }
  return plan;
}

}  // namespace tessera::compiler
