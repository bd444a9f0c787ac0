#include "compiler/tune/SearchSpace.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "compiler/CostModel.h"
#include "compiler/Panel.h"
#include "compiler/SplitBorders.h"
#include "compiler/tune/GpuSearchSpace.h"

namespace tessera::compiler::tune {

namespace {

/// The cost model's estimate of a register tile of `rows` x `vecs` vectors: multiply-adds per
/// load in the inner loop, less the work wasted in partial row tiles, and far less when the
/// accumulators and operands no longer fit the register file (spills).
double register_tile_score(int64_t rows, int vecs, int64_t row_extent, int registers) {
  double intensity = double(rows * vecs) / double(rows + vecs);
  int64_t tiles = (row_extent + rows - 1) / rows;
  double useful = double(row_extent) / double(tiles * rows);
  bool spills = rows * vecs + vecs + 1 > registers;
  return intensity * useful * (spills ? 0.25 : 1.0);
}

std::vector<Schedule> contraction_candidates(const ContractionNest &interior, const Schedule &base,
                                             const Target &target) {
  const ContractionNest &n = interior;
  int v = base.vector_index, width = base.vector_width;
  size_t r = n.outputs();
  int registers = target.vector_bits >= 512 ? 32 : 16;
  int64_t per = n.indices[v].extent / width;
  // Where the activations outgrow L2 only one loop order is offered: timed alone, the tuner
  // would see them stay in L3 (CostModel.h).
  const bool activations = activations_outgrow_l2(n, v, target);
  // Where the weights outgrow L2 and outweigh the activations, the vector tiles stay outermost.
  const bool weights = weights_outgrow_l2(n, v, target);
  // Gathers (CostModel.cpp): few accumulators of one vector each first.
  const bool gathers = gathers_along(n, v);
  std::vector<std::pair<double, Schedule>> scored;
  for (size_t row = 0; row < r; ++row) {
    if (static_cast<int>(row) == v || !n.guard_free(row) || n.indices[row].extent < 2) continue;
    int64_t e = n.indices[row].extent;
    for (int vecs = 1; vecs <= 4; ++vecs) {
      if (per % vecs != 0) continue;
      int64_t max_rows = std::min<int64_t>(e, std::max(1, (registers - vecs - 1) / vecs));
      for (int64_t rows = 1; rows <= max_rows; ++rows)
        for (bool rows_outer : {false, true}) {
          Schedule s = base;
          std::fill(s.tile_sizes.begin(), s.tile_sizes.end(), 1);
          s.tile_sizes[v] = width * vecs;
          s.tile_sizes[row] = rows;
          s.unroll = vecs;
          s.loop_order.clear();
          s.loop_order.push_back(rows_outer ? static_cast<int>(row) : v);
          s.loop_order.push_back(rows_outer ? v : static_cast<int>(row));
          for (size_t j = 0; j < r; ++j)
            if (static_cast<int>(j) != v && j != row) s.loop_order.push_back(static_cast<int>(j));
          for (size_t j = r; j < n.indices.size(); ++j) s.loop_order.push_back(static_cast<int>(j));
          if (activations) {
            if (!rows_outer) continue;
            activations_first(n, v, s);
          }
          if (weights && rows_outer) continue;
          // The order rule of the cost model breaks ties: vector tiles outermost (rows outermost
          // for gathers).
          double score =
              gathers ? 1.0 / (vecs * vecs * (1.0 + std::abs(static_cast<double>(rows) - 5.0))) *
                            (rows_outer ? 1.0 : 0.97)
                      : register_tile_score(rows, vecs, e, registers) * (rows_outer ? 0.97 : 1.0);
          scored.emplace_back(score, std::move(s));
        }
    }
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  std::vector<Schedule> out;
  for (auto &[score, s] : scored) out.push_back(std::move(s));
  return out;
}

std::vector<Schedule> elementwise_candidates(const ContractionNest &n, const Schedule &base) {
  std::vector<Schedule> out;
  int v = base.vector_index;
  if (v < 0) return out;
  int64_t per = n.indices[v].extent / base.vector_width;
  for (int u : {2, 4, 1, 8}) {
    if (per % u != 0) continue;
    Schedule s = base;
    s.tile_sizes[v] = base.vector_width * u;
    s.unroll = u;
    out.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<Schedule> candidates(const ContractionNest &nest, const Target &target) {
  if (target.backend == "opencl" || target.backend == "vulkan") return gpu_candidates(nest, target);
  Schedule base = choose_schedule(nest, target);
  std::vector<Schedule> all{base};
  const ContractionNest interior = split_borders(nest)[0];
  bool reduces = interior.indices.size() > interior.outputs();
  std::vector<Schedule> more;
  if (target.backend == "llvm" && !interior.empty && base.vector_index >= 0)
    more = reduces ? contraction_candidates(interior, base, target)
                   : elementwise_candidates(interior, base);
  for (auto &s : more)
    if (std::find(all.begin(), all.end(), s) == all.end()) all.push_back(std::move(s));
  return all;
}

}  // namespace tessera::compiler::tune
