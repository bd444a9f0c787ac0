#include "compiler/Panel.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "compiler/IRBuild.h"
#include "compiler/IRMutator.h"
#include "compiler/IRVisitor.h"
#include "compiler/Simplify.h"
#include "compiler/Substitute.h"
#include "compiler/Vectorize.h"

namespace tessera::compiler {

namespace {

using namespace ir_build;  // NOLINT: imm, var, bin, Op

// Integer value of index math over known variables (Add, Sub, Mul of integers).
bool eval_index(const Expr &e, const std::map<std::string, int64_t> &vars, int64_t &out) {
  if (auto *i = as<IntImm>(e)) return out = i->value, true;
  if (auto *v = as<Var>(e)) {
    auto it = vars.find(v->name);
    return it != vars.end() && (out = it->second, true);
  }
  auto *b = as<Binary>(e);
  int64_t x, y;
  if (!b || !eval_index(b->a, vars, x) || !eval_index(b->b, vars, y)) return false;
  switch (b->op) {
    case Op::Add: out = x + y; return true;
    case Op::Sub: out = x - y; return true;
    case Op::Mul: out = x * y; return true;
    default: return false;  // fractional accesses are not packed
  }
}

class VarsOf : public IRVisitor {
 public:
  std::set<std::string> names;
  std::vector<const Load *> loads;
  using IRVisitor::visit;
  void visit(const Var *op) override { names.insert(op->name); }
  void visit(const Load *op) override {
    loads.push_back(op);
    IRVisitor::visit(op);
  }
};

class ReplaceLoad : public IRMutator {
 public:
  ReplaceLoad(const Load *target, Expr with) : target_(target), with_(std::move(with)) {}
  using IRMutator::visit;
  Expr visit(const Load *op, const Expr &self) override {
    return op == target_ ? with_ : IRMutator::visit(op, self);
  }

 private:
  const Load *target_;
  Expr with_;
};

// How many elements one step of index `name` moves `index` from the box's lowest corner (the
// coefficient of an affine index); none where the index is not plain integer arithmetic.
std::optional<int64_t> index_step(const Expr &index, const ContractionNest &n,
                                  const std::string &name) {
  std::map<std::string, int64_t> at;
  for (const auto &ix : n.indices) at[ix.name] = ix.lo;
  int64_t base, moved;
  if (!eval_index(index, at, base)) return std::nullopt;
  ++at[name];
  if (!eval_index(index, at, moved)) return std::nullopt;
  return moved - base;
}

}  // namespace

bool steps_alias_in_l1(const ContractionNest &n, int j) {
  constexpr int64_t kL1SetPeriod = 4096;  // 64 sets of 64-byte lines: Zen 3, Zen 4, Sapphire Rapids
  VarsOf all;
  all.visit_expr(n.value);
  for (const Load *l : all.loads) {
    auto step = index_step(l->index, n, n.indices[j].name);
    int64_t bytes = step ? *step * static_cast<int64_t>(tile::dtype_size(l->type.dtype)) : 0;
    if (bytes != 0 && bytes % kL1SetPeriod == 0) return true;
  }
  return false;
}

bool strided_window_along(const ContractionNest &n, int j) {
  VarsOf all;
  all.visit_expr(n.value);
  for (const Load *l : all.loads) {
    auto along = index_step(l->index, n, n.indices[j].name);
    if (!along || *along == 0) continue;
    for (size_t r = n.outputs(); r < n.indices.size(); ++r) {
      auto tap = index_step(l->index, n, n.indices[r].name);
      if (n.indices[r].extent > 1 && tap && *tap != 0 && *along % *tap == 0 && *along / *tap >= 2 &&
          *along / *tap <= 4)
        return true;
    }
  }
  return false;
}

bool reused_along(const ContractionNest &n, size_t j) {
  class Operands : public IRVisitor {
   public:
    explicit Operands(const std::string &var) : var_(var) {}
    bool reused = false;
    using IRVisitor::visit;
    void visit(const Load *op) override {
      bool outer = mentions_;  // a load in another load's index counts for both
      mentions_ = false;
      visit_expr(op->index);
      reused |= !mentions_;
      mentions_ |= outer;
    }
    void visit(const Var *op) override { mentions_ |= op->name == var_; }

   private:
    const std::string &var_;
    bool mentions_ = false;
  };
  Operands operands(n.indices[j].name);
  operands.visit_expr(n.value);
  return operands.reused;
}

int64_t operand_span_bytes(const ContractionNest &n, const std::string &except) {
  VarsOf all;
  all.visit_expr(n.value);
  int64_t widest = 0;
  for (const Load *l : all.loads) {
    if (l->buffer == except) continue;
    // Affine in the index variables: the span is the sum of |coefficient| x (extent - 1).
    int64_t span = 1;
    for (const auto &ix : n.indices) {
      auto step = index_step(l->index, n, ix.name);
      if (!step) return std::numeric_limits<int64_t>::max();
      span += std::abs(*step) * (ix.extent - 1);
    }
    widest = std::max(widest, span * static_cast<int64_t>(tile::dtype_size(l->type.dtype)));
  }
  return widest;
}

std::vector<Packable> packable_loads(const ContractionNest &n, int v,
                                     const std::vector<int> &reds) {
  const NestIndex &vx = n.indices[v];
  std::vector<Packable> found;
  VarsOf all;
  all.visit_expr(n.value);
  for (const Load *l : all.loads) {
    VarsOf uses;
    uses.visit_expr(l->index);
    if (!uses.loads.empty() || !uses.names.count(vx.name)) continue;
    std::vector<int> mine;
    bool only = true;
    for (const auto &name : uses.names) {
      if (name == vx.name) continue;
      auto it =
          std::find_if(reds.begin(), reds.end(), [&](int j) { return n.indices[j].name == name; });
      if (it == reds.end()) only = false;
    }
    for (int j : reds)
      if (uses.names.count(n.indices[j].name)) mine.push_back(j);
    if (!only || mine.empty()) continue;
    // Contiguous in the vector index: one step of it moves one element.
    if (index_step(l->index, n, vx.name) != 1) continue;
    // Every point of the box must read in range: no guard may limit only this operand's indices.
    bool in_range = true;
    for (const auto &g : n.guards) {
      bool inside = true;
      for (size_t j = 0; j < g.coeffs.size(); ++j)
        if (g.coeffs[j] != 0 && !uses.names.count(n.indices[j].name)) inside = false;
      if (inside) in_range = false;
    }
    if (!in_range) continue;
    found.push_back({l, mine});
  }
  return found;
}

bool gathers_along(const ContractionNest &n, int v) {
  VarsOf all;
  all.visit_expr(n.value);
  bool moved = false;
  for (const Load *l : all.loads) {
    auto step = index_step(l->index, n, n.indices[v].name);
    if (!step || *step == 1) return false;
    moved |= *step != 0;
  }
  return moved;
}

int gather_neighbour(const ContractionNest &n, int v) {
  VarsOf all;
  all.visit_expr(n.value);
  for (size_t j = 0; j < n.outputs(); ++j) {
    if (static_cast<int>(j) == v || n.indices[j].extent < 2) continue;
    bool every = false;
    for (const Load *l : all.loads) {
      auto along = index_step(l->index, n, n.indices[v].name);
      if (!along || *along == 0 || *along == 1) continue;  // not a gather along v
      auto step = index_step(l->index, n, n.indices[j].name);
      every = step && *step == 1;
      if (!every) break;
    }
    if (every) return static_cast<int>(j);
  }
  return -1;
}

bool every_load_reads(const ContractionNest &n, const std::string &name) {
  VarsOf all;
  all.visit_expr(n.value);
  if (all.loads.size() < 2) return false;
  for (const Load *l : all.loads) {
    VarsOf uses;
    uses.visit_expr(l->index);
    if (!uses.names.count(name)) return false;
  }
  return true;
}

std::optional<ConstantPanel> constant_panel(const ContractionNest &n, int v, const Packable &p,
                                            int64_t T) {
  const NestIndex &vx = n.indices[v];
  if (T <= 0 || vx.extent % T != 0) return std::nullopt;
  std::map<std::string, int64_t> at;
  for (const auto &ix : n.indices) at[ix.name] = ix.lo;
  ConstantPanel c;
  c.source = p.load->buffer;
  c.dtype = p.load->type.dtype;
  c.tiles = vx.extent / T;
  c.width = T;
  if (!eval_index(p.load->index, at, c.base)) return std::nullopt;
  for (int j : p.mine) {
    const NestIndex &ix = n.indices[j];
    at[ix.name] += 1;
    int64_t next;
    if (!eval_index(p.load->index, at, next)) return std::nullopt;
    at[ix.name] -= 1;
    c.dims.push_back({ix.extent, next - c.base});
  }
  return c;
}

Expr replace_load(const Expr &e, const Load *target, Expr with) {
  return ReplaceLoad(target, std::move(with)).mutate(e);
}

Expr panel_offset(const ContractionNest &n, const Packable &p, int64_t T) {
  Expr flat = imm(0);
  for (int j : p.mine)
    flat = bin(Op::Add, bin(Op::Mul, flat, imm(n.indices[j].extent)),
               bin(Op::Sub, var(n.indices[j].name), imm(n.indices[j].lo)));
  return bin(Op::Mul, flat, imm(T));
}

Stmt panel_fill(const ContractionNest &n, int v, const Packable &p, const std::string &buffer,
                int64_t T, int width, const Expr &first) {
  const NestIndex &vx = n.indices[v];
  Expr lane =
      T > width ? bin(Op::Add, bin(Op::Mul, var(vx.name + "_pu"), imm(width)), var(vx.name + "_pv"))
                : var(vx.name + "_pv");
  const Load *l = p.load;
  Stmt fill = Store::make(
      buffer, bin(Op::Add, panel_offset(n, p, T), lane),
      Load::make(l->type, l->buffer, substitute(l->index, {{vx.name, bin(Op::Add, first, lane)}})));
  fill = For::make(vx.name + "_pv", imm(0), imm(width), ForKind::Vectorized, fill);
  if (T > width) fill = For::make(vx.name + "_pu", imm(0), imm(T / width), ForKind::Unrolled, fill);
  for (size_t m = p.mine.size(); m-- > 0;) {
    const NestIndex &ix = n.indices[p.mine[m]];
    fill = For::make(ix.name, imm(ix.lo), imm(ix.extent), ForKind::Serial, fill);
  }
  return fill;
}

int gpu_panel_row(const ContractionNest &n, const Schedule &s) {
  int v = s.vector_index;
  size_t r = n.outputs();
  if (v < 0 || n.empty || !n.divisibility.empty() || s.use_local_memory ||
      s.tile_sizes.size() != n.indices.size())
    return -1;
  int row = -1;
  for (int j : s.loop_order)
    if (static_cast<size_t>(j) < r && j != v) row = j;
  for (size_t j = 0; j < r; ++j)
    if (static_cast<int>(j) != v && n.indices[j].extent > 1 &&
        (!n.guard_free(j) || (static_cast<int>(j) != row && s.tile_sizes[j] > 1)))
      return -1;
  return row;
}

int gpu_panel_chunk(const ContractionNest &n, const Schedule &s, int row) {
  if (row < 0) return -1;
  const NestIndex &rx = n.indices[row];
  if (std::clamp<int64_t>(s.tile_sizes[row], 1, rx.extent) < rx.extent) return row;
  int chunk = -1;
  for (int j : s.loop_order)
    if (j == row)
      break;
    else if (static_cast<size_t>(j) < n.outputs() && j != s.vector_index && n.indices[j].extent > 1)
      chunk = j;
  return chunk;
}

void shift_indices(ContractionNest &c, const std::map<std::string, Expr> &shift) {
  c.value = substitute(c.value, shift);
  c.out_index = substitute(c.out_index, shift);
  if (c.epilogue) c.epilogue = substitute(c.epilogue, shift);
  if (c.unwritten) c.unwritten = substitute(c.unwritten, shift);
}

std::optional<TilePanel> tile_panel(const ContractionNest &n, const Schedule &s,
                                    const std::string &blk,
                                    const std::function<bool(int64_t, int64_t)> &accept,
                                    ConstantPanels *constants, const Expr &tile_index) {
  int v = s.vector_index;
  const NestIndex vx = n.indices[v];
  int64_t T = std::min(s.tile_sizes[v], vx.extent);
  std::vector<int> reds;
  for (int j : s.loop_order)
    if (!n.indices[j].output) reds.push_back(j);
  for (const auto &p : packable_loads(n, v, reds)) {
    const Load *l = p.load;
    int64_t points = 1;
    for (int j : p.mine) points *= n.indices[j].extent;
    int64_t bytes = static_cast<int64_t>(tile::dtype_size(l->type.dtype));
    std::optional<ConstantPanel> filled;
    if (constants && tile_index && constants->constants.count(l->buffer))
      filled = constant_panel(n, v, p, T);
    if (!filled && !accept(points * T * bytes, points * vx.extent * bytes)) continue;
    TilePanel t{n, "pack_" + l->buffer, l->type, points * T, nullptr};
    // The tile sees the vector index as the lane within it; `blk` is the tile's first element.
    const std::string lane = "#lane";
    std::map<std::string, Expr> shift = {{vx.name, bin(Op::Add, var(blk), var(vx.name))}};
    ContractionNest &c = t.nest;
    Expr at = bin(Op::Add, panel_offset(n, p, T), var(lane));
    if (filled) {
      t.buffer = constants->add(*filled).name;
      at = bin(Op::Add, bin(Op::Mul, tile_index, imm(points * T)), at);
    }
    c.value = replace_load(n.value, l, Load::make(l->type, t.buffer, at));
    shift_indices(c, shift);
    c.value = substitute(c.value, {{lane, var(vx.name)}});
    c.indices[v].lo = 0;
    c.indices[v].extent = T;
    if (filled) return t;
    t.fill = simplify(
        vectorize_loops(simplify(panel_fill(n, v, p, t.buffer, T, s.vector_width, var(blk)))));
    return t;
  }
  return std::nullopt;
}

}  // namespace tessera::compiler
