// Panels: a contiguous copy of the vector operand's slice for one vector tile (GEMM's B columns,
// a convolution's weights for a block of output channels), laid out [reduction point][lane], so
// that the reduction reads it at unit stride however far apart the operand's rows are.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ConstantPanel.h"
#include "compiler/Nest.h"
#include "compiler/Schedule.h"

namespace tessera::compiler {

/// The largest panel a kernel copies (in bytes): beyond it the copy no longer stays in L2.
inline constexpr int64_t kMaxPanelBytes = 1 << 20;

/// A load worth copying into a panel: contiguous in the vector index, otherwise reading only
/// reduction indices (`mine`, in the order of `reds`), and in range at every point of the box.
struct Packable {
  const Load *load = nullptr;
  std::vector<int> mine;
};

/// The packable loads of `n.value` for vector index `v` and reduction indices `reds`.
std::vector<Packable> packable_loads(const ContractionNest &n, int v, const std::vector<int> &reds);

/// The filled panel of a constant operand `p` for tiles of `T` lanes over the whole vector index
/// (ConstantPanel.h; named by ConstantPanels::add), or none where its index is not plain
/// integer arithmetic.
std::optional<ConstantPanel> constant_panel(const ContractionNest &n, int v, const Packable &p,
                                            int64_t T);

/// Whether the vector index `v` moves every load of `n.value` that it moves by more than one
/// element per step, and moves at least one: each vector of such a nest is a gather, and no operand
/// is shared between register tile rows (a softmax's max over the contiguous last axis, vectorized
/// over the rows).
bool gathers_along(const ContractionNest &n, int v);

/// The output index other than `v` one step of which moves every load that `v` gathers by one
/// element (a transposing copy: the input's contiguous index), or -1 where none does.
int gather_neighbour(const ContractionNest &n, int v);

/// Whether `n.value` has two loads or more and each one's index reads the index variable `name`:
/// every operand a slice of its own per value of that index (a batched product's batch).
bool every_load_reads(const ContractionNest &n, const std::string &name);

/// Whether one step of output index `j` moves some load of `n.value` by a nonzero multiple of 4 KB
/// (an NHWC image's rows of 28 x 512 floats): register tile rows along `j` then read as many
/// streams that fall into one set of a 4 KB-periodic L1 cache, more than its ways.
bool steps_alias_in_l1(const ContractionNest &n, int j);

/// Whether index `j` strides over a window of the reduction: in some load one step of `j` moves
/// 2 to 4 steps of a reduction index (`2*j + l`, a stride-2 convolution's or pool's taps).
bool strided_window_along(const ContractionNest &n, int j);

/// Whether some operand of `n.value` is the same for every value of output index `j` (a
/// convolution's weights for a pixel index), so that a register tile along `j` loads it once for
/// several outputs. Without one (softmax's row max and sum, pools, depthwise channels) a tile
/// along `j` only takes work-items away on a GPU: on an H200 BERT's 12x128 row sums over 128 ran
/// 4.9x faster untiled, in groups of 8x8, than in 4x4 tiles (the tuner's pick over the cost
/// model's). A load inside another load's index counts for both.
bool reused_along(const ContractionNest &n, size_t j);

/// The most bytes between the lowest and the highest element that one load of `n.value` other
/// than of buffer `except` reads over the nest's box (its index as plain integer arithmetic of the
/// index variables; any other index counts as unbounded): the footprint of a GEMM's or a
/// convolution's other operand.
int64_t operand_span_bytes(const ContractionNest &n, const std::string &except);

/// `e` with the load node `target` (compared by identity) replaced by `with`.
Expr replace_load(const Expr &e, const Load *target, Expr with);

/// The panel element of the reduction point (flattened over `p.mine`) for lane 0 of a tile of `T`.
Expr panel_offset(const ContractionNest &n, const Packable &p, int64_t T);

/// Copies the panel of the tile of vector index `v` whose first value is `first` into `buffer`
/// (a Vectorized loop of `width` lanes, not yet passed through vectorize_loops).
Stmt panel_fill(const ContractionNest &n, int v, const Packable &p, const std::string &buffer,
                int64_t T, int width, const Expr &first);

/// The row index of a GPU panel schedule (Schedule::tiles_per_item): the innermost output index
/// of `s.loop_order` other than the vector index, or -1 where `n` and `s` allow none (no vector
/// index, local-memory staging, a divisibility condition, a guard on an output index, or a tile
/// on an output index other than those two).
int gpu_panel_row(const ContractionNest &n, const Schedule &s);

/// The output index whose consecutive points (tiles of `row`, gpu_panel_row's) a work-item of a
/// GPU panel schedule computes: `row` itself, or where one register tile spans all of its rows
/// (a 7x7 image's 7 rows), the next outer output index of `s.loop_order` that has more than one
/// point (its columns); -1 where neither has.
int gpu_panel_chunk(const ContractionNest &n, const Schedule &s, int row);

/// Rewrites every use of the index variables `shift` names (value, output index, epilogue,
/// unwritten value) to its expression: how a nest restricted to part of its box sees the rest.
void shift_indices(ContractionNest &c, const std::map<std::string, Expr> &shift);

/// One vector tile of a nest, reading its operand from a panel.
struct TilePanel {
  ContractionNest nest;  // the vector index over [0, T); the tile's first element is Var `blk`
  std::string buffer;
  Type type;
  int64_t size = 0;  // elements
  Stmt fill;         // fills `buffer` for the tile at `blk` (vectorized); null for a constant's
};

/// The tile of `s.vector_index` (schedule normalized: its tile divides the extent) at Var `blk`,
/// with the first packable load for which `accept(panel bytes, whole operand bytes)` holds read
/// from its panel; none when no load is packable or accepted. With `constants` and the tile's
/// number `tile_index`, a constant operand is read from its filled panel instead (whatever
/// `accept` says: there is no copy to weigh), which is added to `constants->panels`.
std::optional<TilePanel> tile_panel(const ContractionNest &n, const Schedule &s,
                                    const std::string &blk,
                                    const std::function<bool(int64_t, int64_t)> &accept,
                                    ConstantPanels *constants = nullptr,
                                    const Expr &tile_index = nullptr);

}  // namespace tessera::compiler
