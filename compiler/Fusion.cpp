#include "compiler/Fusion.h"

#include <algorithm>
#include <set>

#include "compiler/ConcatInPlace.h"
#include "compiler/LowerContraction.h"
#include "compiler/OutputBasis.h"
#include "compiler/PermuteInPlace.h"

namespace tessera::compiler {

namespace {

void collect(const tile::BoundExpr &e, std::vector<std::string> &out) {
  if (e.kind == tile::Expr::Kind::Ref) out.push_back(e.name);
  for (const auto &a : e.args) collect(*a, out);
}

bool is_plain_elementwise(const tile::BoundStatement &s) {
  return !s.is_contraction() && !is_special(s);
}

bool reaches(const tile::BoundExpr &e, const std::string &name, const tile::BoundProgram &p,
             const FusionPlan &plan);

// Whether reading tensor `t` in a kernel, with the inlined statements it reaches expanded, reads
// `name`.
bool reaches(const std::string &t, const std::string &name, const tile::BoundProgram &p,
             const FusionPlan &plan) {
  if (t == name) return true;
  if (!plan.inlined(t)) return false;
  const auto &s = p.statements[plan.position.at(t)];
  if (!s.is_contraction()) return reaches(*s.expr(), name, p, plan);
  for (const auto &in : s.contraction().inputs)
    if (reaches(in.tensor, name, p, plan)) return true;
  return false;
}

// Whether `e`, with the inlined statements it reaches expanded, reads `name`.
bool reaches(const tile::BoundExpr &e, const std::string &name, const tile::BoundProgram &p,
             const FusionPlan &plan) {
  if (e.kind == tile::Expr::Kind::Ref) return reaches(e.name, name, p, plan);
  for (const auto &a : e.args)
    if (reaches(*a, name, p, plan)) return true;
  return false;
}

// Whether every Ref to `name` that the root's expression reaches goes through same-shape nodes
// only, so the referenced element is the one at the root's own coordinates. Broadcast subtrees
// (per-channel scale and shift) may be of any shape as long as they do not read `name`.
bool reached_in_place(const tile::BoundExpr &e, const std::string &name,
                      const std::vector<int64_t> &shape, const tile::BoundProgram &p,
                      const FusionPlan &plan) {
  if (e.kind == tile::Expr::Kind::Ref) {
    if (e.name == name) return e.shape == shape;
    if (!plan.inlined(e.name)) return true;
    const auto &s = p.statements[plan.position.at(e.name)];
    if (s.is_contraction()) return !reaches(e.name, name, p, plan);
    if (s.type.shape != shape) return !reaches(*s.expr(), name, p, plan);
    return reached_in_place(*s.expr(), name, shape, p, plan);
  }
  if (e.shape != shape) return !reaches(e, name, p, plan);
  for (const auto &a : e.args)
    if (!reached_in_place(*a, name, shape, p, plan)) return false;
  return true;
}

// A fused kernel computes one expression tree: its root's, with each inlined statement's tree in
// place of its Ref. Lowering, simplification and code generation walk that tree recursively, so
// its depth is capped: a longer chain (20,000 statements `T1 = T0 + 1; T2 = T1 + 1; ...`) is cut
// into kernels of at most this depth each.
constexpr int kMaxFusedDepth = 256;
// A statement read more than once inside its kernel (relu as `cond(x > 0, x, 0)` reads x twice)
// is expanded once per read; code generation's common subexpression elimination computes it once
// again. The copies are capped so that `T2 = T1 * T1; T3 = T2 * T2; ...` cannot grow a tree
// exponentially.
constexpr int kMaxCopies = 8;
// The most kernels that compute one cheap elementwise statement again each (recompute_in_readers).
constexpr size_t kMaxRecomputingKernels = 3;

// A statement with a costly operation (a division, sqrt, exp, ...) on a tensor this many times
// smaller than its kernel's output is computed once, as its own kernel, not once per element of
// the kernel: batch norm's sqrt(variance + epsilon) is per channel, its kernel per pixel too.
constexpr int64_t kHoistRatio = 64;

bool costly(const tile::BoundExpr &e) {
  if (e.kind == tile::Expr::Kind::Call &&
      (e.op == tile::Intrinsic::Div ||
       tile::intrinsic_info(e.op).kind == tile::IntrinsicKind::FloatMath))
    return true;
  for (const auto &a : e.args)
    if (costly(*a)) return true;
  return false;
}

int depth_of(const tile::BoundExpr &e) {
  int d = 0;
  for (const auto &a : e.args) d = std::max(d, depth_of(*a));
  return d + 1;
}

// Whether contraction `r` reads tensor `t` (of `shape`) along its own output's innermost
// dimension: the operand its kernel loads as vectors and reads again for every tile of output
// rows. Such an operand keeps a compact copy of a permutation, which those reads stream from; in
// place they would be short runs a row of the source apart (BERT's values: 128-byte runs 3 KB
// apart took its attention product from 0.155 ms, plus 0.026 for the copy, to 0.205 in the network,
// Intel kind).
bool read_along_output(const tile::BoundStatement &r, const std::string &t,
                       const std::vector<int64_t> &shape) {
  const tile::BoundContraction &c = r.contraction();
  std::optional<size_t> index;  // the output's innermost index
  for (size_t d = c.output.dims.size(); d-- > 0;)
    if (r.type.shape[d] != 1) {
      index = c.output.dims[d].plain_index();
      break;
    }
  for (const auto &in : c.inputs) {
    if (in.tensor != t) continue;
    for (size_t d = shape.size(); d-- > 0;)
      if (shape[d] != 1) {
        if (!index || !(in.dims[d].coeffs[*index] == tile::Rational(0))) return true;
        break;
      }
  }
  return false;
}

// The points of contraction `s`'s box: at least as many as the points it computes.
double domain_points(const tile::BoundProgram &p, const tile::BoundStatement &s) {
  BasisChange change = change_output_basis(s.contraction());
  DomainBounds b = compute_bounds(p, s, change.contraction, change.integrality);
  double n = b.empty ? 0 : 1;
  for (size_t j = 0; j < b.lo.size() && n > 0; ++j)
    n *= static_cast<double>(std::max<int64_t>(b.hi[j] - b.lo[j] + 1, 0));
  return n;
}

// A reshape whose readers can read its input in its place: the same elements in the same order.
// Host steps and specials look tensors up by name, so every reader must be a kernel that loads
// through lowering's Refs, or a reshape that is a view itself.
bool is_view(const tile::BoundProgram &p, const tile::BoundStatement &s,
             const std::vector<const tile::BoundStatement *> &readers,
             const std::set<std::string> &outputs, const std::set<std::string> &views) {
  if (!is_special(s) || s.expr()->op != tile::Intrinsic::Reshape || outputs.count(s.output))
    return false;
  const auto &x = *s.expr()->args[0];
  if (x.kind != tile::Expr::Kind::Ref || p.type_of(x.name).dtype != s.type.dtype) return false;
  for (const auto *r : readers)
    if (!views.count(r->output) && (is_special(*r) || assign_may_write_twice(p, *r))) return false;
  return true;
}

}  // namespace

bool is_special(const tile::BoundStatement &s) {
  // `index` is the element's own coordinate: elementwise code, fused into its readers like any
  // other (Inception's average pools computed two index tensors per pool, each its own kernel).
  return !s.is_contraction() && s.expr()->kind == tile::Expr::Kind::Call &&
         tile::is_special(s.expr()->op) && s.expr()->op != tile::Intrinsic::Index;
}

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

const tile::BoundAccess *same_rank_copy(const tile::BoundProgram &p,
                                        const tile::BoundStatement &s) {
  if (!s.is_contraction()) return nullptr;
  const tile::BoundContraction &c = s.contraction();
  if (c.agg != tile::AggOp::Assign || c.comb != tile::CombOp::None || c.inputs.size() != 1 ||
      !c.constraints.empty())
    return nullptr;
  const tile::BoundAccess &in = c.inputs[0];
  const tile::TensorType &t = p.type_of(in.tensor);
  const size_t r = s.type.shape.size();
  if (t.dtype != s.type.dtype || t.shape.size() != r || c.indices.size() != r ||
      c.output.dims.size() != r || in.dims.size() != r)
    return nullptr;
  return &in;
}

std::optional<std::vector<size_t>> permutation_of(const tile::BoundProgram &p,
                                                  const tile::BoundStatement &s) {
  const tile::BoundAccess *copied = same_rank_copy(p, s);
  if (!copied || s.contraction().default_tensor) return std::nullopt;
  const tile::BoundContraction &c = s.contraction();
  const tile::BoundAccess &in = *copied;
  const tile::TensorType &t = p.type_of(in.tensor);
  const size_t r = s.type.shape.size();
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
  // The innermost dimension stays innermost, so that a kernel's vector loads (read in place) or
  // stores (stored in place) stay contiguous: a transpose would gather or scatter them, and its
  // readers would repeat the gathers wherever they reuse an element.
  auto innermost = [](const std::vector<int64_t> &shape) {
    size_t d = shape.size();
    while (d > 0 && shape[d - 1] == 1) --d;
    return d;  // one past it; 0 when every dimension is 1
  };
  size_t out_last = innermost(s.type.shape), in_last = innermost(t.shape);
  if (out_last > 0 && from[out_last - 1] != in_last - 1) return std::nullopt;
  return from;
}

FusionPlan plan_fusion(const tile::BoundProgram &p) {
  std::set<std::string> outputs;
  for (const auto &[name, t] : p.outputs) outputs.insert(name);
  // Per tensor: the statements reading it (once each) and how often each reads it.
  std::map<std::string, std::vector<const tile::BoundStatement *>> consumers;
  std::map<std::pair<std::string, std::string>, int> reads_by;  // (tensor, reader) -> reads
  std::map<std::string, const tile::BoundStatement *> by_name;
  for (const auto &s : p.statements) {
    by_name[s.output] = &s;
    for (const auto &r : statement_reads(s))
      if (reads_by[{r, s.output}]++ == 0) consumers[r].push_back(&s);
  }
  FusionPlan plan;
  for (size_t i = 0; i < p.statements.size(); ++i) {
    plan.owner[p.statements[i].output] = p.statements[i].output;
    plan.position[p.statements[i].output] = i;
  }
  // Readers come after the tensors they read: whether a reshape is a view depends on whether its
  // reshape readers are, so later statements are decided first.
  std::set<std::string> views;
  for (auto it = p.statements.rbegin(); it != p.statements.rend(); ++it)
    if (is_view(p, *it, consumers[it->output], outputs, views)) views.insert(it->output);
  for (const auto &s : p.statements)
    if (views.count(s.output)) plan.view_of[s.output] = plan.storage(s.expr()->args[0]->name);
  // How deep in its kernel's tree a statement's own tree starts, at most (0 for a root), and how
  // many copies of it the tree holds.
  std::map<std::string, int> starts_at, copies;
  std::set<std::string> recomputed;  // statements computed again in each reader's kernel
  // Whether `s` ends a chain of elementwise statements, each read only by later ones of the
  // chain, that starts at a contraction: the chain is that contraction's epilogue (below), which
  // computing `s` inside a contraction that reads it would take away (ResNet's last convolution,
  // batch norm, residual add and relu, read by the global average pool, stay one kernel).
  // Statements are decided latest first, so that each one's readers in the chain are known.
  auto ends_epilogue_chain = [&](const tile::BoundStatement &s) {
    std::set<std::string> chain{s.output};
    std::set<size_t> todo;  // positions
    auto add_reads = [&](const tile::BoundStatement &t) {
      for (const auto &r : statement_reads(t))
        if (by_name.count(r)) todo.insert(plan.position.at(r));
    };
    add_reads(s);
    for (int seen = 0; !todo.empty(); ++seen) {
      if (seen > kMaxFusedDepth) return true;
      const tile::BoundStatement &t = p.statements[*todo.rbegin()];
      todo.erase(std::prev(todo.end()));
      const auto &rs = consumers[t.output];
      if (!std::all_of(rs.begin(), rs.end(), [&](auto *r) { return chain.count(r->output); }))
        continue;
      if (t.is_contraction()) return true;
      if (!is_plain_elementwise(t)) continue;
      chain.insert(t.output);
      add_reads(t);
    }
    return false;
  };
  // Whether the elementwise statement `s`, whose readers are in several kernels, is cheap enough
  // to compute again in each (Fusion.h): no costly operation, an operand of no fused contraction
  // epilogue, a few kernels, each of which computes it once per element it reads (an elementwise
  // reader at its own coordinates, however often: code generation computes it once).
  auto recompute_in_readers = [&](const tile::BoundStatement &s,
                                  const std::vector<const tile::BoundStatement *> &readers,
                                  std::set<std::string> &roots) {
    if (!is_plain_elementwise(s) || costly(*s.expr())) return false;
    for (const auto *r : readers) roots.insert(plan.owner[r->output]);
    // Most statements have their readers in one kernel: decided before the costlier checks.
    if (roots.size() < 2 || roots.size() > kMaxRecomputingKernels) return false;
    for (const auto &t : statement_reads(s)) {
      // An input of the same shape that only `s` reads shares its kernel (a contraction's
      // epilogue, an elementwise chain): computing `s` again would give it a kernel of its own.
      auto in = by_name.find(t);
      if (in != by_name.end() && in->second->type.shape == s.type.shape && consumers[t].size() == 1)
        return false;
    }
    for (const auto *r : readers) {
      const std::string &root = plan.owner[r->output];
      const int reads = reads_by[{s.output, r->output}];
      if (recomputed.count(r->output)) return false;
      const int start = starts_at[r->output] + (r->is_contraction() ? 2 : depth_of(*r->expr()));
      if (start + depth_of(*s.expr()) > kMaxFusedDepth) return false;
      if (r->is_contraction()) {
        if (reads != 1 || assign_may_write_twice(p, *r) ||
            domain_points(p, *r) > static_cast<double>(s.type.elements()))
          return false;
      } else if (!is_plain_elementwise(*r) || r->type.shape != s.type.shape ||
                 reads * std::max(copies[r->output], 1) > kMaxCopies ||
                 !reached_in_place(*r->expr(), s.output, s.type.shape, p, plan) ||
                 (!by_name[root]->is_contraction() && by_name[root]->type.shape != s.type.shape)) {
        return false;
      }
    }
    return true;
  };
  // Later statements first, so a chain a -> b -> c resolves to c's kernel.
  for (auto it = p.statements.rbegin(); it != p.statements.rend(); ++it) {
    const auto &s = *it;
    const auto &readers = consumers[s.output];
    if (outputs.count(s.output) || readers.empty() || plan.view_of.count(s.output)) continue;
    if (std::set<std::string> roots; recompute_in_readers(s, readers, roots)) {
      plan.owner[s.output] = *roots.begin();
      plan.recomputed_in[s.output].assign(roots.begin(), roots.end());
      recomputed.insert(s.output);
      continue;
    }
    // Every reader must be computed by one kernel, as elementwise code or a contraction, and not
    // be computed again in several (its inputs need buffers of their own there).
    const std::string &root = plan.owner[readers[0]->output];
    int start = 0, n_copies = 0;
    bool one_kernel = true, all_contractions = true, read_once = true;
    for (const auto *r : readers) {
      const bool contraction = r->is_contraction() && !assign_may_write_twice(p, *r);
      one_kernel = one_kernel && (contraction || is_plain_elementwise(*r)) &&
                   plan.owner[r->output] == root && !recomputed.count(r->output);
      if (!one_kernel) break;
      all_contractions = all_contractions && contraction;
      // A contraction's own tree (the combination of its inputs) is shallow.
      start = std::max(start, starts_at[r->output] + (contraction ? 2 : depth_of(*r->expr())));
      n_copies += reads_by[{s.output, r->output}] * std::max(copies[r->output], 1);
      // Computed inside a contraction, `s` is computed once per element the contraction reads.
      if (contraction && is_plain_elementwise(s))
        read_once = read_once && reads_by[{s.output, r->output}] == 1 &&
                    domain_points(p, *r) <= static_cast<double>(s.type.elements());
    }
    if (!one_kernel || n_copies > kMaxCopies) continue;
    const bool contraction_readers =
        std::any_of(readers.begin(), readers.end(), [](auto *r) { return r->is_contraction(); });
    if (contraction_readers) {
      auto from = all_contractions ? permutation_of(p, s) : std::nullopt;
      if (from && std::none_of(readers.begin(), readers.end(), [&](auto *r) {
            return read_along_output(*r, s.output, s.type.shape);
          })) {
        plan.owner[s.output] = root;
        plan.permutations[s.output] = *from;
        continue;
      }
      if (!is_plain_elementwise(s) || !read_once || ends_epilogue_chain(s)) continue;
    }
    if (is_plain_elementwise(s)) {
      if (start + depth_of(*s.expr()) > kMaxFusedDepth) continue;
      if (s.type.elements() * kHoistRatio <= by_name[root]->type.elements() && costly(*s.expr()))
        continue;
      starts_at[s.output] = start;
      copies[s.output] = n_copies;
      plan.owner[s.output] = root;
      continue;
    }
    const auto &rs = *by_name[root];
    if (!s.is_contraction() || rs.is_contraction() || plan.contraction_of.count(root) ||
        assign_may_write_twice(p, s))
      continue;
    if (rs.type.shape != s.type.shape ||
        !reached_in_place(*rs.expr(), s.output, rs.type.shape, p, plan))
      continue;
    // The root kernel writes its output while reading the epilogue's other inputs: fine, they
    // are distinct tensors.
    plan.owner[s.output] = root;
    plan.contraction_of[root] = s.output;
  }
  place_concatenations(p, plan);
  place_permutations(p, plan);
  return plan;
}

}  // namespace tessera::compiler
