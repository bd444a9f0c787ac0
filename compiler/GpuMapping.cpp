#include "compiler/GpuMapping.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

#include "compiler/IRBuild.h"
#include "compiler/IRMutator.h"
#include "compiler/IRVisitor.h"
#include "compiler/Simplify.h"
#include "compiler/Substitute.h"

namespace tessera::compiler {

namespace {

using namespace ir_build;  // NOLINT: imm, var, bin, Op

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Names the frame binds to built-in ids; '#' keeps them apart from any Tile index name.
std::string group_var(int d) { return "#group" + std::to_string(d); }
std::string item_var(int d) { return "#item" + std::to_string(d); }

// Unrolls Unrolled loops of constant bounds so accumulator indices become constants.
class Unroll : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    auto *min = as<IntImm>(op->min);
    auto *extent = as<IntImm>(op->extent);
    if (op->for_kind != ForKind::Unrolled || !min || !extent || extent->value > 32) {
      return body == op->body
                 ? self
                 : For::make(op->var, op->min, op->extent, op->for_kind, body, op->gpu_dim);
    }
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < extent->value; ++i)
      copies.push_back(substitute(body, {{op->var, imm(min->value + i)}}));
    return Block::make(copies);
  }
};

struct TileLoop {
  std::string var;
  int64_t min = 0, count = 1;
  int index = -1;  // the nest's output index it iterates
};

// The leading output tile loops of `s` (apply_schedule names them `x_o`, or `x` when untiled).
std::vector<TileLoop> tile_chain(const ContractionNest &n, Stmt &s) {
  std::map<std::string, int> names;
  for (size_t j = 0; j < n.outputs(); ++j)
    names[n.indices[j].name] = names[n.indices[j].name + "_o"] = static_cast<int>(j);
  std::vector<TileLoop> chain;
  while (auto *f = as<For>(s)) {
    auto *min = as<IntImm>(f->min);
    auto *extent = as<IntImm>(f->extent);
    if (!names.count(f->var) || !min || !extent || f->for_kind == ForKind::Vectorized) break;
    chain.push_back({f->var, min->value, extent->value, names.at(f->var)});
    s = f->body;
  }
  return chain;
}

// Output loops beyond the innermost two (outermost first) fold into GPU dimension 2: each takes
// its coordinate from group id 2. Their definitions join `defs`; the groups along dimension 2.
int64_t fold_into_dimension_2(const std::vector<TileLoop> &loops,
                              std::vector<std::pair<std::string, Expr>> &defs) {
  int64_t stride = 1;
  for (size_t m = loops.size() - 2; m-- > 0;) {
    const TileLoop &l = loops[m];
    defs.push_back(
        {l.var, bin(Op::Add, imm(l.min),
                    bin(Op::Mod, bin(Op::Div, var(group_var(2)), imm(stride)), imm(l.count)))});
    stride *= l.count;
  }
  return stride;
}

// One output element's reduction split over a work-group (a full reduction's, or each group's of a
// split_reduction schedule): work-items take every T-th iteration of the outermost reduction loop
// into their own accumulator, write it to local memory, and after a barrier the first work-item
// combines the T partial results and stores. The work-item loop (dimension 0); null when the body
// is not of the form apply_schedule gives ({init; reduce loop; store} in one scalar accumulator),
// the loop is shorter than 2T, or the aggregation has no combine (=).
Stmt split_reduction(const ContractionNest &n, const Stmt &body, int64_t threads) {
  auto *acc = as<Allocate>(body);
  if (!acc || acc->buffer != "acc" || acc->size != 1 || n.agg == tile::AggOp::Assign || threads < 2)
    return nullptr;
  auto *block = as<Block>(acc->body);
  if (!block) return nullptr;
  int loop = -1;
  for (size_t i = 0; i < block->stmts.size(); ++i)
    if (as<For>(block->stmts[i])) {
      if (loop >= 0) return nullptr;
      loop = static_cast<int>(i);
    }
  if (loop < 0) return nullptr;
  auto *f = as<For>(block->stmts[loop]);
  auto *extent = as<IntImm>(f->extent);
  if (!extent || extent->value < 2 * threads) return nullptr;
  int64_t T = threads, E = extent->value;
  Expr item = var(item_var(0));
  std::string step = f->var + "#step";
  Expr k = bin(Op::Add, f->min, bin(Op::Add, bin(Op::Mul, var(step), imm(T)), item));
  Stmt each = E % T == 0 ? f->body
                         : IfThenElse::make(bin(Op::LT, var(f->var), bin(Op::Add, f->min, imm(E))),
                                            f->body);
  Stmt reduce =
      For::make(step, imm(0), imm(ceil_div(E, T)), ForKind::Serial, LetStmt::make(f->var, k, each));

  Type t = acc->type;
  std::string part = "partial";
  Expr acc0 = Load::make(t, "acc", imm(0));
  std::vector<Stmt> stmts(block->stmts.begin(), block->stmts.begin() + loop);
  stmts.push_back(reduce);
  stmts.push_back(Store::make(part, item, acc0));
  stmts.push_back(Barrier::make());
  // A tree over the partial results (log2 T steps, a barrier after each) when T is a power of two;
  // else the first work-item combines them in order.
  int64_t half = T;
  if ((T & (T - 1)) == 0)
    for (half = T / 2; half >= 1; half /= 2) {
      Expr other = Load::make(t, part, bin(Op::Add, item, imm(half)));
      stmts.push_back(IfThenElse::make(
          bin(Op::LT, item, imm(half)),
          Store::make(part, item, aggregate(n.agg, Load::make(t, part, item), other))));
      stmts.push_back(Barrier::make());
    }
  std::vector<Stmt> combine = {Store::make("acc", imm(0), Load::make(t, part, imm(0)))};
  if (half != 0)
    combine.push_back(For::make(
        "#m", imm(1), imm(T - 1), ForKind::Serial,
        Store::make("acc", imm(0), aggregate(n.agg, acc0, Load::make(t, part, var("#m"))))));
  for (size_t i = loop + 1; i < block->stmts.size(); ++i) combine.push_back(block->stmts[i]);
  stmts.push_back(IfThenElse::make(bin(Op::EQ, item, imm(0)), Block::make(combine)));
  Stmt out = Allocate::make("acc", t, 1, false, Block::make(stmts));
  out = Allocate::make(part, t, T, true, out);
  return For::make(item_var(0), imm(0), imm(T), ForKind::GpuThread, out, 0);
}

class LoadsOf : public IRVisitor {
 public:
  std::vector<const Load *> loads;
  std::set<std::string> vars;
  using IRVisitor::visit;
  void visit(const Load *op) override {
    loads.push_back(op);
    IRVisitor::visit(op);
  }
  void visit(const Var *op) override { vars.insert(op->name); }
};

class ReplaceLoads : public IRMutator {
 public:
  std::map<const Load *, Expr> with;
  using IRMutator::visit;
  Expr visit(const Load *op, const Expr &self) override {
    auto it = with.find(op);
    return it != with.end() ? it->second : IRMutator::visit(op, self);
  }
};

// Replaces the loop over `var` (wherever it is) by `make(loop)`.
class ReplaceLoop : public IRMutator {
 public:
  ReplaceLoop(std::string var, std::function<Stmt(const For &)> make)
      : var_(std::move(var)), make_(std::move(make)) {}
  bool found = false;
  using IRMutator::visit;
  Stmt visit(const For *op, const Stmt &self) override {
    if (op->var != var_) return IRMutator::visit(op, self);
    found = true;
    return make_(*op);
  }

 private:
  std::string var_;
  std::function<Stmt(const For &)> make_;
};

// The local-memory form of a one-reduction nest (GpuMapping.h): `loops` are the mapped tile loops
// (dimension 0 last) with `items` work-items per group. Null when the nest does not qualify.
std::optional<Stmt> stage_in_local_memory(const ContractionNest &n, const Schedule &per,
                                          const RegionBuilder &build,
                                          const std::vector<TileLoop> &loops,
                                          const std::array<int64_t, 3> &items) {
  size_t r = n.outputs();
  if (n.indices.size() != r + 1 || !n.guards.empty() || !n.divisibility.empty() ||
      n.needs_written_flag() || n.agg == tile::AggOp::Assign || n.empty || loops.empty())
    return std::nullopt;
  const NestIndex &kx = n.indices[r];
  struct Mapped {
    int index, dim;
    int64_t block;
  };
  std::vector<Mapped> mapped;
  for (int d = 0; d < 2 && d < static_cast<int>(loops.size()); ++d) {
    const TileLoop &l = loops[loops.size() - 1 - d];
    int64_t e = n.indices[l.index].extent;
    int64_t tile = per.tile_sizes.size() == n.indices.size()
                       ? std::max<int64_t>(1, std::min(per.tile_sizes[l.index], e))
                       : 1;
    if (l.count % items[d] != 0 || e % tile != 0)
      return std::nullopt;  // barriers need every work-item
    mapped.push_back({l.index, d, items[d] * tile});
  }
  int64_t E = kx.extent, KC = 1;
  for (int64_t c = std::min<int64_t>(16, E); c >= 1; --c)
    if (E % c == 0) {
      KC = c;
      break;
    }
  Expr chunk = var("#chunk");
  Expr k_base = bin(Op::Add, imm(kx.lo), bin(Op::Mul, chunk, imm(KC)));
  Expr flat = var(item_var(0));
  int64_t P = items[0];
  if (loops.size() > 1)
    flat = bin(Op::Add, flat, bin(Op::Mul, var(item_var(1)), imm(items[0]))), P *= items[1];

  LoadsOf all;
  all.visit_expr(n.value);
  ReplaceLoads replace;
  std::vector<Stmt> fills;
  std::vector<std::pair<std::string, std::pair<Type, int64_t>>> arrays;
  for (const Load *l : all.loads) {
    if (replace.with.count(l)) continue;
    LoadsOf uses;
    uses.visit_expr(l->index);
    bool only_indices = uses.loads.empty() && uses.vars.count(kx.name);
    for (const auto &v : uses.vars) {
      bool is_index = false;
      for (const auto &ix : n.indices) is_index |= ix.name == v;
      only_indices &= is_index;
    }
    if (!only_indices) continue;
    std::vector<Mapped> mine;
    for (const auto &m : mapped)
      if (uses.vars.count(n.indices[m.index].name)) mine.push_back(m);
    // Other output indices it reads must be loop variables of their own (untiled) in the fill.
    for (size_t j = 0; j < r; ++j) {
      bool is_mapped = false;
      for (const auto &m : mapped) is_mapped |= m.index == static_cast<int>(j);
      if (!is_mapped && uses.vars.count(n.indices[j].name) &&
          per.tile_sizes.size() == n.indices.size() && per.tile_sizes[j] > 1)
        only_indices = false;
    }
    if (!only_indices) continue;
    int64_t plane = 1;
    for (const auto &m : mine) plane *= m.block;
    int64_t size = KC * plane;
    std::string buffer = "local_" + l->buffer + std::to_string(arrays.size());
    // Where the compute reads: (k - chunk start) * plane + coordinates within the group's block.
    Expr at = bin(Op::Mul, bin(Op::Sub, var(kx.name), k_base), imm(plane));
    std::map<std::string, Expr> global;  // the fill's load: index values of element `e`
    Expr e = bin(Op::Add, bin(Op::Mul, var("#fill"), imm(P)), flat);
    global[kx.name] = bin(Op::Add, k_base, bin(Op::Div, e, imm(plane)));
    int64_t inner = 1;
    for (size_t m = mine.size(); m-- > 0;) {
      const NestIndex &ix = n.indices[mine[m].index];
      Expr origin =
          bin(Op::Add, imm(ix.lo), bin(Op::Mul, var(group_var(mine[m].dim)), imm(mine[m].block)));
      at = bin(Op::Add, at, bin(Op::Mul, bin(Op::Sub, var(ix.name), origin), imm(inner)));
      global[ix.name] =
          bin(Op::Add, origin, bin(Op::Mod, bin(Op::Div, e, imm(inner)), imm(mine[m].block)));
      inner *= mine[m].block;
    }
    replace.with[l] = Load::make(l->type, buffer, at);
    Stmt fill =
        Store::make(buffer, e, Load::make(l->type, l->buffer, substitute(l->index, global)));
    if (size % P != 0) fill = IfThenElse::make(bin(Op::LT, e, imm(size)), fill);
    fills.push_back(For::make("#fill", imm(0), imm(ceil_div(size, P)), ForKind::Serial, fill));
    arrays.push_back({buffer, {l->type, size}});
  }
  if (fills.empty()) return std::nullopt;

  ContractionNest staged = n;
  staged.value = replace.mutate(n.value);
  Stmt body = build(staged, per);
  tile_chain(staged, body);
  ReplaceLoop chunked(kx.name, [&](const For &f) {
    std::vector<Stmt> stmts = fills;
    stmts.push_back(Barrier::make());
    stmts.push_back(For::make(f.var, k_base, imm(KC), f.for_kind, f.body));
    stmts.push_back(Barrier::make());
    return For::make("#chunk", imm(0), imm(E / KC), ForKind::Serial, Block::make(stmts));
  });
  body = chunked.mutate(body);
  if (!chunked.found) return std::nullopt;
  for (const auto &[name, info] : arrays)
    body = Allocate::make(name, info.first, info.second, true, body);
  return body;
}

// A split_reduction schedule: every output tile loop (tiles of one element) becomes work-groups,
// dimension 0 the innermost, the rest as map_to_gpu folds them; each group's work-items split its
// element's reduction. Null where split_reduction does not apply to the body.
std::optional<Stmt> split_per_output(const ContractionNest &n, const Stmt &body,
                                     const std::vector<TileLoop> &loops,
                                     const std::map<std::string, Expr> &fixed, int64_t threads) {
  Stmt inner = simplify(substitute(Unroll().mutate(body), fixed));
  Stmt split = split_reduction(n, inner, threads);
  if (!split) return std::nullopt;
  std::array<int64_t, 3> groups{1, 1, 1};
  std::vector<std::pair<std::string, Expr>> defs;
  int dims = 0;
  for (int d = 0; d < 2 && d < static_cast<int>(loops.size()); ++d) {
    const TileLoop &l = loops[loops.size() - 1 - d];
    groups[d] = l.count;
    defs.push_back({l.var, bin(Op::Add, imm(l.min), var(group_var(d)))});
    dims = d + 1;
  }
  if (loops.size() > 2) {
    groups[2] = fold_into_dimension_2(loops, defs);
    dims = 3;
  }
  // The work-item loop stays innermost of the mapped loops: the output coordinates are the group's.
  auto *items = as<For>(split);
  Stmt each = items->body;
  for (auto it = defs.rbegin(); it != defs.rend(); ++it)
    each = LetStmt::make(it->first, it->second, each);
  Stmt out = For::make(items->var, items->min, items->extent, ForKind::GpuThread, each, 0);
  for (int d = 1; d < dims; ++d)
    out = For::make(item_var(d), imm(0), imm(1), ForKind::GpuThread, out, d);
  for (int d = 0; d < dims; ++d)
    out = For::make(group_var(d), imm(0), imm(groups[d]), ForKind::GpuBlock, out, d);
  return simplify(out);
}

}  // namespace

GpuLaunch gpu_launch(const ContractionNest &n, const Schedule &s) {
  // The output tile loops in loop order, as apply_schedule nests them; loops of one iteration map
  // to nothing.
  std::vector<int64_t> counts;
  for (int j : s.loop_order) {
    if (static_cast<size_t>(j) >= n.outputs()) continue;
    int64_t e = n.indices[j].extent, t = std::max<int64_t>(1, s.tile_sizes.at(j));
    if (e == 0) return {{1, 1}, 0, 0};
    if (e > t) counts.push_back(ceil_div(e, t));
  }
  GpuLaunch l;
  for (int64_t c : counts) l.active *= c;
  if (s.split_reduction && !s.workgroup.empty()) {  // a group per output, all of it busy
    l.groups = l.active;
    l.items[0] = std::max<int64_t>(1, s.workgroup[0]);
    l.active *= l.items[0];
    return l;
  }
  for (size_t m = 0; m < counts.size(); ++m) {
    size_t d = counts.size() - 1 - m;  // the innermost loop is dimension 0
    int64_t c = counts[m];
    if (d < 2) {
      l.items[d] = std::max<int64_t>(1, std::min(d < s.workgroup.size() ? s.workgroup[d] : 1, c));
      l.groups *= ceil_div(c, l.items[d]);
    } else {
      l.groups *= c;
    }
  }
  return l;
}

Stmt map_to_gpu(const ContractionNest &n, const Schedule &s, const RegionBuilder &build) {
  Schedule per = s;
  per.parallel_loops = 0;
  Stmt body = build(n, per);
  std::vector<TileLoop> chain = tile_chain(n, body);
  // Loops of one iteration map to nothing.
  std::map<std::string, Expr> fixed;
  std::vector<TileLoop> loops;
  for (const auto &l : chain) {
    if (l.count == 1)
      fixed[l.var] = imm(l.min);
    else
      loops.push_back(l);
  }
  auto wg = [&](size_t d) {
    return d < s.workgroup.size() ? std::max<int64_t>(1, s.workgroup[d]) : int64_t(1);
  };
  if (loops.empty()) {
    body = simplify(substitute(Unroll().mutate(body), fixed));
    if (Stmt split = split_reduction(n, body, wg(0)))
      return simplify(For::make(group_var(0), imm(0), imm(1), ForKind::GpuBlock, split, 0));
    return body;  // one work-item
  }
  if (s.split_reduction)
    if (auto split = split_per_output(n, body, loops, fixed, wg(0))) return *split;
  std::array<int64_t, 3> groups{1, 1, 1}, items{1, 1, 1};
  for (int d = 0; d < 2 && d < static_cast<int>(loops.size()); ++d) {
    const TileLoop &l = loops[loops.size() - 1 - d];
    // A loop of no iterations (an output with a dimension of size 0) launches no group.
    items[d] = std::max<int64_t>(1, std::min(wg(d), l.count));
    groups[d] = ceil_div(l.count, items[d]);
  }
  if (s.use_local_memory)
    if (auto staged = stage_in_local_memory(n, per, build, loops, items)) body = *staged;
  body = simplify(Unroll().mutate(body));
  if (!fixed.empty()) body = substitute(body, fixed);

  // Dimension 0 is the innermost loop, 1 the next; the rest fold into dimension 2.
  std::vector<std::pair<std::string, Expr>> defs;  // in definition order
  Expr in_range;
  int dims = 0;
  for (int d = 0; d < 2 && d < static_cast<int>(loops.size()); ++d) {
    const TileLoop &l = loops[loops.size() - 1 - d];
    Expr pos = bin(Op::Add, bin(Op::Mul, var(group_var(d)), imm(items[d])), var(item_var(d)));
    defs.push_back({l.var, bin(Op::Add, imm(l.min), pos)});
    if (l.count % items[d] != 0) {
      Expr c = bin(Op::LT, pos, imm(l.count));
      in_range = in_range ? bin(Op::And, in_range, c) : c;
    }
    dims = d + 1;
  }
  if (loops.size() > 2) {
    groups[2] = fold_into_dimension_2(loops, defs);
    dims = 3;
  }
  if (in_range) body = IfThenElse::make(in_range, body);
  for (auto it = defs.rbegin(); it != defs.rend(); ++it)
    body = LetStmt::make(it->first, it->second, body);
  for (int d = 0; d < dims; ++d)
    body = For::make(item_var(d), imm(0), imm(items[d]), ForKind::GpuThread, body, d);
  for (int d = 0; d < dims; ++d)
    body = For::make(group_var(d), imm(0), imm(groups[d]), ForKind::GpuBlock, body, d);
  return simplify(body);
}

}  // namespace tessera::compiler
