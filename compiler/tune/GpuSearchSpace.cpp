#include "compiler/tune/GpuSearchSpace.h"

#include <algorithm>
#include <utility>

#include "compiler/GpuCostModel.h"

namespace tessera::compiler::tune {

namespace {

// The output index listed last among the outputs in the loop order (GPU dimension 0), the one
// before it (dimension 1).
std::pair<int, int> mapped_dims(const ContractionNest &n, const Schedule &s) {
  int d0 = -1, d1 = -1;
  for (int j : s.loop_order)
    if (static_cast<size_t>(j) < n.outputs() && n.indices[j].extent > 1) d1 = d0, d0 = j;
  return {d0, d1};
}

}  // namespace

std::vector<Schedule> gpu_candidates(const ContractionNest &n, const Target &target) {
  Schedule base = choose_gpu_schedule(n, target);
  std::vector<Schedule> out = {base};
  auto add = [&](const Schedule &s) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  auto [d0, d1] = mapped_dims(n, base);
  if (d0 < 0) {
    // A full reduction: how many work-items split it.
    for (int64_t t : {16, 32, 128, 256})
      if (t <= target.max_workgroup_size) {
        Schedule s = base;
        s.workgroup = {t};
        add(s);
      }
    return out;
  }
  if (reduction_split(n, target)) {
    // A SIMT GPU may split each output's reduction over a work-group: how many work-items split
    // it. The variants below tile the outputs instead.
    for (int64_t t : {32, 64, 128, 256})
      if (t <= target.max_workgroup_size && 2 * t <= n.indices[n.outputs()].extent) {
        Schedule s = base;
        for (size_t j = 0; j < n.outputs(); ++j) s.tile_sizes[j] = 1;
        s.workgroup = {t};
        s.split_reduction = true;
        add(s);
      }
    base.split_reduction = false;
  }
  int v = base.vector_index;
  int row = v == d0 ? d1 : d0;
  bool wide = wide_vector_target(target);
  std::vector<Schedule> variants;
  std::vector<int> widths = {base.vector_width};
  if (v >= 0 && base.vector_width >= 4) widths.push_back(base.vector_width / 2);
  std::vector<int64_t> row_tiles = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16};
  std::vector<std::vector<int64_t>> shapes =
      wide
          ? std::vector<std::vector<int64_t>>{{1, 1},  {4, 1},  {8, 1}, {16, 1},
                                              {32, 1}, {64, 1}, {16, 2}}
          : std::vector<std::vector<int64_t>>{{8, 8}, {16, 8}, {16, 16}, {32, 8}, {64, 1}, {32, 4}};
  bool reduces = n.indices.size() > n.outputs();
  // Vectors (scalar columns where the width is 1) per work-item along the vector index; Vulkan's
  // scalar tiles go to 16 columns (four texels of four, GlslSource.h).
  std::vector<int> vec_counts = {1, 2, 3, 4};
  if (!wide && target.backend == "vulkan") vec_counts.insert(vec_counts.end(), {8, 16});
  for (int width : widths)
    for (int vecs : vec_counts) {
      if (v >= 0 && n.indices[v].extent % (int64_t(width) * vecs) != 0) continue;
      if (v < 0 && vecs > 1) continue;
      for (int64_t rt : row_tiles) {
        if (row < 0 && rt > 1) continue;
        if (row >= 0 && (rt > n.indices[row].extent || (!reduces && rt > 1))) continue;
        for (const auto &shape : shapes)
          for (bool swap : {false, true}) {
            Schedule s = base;
            if (v >= 0) {
              s.vector_width = width;
              s.tile_sizes[v] = int64_t(width) * vecs;
              s.unroll = vecs;
            }
            if (row >= 0) s.tile_sizes[row] = rt;
            int64_t items = 1;
            for (int64_t w : shape) items *= w;
            if (items > target.max_workgroup_size) continue;
            s.workgroup = shape;
            if (swap && d1 >= 0) {
              auto a = std::find(s.loop_order.begin(), s.loop_order.end(), d0);
              auto b = std::find(s.loop_order.begin(), s.loop_order.end(), d1);
              std::iter_swap(a, b);
            } else if (swap) {
              continue;
            }
            s.tiles_per_item = 1;
            variants.push_back(s);
            if (wide) {
              s.tiles_per_item = panel_tiles_per_item(n, s, target);
              if (s.tiles_per_item > 1) variants.push_back(s);
              s.tiles_per_item = 1;
            }
            if (stageable(n) && reduces) {
              s.use_local_memory = !s.use_local_memory;
              variants.push_back(s);
            }
          }
      }
    }
  std::stable_sort(variants.begin(), variants.end(), [&](const Schedule &a, const Schedule &b) {
    return gpu_schedule_cost(n, a, target) < gpu_schedule_cost(n, b, target);
  });
  for (const auto &s : variants) add(s);
  return out;
}

}  // namespace tessera::compiler::tune
