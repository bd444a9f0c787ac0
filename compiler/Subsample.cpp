#include "compiler/Subsample.h"

#include <cstdlib>
#include <iterator>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "compiler/Fusion.h"
#include "tile/IndexRanges.h"

namespace tessera::compiler {

namespace {

using tile::Affine;
using tile::BoundContraction;
using tile::BoundExpr;
using tile::BoundExprPtr;
using tile::BoundStatement;
using tile::Expr;
using tile::Rational;

// The positions of one dimension that are read: rest, rest + step, rest + 2*step, ..., with
// 0 <= rest < step. Step 1 is every position. Step 0 is none yet: a reader that broadcasts a
// dimension of size 1 says nothing about it.
struct Lattice {
  int64_t step = 0;
  int64_t rest = 0;
  bool operator==(const Lattice &) const = default;
  bool strided() const { return step >= 2; }
};
using Plan = std::vector<Lattice>;  // one per dimension of a tensor

constexpr Lattice kEvery{1, 0};

// The coarsest lattice holding the positions of both.
Lattice either(Lattice a, Lattice b) {
  if (a.step == 0) return b;
  if (b.step == 0) return a;
  const int64_t g = std::gcd(std::gcd(a.step, b.step), std::abs(a.rest - b.rest));
  return {g, a.rest % g};
}

bool any_strided(const Plan &p) {
  for (const auto &l : p)
    if (l.strided()) return true;
  return false;
}

// A dimension of n positions keeps those of `l`.
int64_t extent(int64_t n, Lattice l) {
  return l.strided() ? (n - l.rest + l.step - 1) / l.step : n;
}

std::vector<int64_t> extents(const std::vector<int64_t> &shape, const Plan &plan) {
  std::vector<int64_t> out = shape;
  for (size_t d = 0; d < out.size(); ++d) out[d] = extent(shape[d], plan[d]);
  return out;
}

bool pointwise(const BoundExpr &e) {
  if (e.kind == Expr::Kind::Call && tile::is_special(e.op)) return false;
  for (const auto &a : e.args)
    if (!pointwise(*a)) return false;
  return true;
}

using Ranges = std::vector<std::optional<tile::IndexRange>>;

// `a` with each index that has one value in `ranges` replaced by that value (a 1x1 kernel's
// `2*i + k`, k < 1, reads 2*i); those indices are added to `pinned`.
Affine pin(const Affine &a, const Ranges &ranges, std::set<size_t> *pinned = nullptr) {
  Affine b = a;
  for (size_t j = 0; j < b.coeffs.size(); ++j) {
    if (b.coeffs[j] == Rational(0) || !ranges[j] || ranges[j]->lo != ranges[j]->hi) continue;
    b.constant = b.constant + b.coeffs[j] * Rational(ranges[j]->lo);
    b.coeffs[j] = Rational(0);
    if (pinned) pinned->insert(j);
  }
  return b;
}

// The positions a read at `a` can reach: a lattice of the gcd of its coefficients.
Lattice read_at(const Affine &a, const Ranges &ranges) {
  const Affine b = pin(a, ranges);
  if (!b.constant.is_integer()) return kEvery;
  int64_t g = 0;
  for (const auto &q : b.coeffs) {
    if (q == Rational(0)) continue;
    if (!q.is_integer()) return kEvery;
    g = std::gcd(g, std::abs(q.num));
  }
  if (g < 2) return kEvery;  // 0: one position; keep it simple and read it whole
  return {g, ((b.constant.num % g) + g) % g};
}

// What an elementwise read of a tensor of `shape` needs when its reader computes `plan`
// (broadcasting aligns shapes at their last dimension).
Plan ref_need(const std::vector<int64_t> &shape, const Plan &plan) {
  Plan need(shape.size());
  const size_t off = plan.size() - shape.size();
  for (size_t j = 0; j < shape.size(); ++j) need[j] = shape[j] == 1 ? Lattice{} : plan[j + off];
  return need;
}

// `c` computing only the outputs of `plan`: output index x of a strided dimension becomes
// step * x + rest wherever the inputs and constraints use it.
BoundContraction subsampled(const BoundContraction &c, const Plan &plan) {
  BoundContraction out = c;
  for (size_t d = 0; d < plan.size(); ++d) {
    if (!plan[d].strided()) continue;
    const size_t x = *c.output.dims[d].plain_index();
    auto sub = [&](Affine &a) {
      a.constant = a.constant + a.coeffs[x] * Rational(plan[d].rest);
      a.coeffs[x] = a.coeffs[x] * Rational(plan[d].step);
    };
    for (auto &in : out.inputs)
      for (auto &a : in.dims) sub(a);
    for (auto &q : out.constraints) sub(q.poly);
  }
  return out;
}

class Subsampler {
 public:
  explicit Subsampler(const tile::BoundProgram &p) : p_(p) {}

  tile::BoundProgram run() {
    for (const auto &[name, type] : p_.outputs) keep_.insert(name);
    // Readers come after what they read: walking backwards, a statement's plan is final before
    // its inputs' are.
    for (size_t i = p_.statements.size(); i-- > 0;) {
      const BoundStatement &s = p_.statements[i];
      plans_[s.output] = plan_for(s);
      record_reads(s, plans_.at(s.output));
    }
    bool any = false;
    for (const auto &[name, plan] : plans_) any = any || any_strided(plan);
    if (!any) return p_;
    return rewrite();
  }

 private:
  const tile::BoundProgram &p_;
  std::set<std::string> keep_;
  std::map<std::string, Plan> wanted_;  // by tensor: the positions its readers read so far
  std::map<std::string, Plan> plans_;   // by statement output: the positions it computes
  tile::BoundProgram out_;
  std::map<std::string, std::string> copies_;  // "tensor/need" -> its strided copy

  const Plan &plan_of(const std::string &name) {
    static const Plan none;
    auto it = plans_.find(name);
    return it == plans_.end() ? none : it->second;
  }

  Plan every(size_t rank) const { return Plan(rank, kEvery); }

  Plan plan_for(const BoundStatement &s) const {
    const auto &shape = s.type.shape;
    auto it = wanted_.find(s.output);
    if (keep_.count(s.output) || it == wanted_.end() || is_special(s) ||
        (!s.is_contraction() && !pointwise(*s.expr())))
      return every(shape.size());
    Plan plan = it->second;
    for (size_t d = 0; d < plan.size(); ++d) {
      if (!plan[d].strided() || shape[d] <= plan[d].rest) {
        plan[d] = kEvery;
        continue;
      }
      if (!s.is_contraction()) continue;
      // A contraction's strided dimension must be written by one plain index of its own.
      const auto &out = s.contraction().output.dims;
      auto x = out[d].plain_index();
      bool own = x.has_value();
      for (size_t k = 0; own && k < out.size(); ++k)
        own = k == d || out[k].coeffs[*x] == Rational(0);
      if (!own) plan[d] = kEvery;
    }
    return plan;
  }

  void want(const std::string &name, const Plan &need) {
    auto [it, fresh] = wanted_.try_emplace(name, need);
    if (fresh) return;
    for (size_t d = 0; d < need.size(); ++d) it->second[d] = either(it->second[d], need[d]);
  }

  Ranges ranges_of(const BoundContraction &c, const std::vector<int64_t> &shape) const {
    return tile::index_ranges(c, shape, p_.types);
  }

  void record_reads(const BoundStatement &s, const Plan &plan) {
    if (is_special(s) || (!s.is_contraction() && !pointwise(*s.expr()))) {
      for (const auto &name : statement_reads(s)) want(name, every(p_.type_of(name).shape.size()));
      return;
    }
    if (!s.is_contraction()) {
      record_refs(*s.expr(), plan);
      return;
    }
    const BoundContraction c = subsampled(s.contraction(), plan);
    const Ranges ranges = ranges_of(c, extents(s.type.shape, plan));
    for (const auto &in : c.inputs) {
      Plan need;
      for (const auto &a : in.dims) need.push_back(read_at(a, ranges));
      want(in.tensor, need);
    }
    if (c.default_tensor)
      want(*c.default_tensor, ref_need(p_.type_of(*c.default_tensor).shape, plan));
  }

  void record_refs(const BoundExpr &e, const Plan &plan) {
    if (e.kind == Expr::Kind::Ref) want(e.name, ref_need(e.shape, plan));
    for (const auto &a : e.args) record_refs(*a, plan);
  }

  // --- the rewrite, forwards ---

  tile::BoundProgram rewrite() {
    out_ = p_;
    out_.statements.clear();
    for (const BoundStatement &s : p_.statements) {
      const Plan &plan = plans_.at(s.output);
      BoundStatement t = s;
      t.type.shape = extents(s.type.shape, plan);
      if (s.is_contraction())
        t.body = rewrite_contraction(s, plan);
      else if (!is_special(s) && pointwise(*s.expr()))
        t.body = rewrite_expr(s.expr(), plan, t.type.shape, s);
      out_.types[t.output] = t.type;
      out_.statements.push_back(std::move(t));
    }
    return std::move(out_);
  }

  BoundContraction rewrite_contraction(const BoundStatement &s, const Plan &plan) {
    BoundContraction c = subsampled(s.contraction(), plan);
    const Ranges ranges = ranges_of(c, extents(s.type.shape, plan));
    std::set<size_t> pinned;
    for (auto &in : c.inputs) {
      const Plan &have = plan_of(in.tensor);
      for (size_t k = 0; k < have.size(); ++k) {
        if (!have[k].strided()) continue;
        // Every coefficient is a multiple of the step and the constant is rest modulo it.
        Affine a = pin(in.dims[k], ranges, &pinned);
        for (auto &q : a.coeffs) q = q / Rational(have[k].step);
        a.constant = (a.constant - Rational(have[k].rest)) / Rational(have[k].step);
        in.dims[k] = a;
      }
    }
    // An index dropped from a read is still one value: say so, for the reads that kept it.
    for (size_t j : pinned) {
      Affine poly{std::vector<Rational>(c.indices.size(), Rational(0)), Rational(-ranges[j]->lo)};
      poly.coeffs[j] = Rational(1);
      c.constraints.push_back({poly, 1});
    }
    if (c.default_tensor) {
      const auto &shape = p_.type_of(*c.default_tensor).shape;
      c.default_tensor = reading(*c.default_tensor, ref_need(shape, plan), s);
    }
    return c;
  }

  BoundExprPtr rewrite_expr(const BoundExprPtr &e, const Plan &plan,
                            const std::vector<int64_t> &out_shape, const BoundStatement &s) {
    if (e->kind != Expr::Kind::Ref && e->kind != Expr::Kind::Call) return e;
    auto n = std::make_shared<BoundExpr>(*e);
    const size_t off = out_shape.size() - e->shape.size();
    for (size_t j = 0; j < n->shape.size(); ++j)
      if (n->shape[j] != 1) n->shape[j] = out_shape[j + off];
    if (e->kind == Expr::Kind::Ref) n->name = reading(e->name, ref_need(e->shape, plan), s);
    for (auto &a : n->args) a = rewrite_expr(a, plan, out_shape, s);
    return n;
  }

  // The tensor to read for `need` of `name`: itself where it was computed for exactly that,
  // else a strided copy of it, made once, right after `name`. There it is its own kernel: made
  // just before `reader`, fusion would take it for the body of the reader's kernel, which would
  // leave the contraction producing the reader's other input unfused.
  std::string reading(const std::string &name, const Plan &need, const BoundStatement &reader) {
    const Plan &have = plan_of(name);
    const size_t rank = need.size();
    bool same = true;
    std::string key = name + "/";
    for (size_t k = 0; k < rank; ++k) {
      const Lattice h = have.empty() ? kEvery : have[k];
      const Lattice w = need[k].strided() ? need[k] : kEvery;
      same = same && (need[k].step == 0 || h == w);
      key += std::to_string(w.step) + "," + std::to_string(w.rest) + ";";
    }
    if (same) return name;
    auto it = copies_.find(key);
    if (it != copies_.end()) return it->second;

    std::string copy = name + "_strided";
    while (out_.types.count(copy)) copy += "_";
    const tile::TensorType &now = out_.types.at(name);
    const auto &shape = p_.type_of(name).shape;
    BoundContraction c;
    c.agg = tile::AggOp::Assign;
    c.output.tensor = copy;
    BoundStatement t;
    t.output = copy;
    t.type = now;
    t.range = reader.range;
    tile::BoundAccess in{name, {}};
    for (size_t k = 0; k < rank; ++k) {
      c.indices.push_back("i" + std::to_string(k));
      Affine x{std::vector<Rational>(rank, Rational(0)), Rational(0)};
      x.coeffs[k] = Rational(1);
      c.output.dims.push_back(x);
      const Lattice h = have.empty() ? kEvery : have[k];
      if (need[k].strided() && !(h == need[k])) {
        // need lies inside have: x-th needed position = (step_n * x + rest_n - rest_h) / step_h.
        const int64_t hs = std::max<int64_t>(h.step, 1);
        x.coeffs[k] = Rational(need[k].step / hs);
        x.constant = Rational((need[k].rest - h.rest) / hs);
        t.type.shape[k] = extent(shape[k], need[k]);
      }
      in.dims.push_back(x);
    }
    c.inputs.push_back(in);
    t.body = c;
    out_.types[copy] = t.type;
    auto after = out_.statements.end();
    while (after != out_.statements.begin() && std::prev(after)->output != name) --after;
    out_.statements.insert(after, std::move(t));
    copies_[key] = copy;
    return copy;
  }
};

}  // namespace

tile::BoundProgram subsample_strided_reads(const tile::BoundProgram &program) {
  return Subsampler(program).run();
}

}  // namespace tessera::compiler
