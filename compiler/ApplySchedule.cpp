#include "compiler/ApplySchedule.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "compiler/CostModel.h"
#include "compiler/GpuMapping.h"
#include "compiler/IRBuild.h"
#include "compiler/IRVisitor.h"
#include "compiler/Panel.h"
#include "compiler/Simplify.h"
#include "compiler/SplitBorders.h"
#include "compiler/Substitute.h"
#include "compiler/Vectorize.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

using namespace ir_build;  // NOLINT: imm, var, bin, Op

Expr conj(Expr a, Expr b) { return a ? bin(Op::And, a, b) : b; }

// Iterations of an output index's tile loop, tiles of `size` points.
int64_t tile_loop_count(const NestIndex &ix, int64_t size) { return (ix.extent + size - 1) / size; }

// The output indices whose tile loops run in parallel under the normalized schedule `s`: the first
// `parallel_loops` of more than one iteration, in loop order (loops of one iteration disappear, so
// skipping them keeps a kernel with a unit batch parallel).
std::vector<int> parallel_indices(const ContractionNest &n, const Schedule &s) {
  std::vector<int> out;
  for (int j : s.loop_order) {
    if (static_cast<int>(out.size()) >= s.parallel_loops) break;
    const NestIndex &ix = n.indices[j];
    if (ix.output &&
        tile_loop_count(ix, std::min(s.tile_sizes[j], std::max<int64_t>(ix.extent, 1))) > 1)
      out.push_back(j);
  }
  return out;
}

Expr convert(Expr e, Type t) {
  if (e->type == t) return e;
  if (t.dtype == tile::DType::Bool) {
    Type z = e->type;
    Expr zero = tile::is_float(z.dtype) ? FloatImm::make(z, 0) : IntImm::make(z, 0);
    return bin(Op::NE, e, zero);
  }
  return Cast::make(t, e);
}

struct Plan {
  const ContractionNest &n;
  Schedule s;
  std::vector<int64_t> tile;  // effective tile per output index (1 = untiled)
  std::vector<int> out_order, red_order, point_order;
  std::map<std::string, Expr> defs;   // index name -> expression of loop vars
  std::vector<bool> defined_outside;  // output index fixed by the tile loops
};

Schedule normalized(const ContractionNest &n, Schedule s) {
  size_t k = n.indices.size();
  if (s.tile_sizes.size() != k) s.tile_sizes.assign(k, 1);
  std::vector<int> order = s.loop_order;
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> ident(k);
  std::iota(ident.begin(), ident.end(), 0);
  if (sorted != ident) s.loop_order = ident;
  for (size_t j = 0; j < k; ++j)
    if (!n.indices[j].output) s.tile_sizes[j] = 1;  // reductions are not tiled in this model
  if (s.vector_index >= 0) {
    size_t v = s.vector_index;
    int64_t t = s.tile_sizes[v];
    bool ok = v < n.outputs() && s.vector_width > 1 && t % s.vector_width == 0 &&
              n.indices[v].extent % t == 0;
    for (const auto &g : n.guards) ok &= g.coeffs[v] == 0;
    for (const auto &d : n.divisibility) ok &= d.coeffs[v] == 0;
    ok &= !n.needs_written_flag();  // per-lane written flags are not vectorized
    if (!ok) s.vector_index = -1, s.vector_width = 1;
  }
  if (s.vector_index < 0) s.vector_width = 1;
  return s;
}

// ---- Packing the vector operand's panel -------------------------------------------------------

// A kernel-local copy of the vector operand's panel for one vector tile: laid out [reduction
// point][tile lane], filled once per tile and read contiguously by every row tile after it.
struct Pack {
  std::string buffer;
  Type type;
  int64_t size = 0;
  Stmt fill;
  Expr value;             // n.value reading the panel
  bool constant = false;  // a filled constant panel (ConstantPanel.h): no copy, no buffer here
};

std::optional<Pack> plan_pack(const ContractionNest &n, const Schedule &s,
                              const std::vector<int64_t> &tile, const std::vector<int> &outs,
                              const std::vector<int> &reds, const Expr &v_inner, bool copy,
                              ConstantPanels *constants) {
  int v = s.vector_index;
  if (v < 0 || reds.empty() || !n.divisibility.empty() || outs.empty()) return std::nullopt;
  // A copy pays when the vector tile loop is the outermost loop that iterates, with row tiles
  // inside it to reuse the panel. A filled constant panel costs nothing to read from.
  int64_t reuse = 1;
  bool first = true, outermost = true;
  for (int j : outs) {
    int64_t count =
        tile[j] > 1 ? (n.indices[j].extent + tile[j] - 1) / tile[j] : n.indices[j].extent;
    if (j == v) {
      first = false;
      continue;
    }
    if (first && count > 1) outermost = false;
    if (!first) reuse *= count;
  }
  copy = copy && outermost && reuse >= 2;
  const NestIndex &vx = n.indices[v];
  int64_t T = tile[v];
  for (const auto &packable : packable_loads(n, v, reds)) {
    const Load *l = packable.load;
    int64_t points = 1;
    for (int j : packable.mine) points *= n.indices[j].extent;
    Pack p;
    p.type = l->type;
    if (constants && constants->constants.count(l->buffer)) {
      if (auto layout = constant_panel(n, v, packable, T)) {
        p.buffer = constants->add(*layout).name;
        p.constant = true;
        Expr tile_start = bin(Op::Mul, var(vx.name + "_o"), imm(points * T));
        p.value =
            replace_load(n.value, l,
                         Load::make(l->type, p.buffer,
                                    bin(Op::Add, tile_start,
                                        bin(Op::Add, panel_offset(n, packable, T), v_inner))));
        return p;
      }
    }
    if (!copy ||
        points * T * static_cast<int64_t>(tile::dtype_size(l->type.dtype)) > kMaxPanelBytes)
      continue;
    p.buffer = "pack_" + l->buffer;
    p.size = points * T;
    p.fill = panel_fill(n, v, packable, p.buffer, T, s.vector_width,
                        bin(Op::Add, imm(vx.lo), bin(Op::Mul, var(vx.name + "_o"), imm(T))));
    p.value = replace_load(
        n.value, l,
        Load::make(l->type, p.buffer, bin(Op::Add, panel_offset(n, packable, T), v_inner)));
    return p;
  }
  return std::nullopt;
}

}  // namespace

Schedule default_schedule(const ContractionNest &n) {
  Schedule s;
  s.tile_sizes.assign(n.indices.size(), 1);
  for (size_t j = 0; j < n.indices.size(); ++j) s.loop_order.push_back(static_cast<int>(j));
  return s;
}

namespace {

/// A register tile of at most this many accumulator vectors has its point loops unrolled whatever
/// their length: AVX-512's register file.
constexpr int64_t kUnrolledAccumulators = 32;

Stmt apply_region(const ContractionNest &n, const Schedule &schedule, bool allow_pack,
                  ConstantPanels *constants = nullptr) {
  Schedule s = normalized(n, schedule);
  size_t k = n.indices.size(), r = n.outputs();
  std::vector<int64_t> tile(k, 1);
  for (size_t j = 0; j < r; ++j)
    tile[j] = std::min(s.tile_sizes[j], std::max<int64_t>(n.indices[j].extent, 1));
  std::vector<int> outs, reds, points;
  for (int j : s.loop_order) {
    if (n.indices[j].output)
      outs.push_back(j);
    else
      reds.push_back(j);
  }
  for (int j : outs)
    if (tile[j] > 1 && j != s.vector_index) points.push_back(j);
  if (s.vector_index >= 0) points.push_back(s.vector_index);

  // How each output index is computed from loop variables, and the accumulator's layout.
  std::map<std::string, Expr> defs;
  Expr tail;  // partial tiles at the end of a dimension
  // On a GPU whose work-items are scalar lanes (SIMT GPUs, lavapipe) the rows of a partial tile
  // past the end compute the last row again (their indices clamped) and only the stores are
  // guarded: lavapipe made each guard of the reduction loop a lane mask and a blend per update,
  // and ran Inception v3 (35x35 and 17x17 rows in tiles of 12 and 9) in 1.67-1.70 s guarded so
  // against 0.31-0.34 clamped (Zen 4). PoCL's vector tiles keep their guards, unswitched out of
  // the loop (Finish.h): clamped, Inception v3 ran 58-62 -> 71-72 ms there.
  const bool clamp_rows = is_gpu_schedule(s) && s.vector_width <= 1;
  std::map<std::string, Expr> clamped;  // row index -> its definition clamped to the last row
  Expr store_tail;                      // `tail` and the clamped rows' own conditions
  Expr acc_index = imm(0);
  Expr v_inner;
  int64_t acc_size = 1;
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    const NestIndex &ix = n.indices[*it];
    Expr inner = *it == s.vector_index && tile[*it] > s.vector_width
                     ? bin(Op::Add, bin(Op::Mul, var(ix.name + "_u"), imm(s.vector_width)),
                           var(ix.name + "_v"))
                 : *it == s.vector_index ? var(ix.name + "_v")
                                         : var(ix.name + "_i");
    acc_index = bin(Op::Add, bin(Op::Mul, inner, imm(acc_size)), acc_index);
    acc_size *= tile[*it];
    defs[ix.name] = bin(Op::Add, imm(ix.lo),
                        bin(Op::Add, bin(Op::Mul, var(ix.name + "_o"), imm(tile[*it])), inner));
    if (*it == s.vector_index) v_inner = inner;
    if (ix.extent % tile[*it] == 0) continue;
    Expr inside = bin(Op::LT, var(ix.name), imm(ix.lo + ix.extent));
    store_tail = conj(store_tail, inside);
    if (clamp_rows && *it != s.vector_index)
      clamped[ix.name] = bin(Op::Min, defs[ix.name], imm(ix.lo + ix.extent - 1));
    else
      tail = conj(tail, inside);
  }
  auto wrap_points = [&](Stmt body) {
    for (auto it = points.rbegin(); it != points.rend(); ++it) {
      const NestIndex &ix = n.indices[*it];
      if (*it == s.vector_index) {
        body = For::make(ix.name + "_v", imm(0), imm(s.vector_width), ForKind::Vectorized, body);
        if (tile[*it] > s.vector_width)
          body = For::make(ix.name + "_u", imm(0), imm(tile[*it] / s.vector_width),
                           ForKind::Unrolled, body);
        continue;
      }
      // Unrolled, so that the accumulators live in registers, where they fit the largest
      // register file (AVX-512's 32): the cost model's 28 rows of one vector ran 2.4x slower as a
      // loop over an accumulator array in memory (MobileNetV2's 112x112x32 -> 16 projection).
      bool fits = acc_size / std::max(1, s.vector_width) <= kUnrolledAccumulators;
      body = For::make(ix.name + "_i", imm(0), imm(tile[*it]),
                       tile[*it] <= 16 || fits ? ForKind::Unrolled : ForKind::Serial, body);
    }
    return body;
  };
  auto guarded = [](Expr cond, Stmt body) { return cond ? IfThenElse::make(cond, body) : body; };

  Type acc_t = n.acc_type;
  auto result_of = [&](Expr acc) {
    Expr v = convert(acc, n.result_type);
    return n.epilogue ? substitute(n.epilogue, {{kAccName, v}}) : v;
  };
  Expr unwritten = n.unwritten ? n.unwritten : convert(IntImm::make(Type::i32(), 0), n.result_type);
  if (tile::is_float(n.result_type.dtype) && !n.unwritten)
    unwritten = FloatImm::make(n.result_type, 0);

  Stmt inner;
  std::optional<Pack> pack;
  bool direct = reds.empty() && n.guards.empty() && n.divisibility.empty() && !n.empty;
  if (n.empty) {
    inner = wrap_points(guarded(
        store_tail, Store::make(n.out_buffer, n.out_index, result_of(convert(unwritten, acc_t)))));
  } else if (direct) {
    inner = wrap_points(
        guarded(store_tail, Store::make(n.out_buffer, n.out_index, result_of(n.value))));
  } else {
    bool flag = n.needs_written_flag();
    // Which guards become reduction loop bounds: those whose other variables are fixed outside.
    std::vector<bool> defined(k, false);
    for (size_t j = 0; j < r; ++j) defined[j] = tile[j] == 1;
    std::vector<bool> used(n.guards.size(), false);
    std::vector<std::pair<Expr, Expr>> bounds;  // per reduction loop: min, end
    // Target::guards_in_taps applies where a guard involves the innermost reduction loop longer
    // than 1 (the taps of a depthwise convolution or a pool). A convolution's condition would sit
    // inside its channel loop, whose copies unrolled for texels (AlignedLoads.h) would each get
    // a block of their own and fetch the texel again (the vulkan_conv2d golden).
    int innermost = -1;  // of the reduction loops longer than 1
    for (int j : reds)
      if (n.indices[j].extent > 1) innermost = j;
    const bool taps_whole =
        n.guards_in_taps && innermost >= 0 &&
        std::any_of(n.guards.begin(), n.guards.end(),
                    [&](const Inequality &g) { return g.coeffs[innermost] != 0; });
    for (int j : reds) {
      const NestIndex &ix = n.indices[j];
      Expr lo = imm(ix.lo), end = imm(ix.lo + ix.extent);
      for (size_t g = 0; g < n.guards.size(); ++g) {
        const auto &q = n.guards[g];
        if (used[g] || q.coeffs[j] == 0 || taps_whole) continue;
        bool ready = true;
        for (size_t m = 0; m < k; ++m) ready &= m == size_t(j) || q.coeffs[m] == 0 || defined[m];
        if (!ready) continue;
        used[g] = true;
        std::vector<int64_t> rest = q.coeffs;
        rest[j] = 0;
        int64_t c = q.coeffs[j];
        if (c > 0) {  // x >= ceil(-rest / c)
          std::vector<int64_t> neg(rest.size());
          for (size_t m = 0; m < rest.size(); ++m) neg[m] = -rest[m];
          Expr num = linear_expr(neg, -q.constant + c - 1, n.indices);
          lo = bin(Op::Max, lo,
                   c == 1 ? linear_expr(neg, -q.constant, n.indices) : bin(Op::Div, num, imm(c)));
        } else {  // x <= floor(rest / -c)
          // end = floor(rest / -c) + 1 = floor((rest - c) / -c).
          end = bin(Op::Min, end,
                    -c == 1 ? linear_expr(rest, q.constant + 1, n.indices)
                            : bin(Op::Div, linear_expr(rest, q.constant - c, n.indices), imm(-c)));
        }
      }
      defined[j] = true;
      bounds.push_back({lo, end});
    }
    Expr cond = tail;
    for (size_t g = 0; g < n.guards.size(); ++g)
      if (!used[g])
        cond =
            conj(cond, bin(Op::GE, linear_expr(n.guards[g].coeffs, n.guards[g].constant, n.indices),
                           imm(0)));
    for (const auto &d : n.divisibility)
      cond =
          conj(cond, bin(Op::EQ,
                         bin(Op::Mod, linear_expr(d.coeffs, d.constant, n.indices), imm(d.modulus)),
                         imm(0)));

    Expr acc_load = Load::make(acc_t, "acc", acc_index);
    std::vector<Stmt> init = {
        Store::make("acc", acc_index,
                    identity_of(n.agg == tile::AggOp::Assign ? tile::AggOp::Sum : n.agg, acc_t))};
    if ((allow_pack || constants) && s.vector_index >= 0 &&
        tile[s.vector_index] < n.indices[s.vector_index].extent)
      pack = plan_pack(n, s, tile, outs, reds, v_inner, allow_pack, constants);
    Expr value = pack ? pack->value : n.value;
    std::vector<Stmt> update = {Store::make("acc", acc_index, aggregate(n.agg, acc_load, value))};
    if (n.agg == tile::AggOp::Assign && n.unwritten)
      init = {Store::make("acc", acc_index, convert(n.unwritten, acc_t))};
    Expr final_value = acc_load;
    if (flag) {
      Expr yes = IntImm::make(Type::boolean(), 1), no = IntImm::make(Type::boolean(), 0);
      init.push_back(Store::make("written", acc_index, no));
      update.push_back(Store::make("written", acc_index, yes));
      final_value = Select::make(Load::make(Type::boolean(), "written", acc_index), acc_load,
                                 convert(unwritten, acc_t));
    }
    Stmt first_init = wrap_points(Block::make(init));
    if (n.first_block)  // a later block of the reduction goes on from the partial sum
      first_init = IfThenElse::make(
          n.first_block, first_init,
          wrap_points(
              guarded(store_tail, Store::make("acc", acc_index,
                                              Load::make(acc_t, n.out_buffer, n.out_index)))));
    // With guards_in_taps, a condition that involves no index of the register tile guards the
    // tile's updates once, so that their loads of one texel stay in one block (GlslSource.h).
    // MobileNetV2's 17 depthwise convolutions on lavapipe ran 13.97 -> 11.80 ms together with the
    // taps' loops whole, Inception v3's nine padded pools 5.66 -> 4.68 and ResNet-50's max pool
    // 0.83 -> 0.76 (Zen 4, per-kernel minima of 2-3 alternating profiles).
    bool tile_free = taps_whole && cond;
    if (tile_free) {
      std::set<std::string> names = variables_of(cond);
      for (int j : points) tile_free &= !names.count(n.indices[j].name);
    }
    Stmt reduce =
        tile_free
            ? guarded(substitute(cond, clamped),
                      wrap_points(substitute(Block::make(update), clamped)))
            : wrap_points(substitute(guarded(cond, Block::make(update)), clamped));
    for (size_t m = reds.size(); m-- > 0;) {
      auto [lo, end] = bounds[m];
      Expr extent = bin(Op::Max, bin(Op::Sub, end, lo), imm(0));
      if (as<IntImm>(simplify(lo)) && as<IntImm>(simplify(end))) extent = bin(Op::Sub, end, lo);
      reduce = For::make(n.indices[reds[m]].name, lo, extent, ForKind::Serial, reduce);
    }
    Stmt store = wrap_points(
        guarded(store_tail, Store::make(n.out_buffer, n.out_index, result_of(final_value))));
    if (n.last_block)
      store = IfThenElse::make(
          n.last_block, store,
          wrap_points(guarded(store_tail, Store::make(n.out_buffer, n.out_index, final_value))));
    inner = Block::make({first_init, reduce, store});
    if (flag) inner = Allocate::make("written", Type::boolean(), acc_size, false, inner);
    inner = Allocate::make("acc", acc_t, acc_size, false, inner);
  }

  // Tile loops, outermost first.
  std::vector<int64_t> counts;
  for (int j : outs) counts.push_back(tile_loop_count(n.indices[j], tile[j]));
  const std::vector<int> in_parallel = parallel_indices(n, s);
  std::vector<bool> parallel(outs.size(), false);
  for (size_t m = 0; m < outs.size(); ++m)
    parallel[m] = std::find(in_parallel.begin(), in_parallel.end(), outs[m]) != in_parallel.end();
  for (size_t m = outs.size(); m-- > 0;) {
    const NestIndex &ix = n.indices[outs[m]];
    bool is_tiled = tile[outs[m]] > 1;
    if (pack && !pack->constant && outs[m] == s.vector_index)
      inner = Allocate::make(pack->buffer, pack->type, pack->size, false,
                             Block::make({pack->fill, inner}));
    inner = For::make(is_tiled ? ix.name + "_o" : ix.name, imm(is_tiled ? 0 : ix.lo),
                      imm(counts[m]), parallel[m] ? ForKind::Parallel : ForKind::Serial, inner);
  }
  inner = substitute(inner, defs);
  return simplify(vectorize_loops(simplify(inner)));
}

bool guards_involve(const ContractionNest &region, size_t j) {
  for (const auto &g : region.guards)
    if (g.coeffs[j] != 0) return true;
  return false;
}

// Whether an output index other than the vector index is tiled over several points of `region`.
bool row_blocked(const ContractionNest &region, const Schedule &s) {
  for (size_t j = 0; j < region.outputs(); ++j)
    if (static_cast<int>(j) != s.vector_index && s.tile_sizes[j] > 1 &&
        region.indices[j].extent > 1)
      return true;
  return false;
}

// Below this many points (multiply-adds), a border part runs on one thread: starting and joining
// the others costs more than they would save.
constexpr int64_t kParallelPoints = 1 << 20;

int64_t points(const ContractionNest &n) {
  int64_t p = 1;
  for (const auto &ix : n.indices) p *= ix.extent;
  return p;
}

// A border part splits over the cores from this many points when its parallel loop runs over its
// outermost output index (an NHWC tensor's images): each core then works on slabs of its own, far
// apart. MobileNetV2's depthwise borders at batch 8 (a quarter of each kernel's pixels, a few
// hundred thousand points) ran on one core; split over channel tiles instead, the strips of
// Inception's 3x3 average pools ran 8-19% slower, so below kParallelPoints other parts stay serial.
constexpr int64_t kParallelSlabPoints = 1 << 16;

bool splits_outermost(const ContractionNest &n, const Schedule &schedule) {
  const std::vector<int> in_parallel = parallel_indices(n, normalized(n, schedule));
  return !in_parallel.empty() && in_parallel.front() == 0;
}

// Whether a border part of `n` under `s` runs on one thread.
bool stays_serial(const ContractionNest &n, const Schedule &s) {
  return points(n) < kParallelPoints &&
         !(points(n) >= kParallelSlabPoints && splits_outermost(n, s));
}

// `b` for a part of the nest (a border region, a peeled tail): the output indices `drop` names are
// untiled; when that leaves no row blocking, the longest output index of `region` that no guard
// involves takes the rows instead (a strip computed point by point ran at well under half the
// interior's speed). Partial tiles are left to peel_tails.
template <typename Drop>
Schedule reblocked(const ContractionNest &region, Schedule b, Drop drop) {
  if (b.tile_sizes.size() != region.indices.size()) return b;
  int64_t rows = 1;
  int best = -1;
  for (size_t j = 0; j < region.outputs(); ++j) {
    if (static_cast<int>(j) == b.vector_index) continue;
    rows = std::max(rows, b.tile_sizes[j]);
    if (drop(j)) b.tile_sizes[j] = 1;
    int64_t e = region.indices[j].extent;
    if (!drop(j) && !guards_involve(region, j) && e > 1 &&
        (best < 0 || e > region.indices[best].extent))
      best = static_cast<int>(j);
  }
  if (row_blocked(region, b) || rows < 2 || best < 0) return b;
  for (size_t j = 0; j < region.outputs(); ++j)
    if (static_cast<int>(j) != b.vector_index) b.tile_sizes[j] = 1;
  b.tile_sizes[best] = std::min(rows, region.indices[best].extent);
  return b;
}

// Applies `s` to `r`, with the partial tiles of a row index peeled into a region of their own
// (blocked along another index there, else one tile of the remainder), so that no reduction loop
// carries a tail guard. Only the whole tiles may pack a panel (`pack`): a peeled tail is too thin
// to repay the copy. With `slabs_only`, each part (whole tiles or a tail) runs in parallel only as
// a border part split over its images would (stays_serial): peeling may leave one image tile.
void peel_tails(const ContractionNest &r, const Schedule &s, std::vector<Stmt> &parts,
                bool pack = false, ConstantPanels *constants = nullptr, bool slabs_only = false) {
  if (s.tile_sizes.size() == r.indices.size())
    for (size_t j = 0; j < r.outputs(); ++j) {
      int64_t t = s.tile_sizes[j], e = r.indices[j].extent;
      if (static_cast<int>(j) == s.vector_index || t <= 1 || e <= t || e % t == 0) continue;
      int64_t whole = e - e % t;
      ContractionNest head = r, rest = r;
      head.indices[j].extent = whole;
      rest.indices[j].lo += whole;
      rest.indices[j].extent = e - whole;
      peel_tails(head, s, parts, pack, constants, slabs_only);
      Schedule rest_s = reblocked(rest, s, [&](size_t m) { return m == j; });
      if (!row_blocked(rest, rest_s)) rest_s.tile_sizes[j] = e - whole;
      peel_tails(rest, rest_s, parts, false, constants, slabs_only);
      return;
    }
  if (slabs_only && stays_serial(r, s)) {
    Schedule serial = s;
    serial.parallel_loops = 0;
    return parts.push_back(apply_region(r, serial, pack, constants));
  }
  parts.push_back(apply_region(r, s, pack, constants));
}

// The interior with `schedule`, then the borders, each blocked anew (reblocked). A border strip
// splits again: along the strip the other output index is mostly unguarded, so only the corners
// are left without a row-blocked accumulator tile.
std::vector<Stmt> apply_regions(const std::vector<ContractionNest> &regions,
                                const Schedule &schedule, bool pack_interior,
                                ConstantPanels *constants = nullptr) {
  std::vector<Stmt> parts;
  peel_tails(regions[0], schedule, parts, pack_interior, constants);
  for (size_t i = 1; i < regions.size(); ++i)
    for (const auto &r : split_borders(regions[i])) {
      Schedule b = reblocked(r, schedule, [&](size_t j) { return guards_involve(r, j); });
      if (stays_serial(r, b)) b.parallel_loops = 0;
      // A part parallel only as slabs of images keeps that rule in its peeled tails, whose
      // parallel loop may be another index.
      peel_tails(r, b, parts, false, constants, points(r) < kParallelPoints);
    }
  return parts;
}

// The constant input that the filled panel `name` was laid out from.
const std::string &panel_source(const ConstantPanels &constants, const std::string &name) {
  for (const auto &filled : constants.panels)
    if (filled.name == name) return filled.source;
  tile::internal_error(__FILE__, __LINE__, "no constant panel " + name);
}

bool vector_tiles_outermost(const ContractionNest &n, const Schedule &s) {
  int j = outermost_tile_loop(n, s);
  return j < 0 || j == s.vector_index;
}

// A padded contraction whose whole vector operand is larger than a panel (a deep 3x3 convolution
// on a small image): packed per region, the interior would copy it once and every border point
// would stream it from memory again (five passes over 9 MB for ResNet's 7x7x512 layer). Instead
// one loop over vector tiles, outside all regions, packs the tile's panel once and the interior
// and every border read it while it is hot in L2. Such a panel may be larger than one read by a
// single region (kMaxPanelBytes): where it outgrows L2 its regions read it from L3, still far
// better than from memory once each. With weights as inputs, ResNet-50's 7x7x512 layers on the
// Intel kind (tiles of 64 columns: 1.18 MB panels) ran 3.0 -> 1.55 ms each shared (the fastest
// of 30 runs).
constexpr int64_t kMaxSharedPanelBytes = 2 << 20;
// Multiply-adds per byte of activations below which rows, not shared constant panels, go first
// where the schedule asks for it, and below which they go first anyway (apply_shared_panel).
constexpr double kRowsFirstIntensity = 200, kDepthwiseIntensity = 8;

// Whether `rows` splits `interior`'s leading index (its first output index of more than one
// point: the rows, or the images) into whole tiles that `cores` divides (a tail would be peeled
// and split apart).
bool rows_split_evenly(const ContractionNest &interior, const Schedule &rows, int cores) {
  int outer = outermost_tile_loop(interior, rows);
  if (cores < 2 || outer < 0) return false;
  for (size_t j = 0; j < interior.outputs(); ++j)
    if (interior.indices[j].extent > 1) {
      if (static_cast<int>(j) != outer) return false;
      break;
    }
  int64_t extent = interior.indices[outer].extent, tile = rows.tile_sizes[outer];
  return extent % tile == 0 && (extent / tile) % cores == 0;
}

std::optional<Stmt> apply_shared_panel(const ContractionNest &n, const Schedule &schedule,
                                       ConstantPanels *constants) {
  Schedule s = normalized(n, schedule);
  int v = s.vector_index;
  if (v < 0 || n.empty || !n.divisibility.empty()) return std::nullopt;
  const NestIndex vx = n.indices[v];
  int64_t T = std::min(s.tile_sizes[v],
                       vx.extent);  // normalized: a multiple of the width dividing the extent
  int64_t tiles = vx.extent / T;
  if (tiles < 2) return std::nullopt;
  std::string blk = vx.name + "_blk", t = vx.name + "_t";
  auto panel = tile_panel(
      n, s, blk,
      [](int64_t tile, int64_t whole) {
        return tile <= kMaxSharedPanelBytes && whole > kMaxPanelBytes;
      },
      constants, var(t));
  if (!panel) return std::nullopt;
  if (!panel->fill) {
    // Weights compiled in are laid out per vector tile already, so sharing gains only their reuse
    // from L2 across regions, and the loop over tiles becomes the parallel one: every core then
    // reads all of the activations, half of them from the other core's cache (the kernel before
    // split the image's rows), and 3 tiles on 2 cores leave one idle a third of the time. Kernels
    // doing few multiply-adds per byte of activations split rows instead (each core reads its own
    // rows) wherever rows give as many parallel iterations as the tiles: those whose schedule runs
    // rows first (activations_first), and depthwise convolutions (a few per byte; nothing they
    // read is shared between vector tiles, so the order of their loops changes no reuse). On the
    // Intel kind, weights compiled in, medians in the network of alternating runs: ResNet-50
    // b1's 9 kernels concerned 6.37 -> 6.05 ms (a 1x1 64 -> 256 on 56x56, 64 a byte, 0.79 ->
    // 0.69); MobileNetV2 b1's depthwise 112x112x96 stride 2 0.35 -> 0.18 ms (0.11 alone either
    // way), its three on 28x28 0.179 -> 0.118 ms together. Not where rows are fewer: Xception's
    // 1x1 256 -> 728 on 37x37 (182 a byte; 6 row tiles, 91 vector tiles) ran 6.2 -> 7.2 ms by
    // rows. Nor above 200 a byte: VGG16's 3x3 on 112x112x128 (283) ran 14.7 -> 16.3 ms by rows.
    // Fewer row tiles than vector tiles do where the interior's rows (its leading index) split
    // evenly among the cores: MobileNetV2 b1's six depthwise convolutions on 14x14 (2 row tiles,
    // 8 or 12 vector tiles) 0.032 -> 0.026 ms and 0.042 -> 0.035 ms each in the network, and the
    // convolutions around them faster too (the whole network's kernels 3.66 -> 3.45 ms; Intel
    // kind, alternating runs). On 7x7 images the interior has one row tile: columns would be
    // split, no better placed than tiles.
    const std::string &weights = panel_source(*constants, panel->buffer);
    double per_byte =
        static_cast<double>(points(n)) / static_cast<double>(operand_span_bytes(n, weights));
    bool rows_first = !vector_tiles_outermost(n, s);
    if (per_byte < (rows_first ? kRowsFirstIntensity : kDepthwiseIntensity)) {
      Schedule rows = s;
      if (!rows_first) activations_first(n, v, rows);
      int outer = outermost_tile_loop(n, rows);
      std::vector<ContractionNest> regions = split_borders(n);
      if ((outer >= 0 && tile_loop_count(n.indices[outer], rows.tile_sizes[outer]) >= tiles) ||
          rows_split_evenly(regions[0], rows, constants->cores))
        return Block::make(apply_regions(regions, rows, true, constants));
    }
  }
  Schedule inner = s;
  inner.parallel_loops = 0;
  std::vector<Stmt> parts = apply_regions(split_borders(panel->nest), inner, false);
  Stmt body;
  if (panel->fill) {
    parts.insert(parts.begin(), panel->fill);
    body = Allocate::make(panel->buffer, panel->type, panel->size, false, Block::make(parts));
  } else {
    body = Block::make(parts);  // a filled constant panel
  }
  body = substitute(body, {{blk, bin(Op::Add, imm(vx.lo), bin(Op::Mul, var(t), imm(T)))}});
  return simplify(For::make(t, imm(0), imm(tiles),
                            s.parallel_loops > 0 ? ForKind::Parallel : ForKind::Serial, body));
}

// Whether `e` loads from `buffer`.
bool reads(const Expr &e, const std::string &buffer) {
  struct Finder : IRVisitor {
    const std::string &buffer;
    bool found = false;
    explicit Finder(const std::string &b) : buffer(b) {}
    void visit(const Load *l) override {
      found |= l->buffer == buffer;
      IRVisitor::visit(l);
    }
  } f(buffer);
  if (e) f.visit_expr(e);
  return f.found;
}

// Reduction blocks (below) apply to a vector tile's constant panel above this size, cut into
// blocks of at most kReductionBlockBytes (32 KB blocks ran BERT's 3072 -> 768 projection 18%
// slower than 64 KB ones, on 24 blocks; ResNet-50 gained about as much from either) ...
constexpr int64_t kBlockedPanelBytes = 32 << 10;
constexpr int64_t kReductionBlockBytes = 64 << 10;
// ... on at most this many output rows (points of the output indices other than the vector
// index): the rows are the multiply-adds each byte of the panel feeds, and beyond a few hundred
// the weights' memory time hides under them anyway (ResNet-50's 28x28 stage ran 7-14% slower
// blocked, its 14x14 and 7x7 stages 12-28% faster).
constexpr int64_t kBlockedRows = 256;

// Inference with large constant weights on few rows (ResNet's deep 3x3 and 1x1 convolutions on
// 14x14 and 7x7 images, a classifier): a vector tile's panel streams from memory on the first
// row tile that reads it, a few multiply-adds per byte, and the other row tiles then read it from
// L2. The memory time adds to the compute time instead of hiding under it: in the network the
// weights are cold, alone (as the tuner times them) they are not. So the reduction's innermost
// index is cut into blocks, every row tile runs over one block before the next, and each read of
// the panel prefetches the same point one block on into L2 (BufferParam::prefetch_ahead): while
// the row tiles reuse one block the next one arrives. Between blocks the output element holds the
// partial sum (ContractionNest::first_block, last_block); the epilogue runs after the last.
// ResNet-50 b1 on the Intel kind: 3x3 convolutions on 7x7x512 1.12 -> 0.84 ms in the network.
// Applies where the schedule's outermost loop is over vector tiles (the tiles stay the parallel
// work, as the schedule asked), the operand is a filled constant panel, and the sum can live in
// the output: a + reduction, accumulated in the output's type, the output read by nothing else.
std::optional<Stmt> apply_reduction_blocks(const ContractionNest &n, const Schedule &schedule,
                                           ConstantPanels *constants) {
  Schedule s = normalized(n, schedule);
  int v = s.vector_index;
  if (!constants || v < 0 || n.empty || !n.divisibility.empty() || n.needs_written_flag() ||
      n.agg != tile::AggOp::Sum || !(n.acc_type == n.result_type) ||
      (n.epilogue && n.epilogue->type.dtype != n.acc_type.dtype) ||  // stored in another dtype
      reads(n.value, n.out_buffer) || reads(n.epilogue, n.out_buffer))
    return std::nullopt;
  const NestIndex vx = n.indices[v];
  int64_t T = std::min(s.tile_sizes[v], vx.extent), tiles = vx.extent / T, rows = 1;
  for (size_t j = 0; j < n.outputs(); ++j)
    if (static_cast<int>(j) != v) rows *= n.indices[j].extent;
  std::vector<int> reds;
  for (int j : s.loop_order)
    if (!n.indices[j].output) reds.push_back(j);
  if (tiles < 2 || !vector_tiles_outermost(n, s) || rows > kBlockedRows || reds.empty() ||
      !n.guard_free(reds.back()))
    return std::nullopt;
  const int b = reds.back();
  const NestIndex bx = n.indices[b];
  std::string blk = vx.name + "_blk", t = vx.name + "_t", bo = bx.name + "_blocks";
  auto panel = tile_panel(
      n, s, blk, [](int64_t, int64_t) { return false; }, constants, var(t));
  if (!panel || panel->fill) return std::nullopt;
  // Over one block, the row tiles read the other operand (activations) in short runs of its
  // rows: when it is too large to stay in L2 beside the panel those runs come from L3, and that
  // costs more than the weights' memory time saves (BERT's 3072 -> 768 projection on 128 rows,
  // 1.5 MB of activations: 12% slower blocked, with its weights warm).
  if (operand_span_bytes(n, panel_source(*constants, panel->buffer)) > kMaxPanelBytes)
    return std::nullopt;
  // The blocked index is the panel's innermost reduction index: one step of it moves T elements.
  int64_t bytes = panel->size * static_cast<int64_t>(tile::dtype_size(panel->type.dtype));
  int64_t B = 0;  // the largest block that divides the index and keeps its slice small
  for (int64_t d = bx.extent / 2; d >= 1 && !B; --d)
    if (bx.extent % d == 0 && bytes / bx.extent * d <= kReductionBlockBytes) B = d;
  if (bytes <= kBlockedPanelBytes || !B) return std::nullopt;
  constants->prefetch_ahead[panel->buffer] = B * T;
  ContractionNest c = panel->nest;
  c.indices[b].lo = 0;
  c.indices[b].extent = B;
  shift_indices(c, {{bx.name, bin(Op::Add, imm(bx.lo),
                                  bin(Op::Add, bin(Op::Mul, var(bo), imm(B)), var(bx.name)))}});
  c.first_block = bin(Op::EQ, var(bo), imm(0));
  c.last_block = bin(Op::EQ, var(bo), imm(bx.extent / B - 1));
  Schedule inner = s;
  inner.parallel_loops = 0;
  Stmt body = For::make(bo, imm(0), imm(bx.extent / B), ForKind::Serial,
                        Block::make(apply_regions(split_borders(c), inner, false)));
  body = substitute(body, {{blk, bin(Op::Add, imm(vx.lo), bin(Op::Mul, var(t), imm(T)))}});
  return simplify(For::make(t, imm(0), imm(tiles),
                            s.parallel_loops > 0 ? ForKind::Parallel : ForKind::Serial, body));
}

// The GPU twin of the shared panel, for wide-vector devices (a CPU under OpenCL): a work-item
// computes `tiles_per_item` consecutive row tiles (the innermost output loop) of one vector tile,
// or where one tile holds every row (a 7x7 image), that many points of the next output index,
// after copying that tile's panel of the vector operand into private memory once. SGEMM 1024 on
// PoCL: B's rows, 4 KB apart, alias in L1 and L2 and every work-item streamed its columns from
// L3; with the panel a whole run went from 49 to 108 GFLOP/s. The loops it returns are the
// work-item's output tile loops (map_to_gpu maps them) around the copy and the row tiles. Nests
// gpu_panel_row refuses, or whose rows do not divide into whole chunks, get the plain mapping.
std::optional<Stmt> apply_gpu_panel(const ContractionNest &n, const Schedule &schedule,
                                    ConstantPanels *constants) {
  Schedule s = normalized(n, schedule);
  int v = s.vector_index, row = gpu_panel_row(n, s);
  size_t r = n.outputs();
  if (row < 0 || s.tiles_per_item < 2) return std::nullopt;
  int along = gpu_panel_chunk(n, s, row);  // the index the chunk runs over: row, or the next one
  if (along < 0) return std::nullopt;
  const NestIndex vx = n.indices[v], rx = n.indices[row];
  int64_t T = std::min(s.tile_sizes[v], vx.extent);
  int64_t rows = std::clamp<int64_t>(s.tile_sizes[row], 1, rx.extent),
          chunk = (along == row ? rows : 1) * s.tiles_per_item;
  if (n.indices[along].extent % chunk != 0) return std::nullopt;
  auto panel = tile_panel(
      n, s, "#blk", [](int64_t tile, int64_t) { return tile <= kMaxPanelBytes; }, constants,
      var("#tile"));
  if (!panel) return std::nullopt;

  // Inside the work-item: the rows of one chunk from Var #rbase, each other output index at one
  // point (Var #at_X). Outside: a loop per output index in the schedule's order, named as
  // map_to_gpu expects (`x` or `x_o`, whichever the inside does not use).
  ContractionNest c = panel->nest;
  std::map<std::string, Expr> shift, bases;
  struct Outer {
    std::string var;
    int64_t min, count;
  };
  std::map<int, Outer> outer;
  for (size_t j = 0; j < r; ++j) {
    const NestIndex &ix = n.indices[j];
    if (static_cast<int>(j) == v) {
      outer[j] = {ix.name, 0, ix.extent / T};
      bases["#blk"] = bin(Op::Add, imm(ix.lo), bin(Op::Mul, var(ix.name), imm(T)));
      bases["#tile"] = var(ix.name);
      continue;
    }
    if (static_cast<int>(j) == row && along != row) continue;  // one tile of all rows, inside
    std::string base = static_cast<int>(j) == along ? "#rbase" : "#at_" + ix.name;
    // The chunk's own loop is renamed: map_to_gpu maps the loops named after output indices down
    // to the first other statement, which a constant's panel (read in place, no copy) leaves out.
    std::string inside = static_cast<int>(j) == along ? "#in_" + ix.name : ix.name;
    shift[ix.name] = bin(Op::Add, var(base), var(inside));
    c.indices[j].name = inside;
    c.indices[j].lo = 0;
    if (static_cast<int>(j) == along) {
      c.indices[j].extent = chunk;
      std::string name = along == row && rows > 1 ? ix.name : ix.name + "_o";
      outer[j] = {name, 0, ix.extent / chunk};
      bases[base] = bin(Op::Add, imm(ix.lo), bin(Op::Mul, var(name), imm(chunk)));
    } else {
      c.indices[j].extent = 1;
      if (ix.extent > 1) outer[j] = {ix.name + "_o", ix.lo, ix.extent};
      bases[base] = ix.extent > 1 ? var(ix.name + "_o") : imm(ix.lo);
    }
  }
  shift_indices(c, shift);

  Schedule inner = s;
  inner.parallel_loops = 0;
  Stmt body = apply_region(c, inner, false);
  if (panel->fill)  // a copy into private memory; a constant's filled panel is read in place
    body = Allocate::make(panel->buffer, panel->type, panel->size, false,
                          Block::make({panel->fill, body}));
  body = substitute(body, bases);
  for (auto it = s.loop_order.rbegin(); it != s.loop_order.rend(); ++it)
    if (auto o = outer.find(*it); o != outer.end())
      body =
          For::make(o->second.var, imm(o->second.min), imm(o->second.count), ForKind::Serial, body);
  return simplify(body);
}

}  // namespace

Stmt apply_schedule(const ContractionNest &n, const Schedule &schedule, ConstantPanels *constants) {
  if (is_gpu_schedule(schedule)) {
    // GPU: one region (guards stay guards); its output tile loops, one register tile per
    // iteration (or, with tiles_per_item, a panel and a chunk of row tiles), become work-groups
    // and work-items (GpuMapping.h).
    if (auto panel = apply_gpu_panel(n, schedule, constants))
      return map_to_gpu(n, schedule,
                        [&](const ContractionNest &, const Schedule &) { return *panel; });
    return map_to_gpu(n, schedule, [&](const ContractionNest &m, const Schedule &s) {
      return apply_region(m, s, false, constants);
    });
  }
  if (auto blocks = apply_reduction_blocks(n, schedule, constants)) return *blocks;
  std::vector<ContractionNest> regions = split_borders(n);
  if (regions.size() == 1) {
    // No borders, but a row tile that does not divide its extent (Inception's 71 and 147 rows by
    // 6) is peeled all the same: its tail guard would sit in the reduction loop of every tile.
    std::vector<Stmt> parts;
    peel_tails(n, schedule, parts, true, constants);
    if (parts.size() == 1) return parts[0];
    // Each peeled tail would stream the whole vector operand again, unpacked (a 1x1 convolution
    // on ResNet's 7x7 images: rows 0-5, then row 6, three passes over 4 MB of weights): one panel
    // per vector tile serves them all, as for borders.
    if (auto shared = apply_shared_panel(n, schedule, constants)) return *shared;
    return Block::make(parts);
  }
  if (auto shared = apply_shared_panel(n, schedule, constants)) return *shared;
  return Block::make(apply_regions(regions, schedule, true, constants));
}

}  // namespace tessera::compiler
