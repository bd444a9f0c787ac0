#include "compiler/GpuCostModel.h"

#include <algorithm>

#include "compiler/GpuMapping.h"
#include "compiler/IRVisitor.h"
#include "compiler/Panel.h"

namespace tessera::compiler {

namespace {

bool free_of_guards(const ContractionNest &n, size_t j) {
  for (const auto &g : n.guards)
    if (g.coeffs[j] != 0) return false;
  for (const auto &d : n.divisibility)
    if (d.coeffs[j] != 0) return false;
  return true;
}

// The dtypes the C-like dialects have native vectors of (others compute lane by lane).
bool has_vectors(tile::DType t) {
  using tile::DType;
  return t == DType::Float32 || t == DType::Float64 || t == DType::Int32 || t == DType::UInt32 ||
         t == DType::Int64 || t == DType::UInt64;
}

// The largest divisor of `e` in [lo, hi], or 0.
int64_t divisor_in(int64_t e, int64_t lo, int64_t hi) {
  for (int64_t t = std::min(hi, e); t >= lo && t >= 1; --t)
    if (e % t == 0) return t;
  return 0;
}

// The tile in [lo, hi] whose partial last tile wastes the fewest iterations of `e` (the largest
// among equals): 13 for Xception's 37 rows, where 16 computed 48.
int64_t least_waste_tile(int64_t e, int64_t lo, int64_t hi) {
  int64_t best = hi, cover = (e + hi - 1) / hi * hi;
  for (int64_t t = hi - 1; t >= std::max<int64_t>(1, lo); --t)
    if ((e + t - 1) / t * t < cover) best = t, cover = (e + t - 1) / t * t;
  return best;
}

// What a SIMT GPU needs to keep every compute unit busy with a kernel of one wave: work-items
// enough to give each unit's four schedulers a warp each, and several work-groups per unit, so that
// the units that get one group more than the others do not leave the rest idle for long. On an
// H200 (132 multiprocessors) the tuner's schedules for ResNet-50's 7x7 to 28x28 layers ran 1.4-2.9x
// faster than the cost model's 4x4 outputs per work-item in 16x16 groups, by launching 4-8 times
// as many groups of 16 to 64 work-items, the smallest layers also by computing fewer outputs per
// work-item (its 1x1 1024 -> 2048 on 7x7: 4 x 1 outputs in 896 groups against 4 x 4 in 224, 0.206
// -> 0.071 ms). With these rules the whole of ResNet-50 ran 8.25 -> 3.74 ms on OpenCL; variants
// that also shrank staged groups (below) ran it in 3.58 with these counts, 4.30 with 64 work-items
// a unit and 5.17 with 2 groups a unit.
constexpr int64_t kItemsPerUnit = 128;
constexpr int64_t kGroupsPerUnit = 4;

// Trades the SIMT register tile for work-items (the columns first: the rows share each loaded
// weight; then rows down to 2), then the work-group's rows for work-groups. Not the groups of a
// nest that stages its operands in local memory: each group's staged tiles serve all its
// work-items, so smaller groups load more: BERT's 128 x 3072 x 768 products ran 0.10 ms in 16x16
// groups against 0.22 in 16x2 on OpenCL, and with its staged groups shrunk its encoder ran 19.5 ->
// 24.4 ms on Vulkan.
void fill_compute_units(const ContractionNest &n, Schedule &s, const Target &target, int d0,
                        int d1) {
  int64_t units = std::max(1, target.cores);
  auto few_items = [&] { return gpu_launch(n, s).active < kItemsPerUnit * units; };
  if (few_items() && d0 >= 0) s.tile_sizes[d0] = 1;
  if (few_items() && d1 >= 0) s.tile_sizes[d1] = std::min<int64_t>(2, s.tile_sizes[d1]);
  if (stageable(n)) return;
  while (gpu_launch(n, s).groups < kGroupsPerUnit * units && s.workgroup[1] > 1)
    s.workgroup[1] /= 2;
}

// Tiles of output index j under `s`.
int64_t ceil_tiles(const ContractionNest &n, const Schedule &s, int j) {
  int64_t t = std::max<int64_t>(1, s.tile_sizes[j]);
  return (n.indices[j].extent + t - 1) / t;
}

// An elementwise nest whose contiguous index is short (a zero-padded copy of an RGB image: 3
// channels) would make work-groups of that many work-items: a SIMT GPU runs a warp for each, and
// lavapipe a call of its shader function whose SIMD lanes are mostly empty (ResNet-50's stem copy,
// 229x229 groups of 3, took 3.8 ms there; in groups of 3x10, 2.3). Dimension 1 makes up the
// `want` work-items, in the size whose partial last group wastes least.
void fill_group_with_dimension_1(const ContractionNest &n, Schedule &s, int64_t want) {
  GpuLaunch l = gpu_launch(n, s);
  if (l.items[0] >= want || s.workgroup.empty()) return;
  int64_t per = want / l.items[0];
  s.workgroup.resize(2, 1);
  std::vector<int64_t> counts;  // the output tile loops' counts, dimension 0 last
  for (int j : s.loop_order)
    if (static_cast<size_t>(j) < n.outputs() && ceil_tiles(n, s, j) > 1)
      counts.push_back(ceil_tiles(n, s, j));
  if (counts.size() < 2) return;
  int64_t c = counts[counts.size() - 2];
  s.workgroup[1] = std::min(c, least_waste_tile(c, std::max<int64_t>(1, per / 2), per));
}

// lavapipe runs a subgroup's lanes along dimension 0 of the work-group alone: the output index
// other than `v` whose tiles fill `lanes` lanes twice or more (the most tiles among those), or -1.
// Not fewer: BERT's 12 attention products (12 heads, 8 tiles of 16 rows, 64 columns) took 14.5 ms
// together with 16 columns and the heads on dimension 0, 11.7 with 8 columns on it (Zen 4).
int lanes_from(const ContractionNest &n, const Schedule &s, int v, int64_t lanes) {
  int best = -1;
  for (size_t j = 0; j < n.outputs(); ++j)
    if (static_cast<int>(j) != v && ceil_tiles(n, s, j) >= 2 * lanes &&
        (best < 0 || ceil_tiles(n, s, j) > ceil_tiles(n, s, best)))
      best = static_cast<int>(j);
  return best;
}

// The share of a subgroup's lanes left idle where `items` work-items fill them in order.
double idle_lanes(int64_t items, int64_t lanes) {
  int64_t cover = (items + lanes - 1) / lanes * lanes;
  return double(cover - items) / double(cover);
}

// lavapipe runs each work-group whole on one of its threads, a thread per core: where groups of
// 64 work-items along dimension 0 would not spread evenly over the cores, the smaller size (32, 16
// or 8: whole subgroups of `lanes`) that leaves the busiest core fewer work-items, by a tenth or
// more. ResNet-50's kernels on 7x7 (a 3x3 convolution on 512 channels: 32 x 7 work-items in 7
// groups, 4 for one core and 3 for the other) ran 0.89 and 0.92 of their time together in groups
// of 8 and of 16 (Zen 4, per-kernel minima of 4 alternating profiles); MobileNetV2's 1x1
// convolution to 1280 channels on 7x7 0.85.
void even_out_groups(const ContractionNest &n, Schedule &s, const Target &target, int64_t lanes) {
  const int64_t cores = std::max(1, target.cores);
  auto busiest = [&](int64_t size) {
    Schedule t = s;
    t.workgroup[0] = size;
    GpuLaunch l = gpu_launch(n, t);
    return (l.groups + cores - 1) / cores * l.group_items();
  };
  for (int64_t size = s.workgroup[0] / 2; size >= lanes; size /= 2)
    if (busiest(size) * 10 <= busiest(s.workgroup[0]) * 9) s.workgroup[0] = size;
}

// A small image (7x7) whose one row tile already holds every row: where a work-item's slab of the
// weights (the reduction times its columns) is past L1, each of the image's other pixels'
// work-items streams the slab again, and lavapipe loads it lane by lane each time. The work-item
// then takes the whole image (49 rows: each loaded texel of weights serves 49 updates instead of 7,
// the accumulators spill, which costs little), where its columns still give each core two
// subgroups. ResNet-50's ten such kernels on 7x7 (512 to 2048 channels, slabs of 32-288 KB) ran
// 0.46-0.80 of their time, 47.7 -> 31.4 ms together (Zen 4, per-kernel minima of 4 alternating
// profiles). Taken everywhere a 7x7 or 8x8 image fits one tile, MobileNetV2's (10-20 tiles of
// columns, or slabs of 10-20 KB) ran 0.98-1.47x, Inception v3's on 8x8 (12-28 tiles) 0.79-1.11x;
// those keep their tiles.
void whole_small_image(const ContractionNest &n, Schedule &s, const Target &target, int row, int v,
                       int64_t lanes) {
  if (row < 0 || v < 0 || ceil_tiles(n, s, row) != 1 || !reused_along(n, v)) return;
  int other = -1;
  for (size_t j = 0; j < n.outputs(); ++j) {
    if (static_cast<int>(j) == v || static_cast<int>(j) == row || n.indices[j].extent == 1)
      continue;
    if (other >= 0 || n.indices[j].extent > 8 || !free_of_guards(n, j)) return;  // one, short
    other = static_cast<int>(j);
  }
  int64_t reduction = 1;
  for (size_t j = n.outputs(); j < n.indices.size(); ++j) reduction *= n.indices[j].extent;
  const int64_t slab =
      reduction * s.tile_sizes[v] * static_cast<int64_t>(tile::dtype_size(n.acc_type.dtype));
  const int64_t cores = std::max(1, target.cores);
  if (other >= 0 && slab >= (32 << 10) && ceil_tiles(n, s, v) >= 2 * cores * lanes)
    s.tile_sizes[other] = n.indices[other].extent;
}

}  // namespace

int64_t reduction_split(const ContractionNest &n, const Target &target) {
  size_t r = n.outputs();
  // Guards would make the reduction loop's bounds expressions, which GpuMapping cannot split.
  if (wide_vector_target(target) || target.cpu_invocations || n.indices.size() <= r ||
      n.agg == tile::AggOp::Assign || n.needs_written_flag() || n.empty || !n.guards.empty() ||
      !n.divisibility.empty())
    return 0;
  // One operand: the reductions of normalizations and softmax (a product's operands are reused
  // across outputs, which its tiles exploit).
  class Loads : public IRVisitor {
   public:
    int count = 0;
    using IRVisitor::visit;
    void visit(const Load *op) override {
      ++count;
      IRVisitor::visit(op);
    }
  } loads;
  loads.visit_expr(n.value);
  if (loads.count != 1) return 0;
  int64_t outputs = 1;
  for (size_t j = 0; j < r; ++j) outputs *= n.indices[j].extent;
  int64_t units = std::max(1, target.cores);
  if (outputs >= kItemsPerUnit * units) return 0;  // enough work-items without splitting
  // The outermost reduction loop is split: at least 4 of its iterations per work-item, no fewer
  // work-items than a subgroup (a warp) has lanes.
  int64_t e = n.indices[r].extent, t = 1;
  while (t * 2 <= std::min<int64_t>({256, target.max_workgroup_size, e / 4})) t *= 2;
  return t >= std::max(32, target.subgroup_size) ? t : 0;
}

bool stageable(const ContractionNest &n) {
  return n.indices.size() == n.outputs() + 1 && n.guards.empty() && n.divisibility.empty() &&
         !n.needs_written_flag() && n.agg != tile::AggOp::Assign && !n.empty;
}

double gpu_schedule_cost(const ContractionNest &n, const Schedule &s, const Target &target) {
  size_t r = n.outputs();
  bool wide = wide_vector_target(target);
  // Scalar registers per invocation: 64, more on lavapipe where the 16x16 tile is the model's
  // choice.
  int registers = wide ? (target.vector_bits >= 512 ? 32 : 16) : target.cpu_invocations ? 288 : 64;
  double points = 1, waste = 1, items = 1;
  int64_t rows = 1, cols = 1;
  for (size_t j = 0; j < r && j < s.tile_sizes.size(); ++j) {
    int64_t e = std::max<int64_t>(1, n.indices[j].extent),
            t = std::max<int64_t>(1, std::min(s.tile_sizes[j], e));
    points *= double(e);
    waste *= double(((e + t - 1) / t) * t) / double(e);
    items *= double((e + t - 1) / t);
    if (static_cast<int>(j) == s.vector_index)
      cols = t / std::max(1, s.vector_width);
    else
      rows *= t;
  }
  if (s.vector_index < 0) cols = 1;
  // Loads per multiply-add of the inner loop: one per row (broadcast) and one per vector column.
  double intensity = double(rows * cols) / double(rows + cols);
  double vector = std::max(1, s.vector_width);
  bool spills = rows * cols + cols + 1 > registers;
  double per_point = 1.0 / (intensity * vector) * (spills ? 4.0 : 1.0);
  int64_t group = 1;
  for (int64_t w : s.workgroup) group *= std::max<int64_t>(1, w);
  if (group > target.max_workgroup_size) return 1e30;
  double units = std::max(1, target.cores), busy;
  if (!wide && !target.cpu_invocations) {
    // A SIMT GPU: idle work-items of partial groups count as waste, and the launch is busy in
    // proportion to how far it reaches what fill_compute_units asks for.
    GpuLaunch l = gpu_launch(n, s);
    waste *= double(l.groups * l.group_items()) / double(std::max<int64_t>(1, l.active));
    busy = std::min(1.0, double(l.active) / double(kItemsPerUnit * units));
    if (!stageable(n)) busy *= std::min(1.0, double(l.groups) / double(kGroupsPerUnit * units));
  } else {
    busy = std::min(1.0, std::max(1.0, items / double(group)) / units);
  }
  // Local memory saves a SIMT GPU's global loads; PoCL emulates it in global memory (a copy).
  double staging = !s.use_local_memory ? 1.0 : wide ? 1.5 : 0.5;
  // A panel (chosen only where its operand does not stay in L1) reads it from L1 instead of
  // streaming it: SGEMM 1024 on PoCL ran about twice as fast.
  if (s.tiles_per_item > 1) staging *= 0.5;
  return points * waste * per_point * staging / busy;
}

bool wide_vector_target(const Target &target) { return target.vector_bits >= 128; }

namespace {

// A panel below this stays in L1 as it is (half of a 32 KB L1: the rows share it).
constexpr int64_t kPanelMinBytes = 16 << 10;
// Rows per work-item's chunk: the copy costs one pass over the panel, so more rows dilute it;
// SGEMM 1024 on PoCL ran alike with 128 to 512.
constexpr int64_t kPanelRows = 256;

}  // namespace

int64_t panel_tiles_per_item(const ContractionNest &n, const Schedule &s, const Target &target) {
  int row = gpu_panel_row(n, s);
  if (!wide_vector_target(target) || row < 0) return 1;
  int v = s.vector_index;
  int64_t T = std::min(s.tile_sizes[v], n.indices[v].extent), e = n.indices[row].extent;
  int64_t rows = std::clamp<int64_t>(s.tile_sizes[row], 1, e);
  if (e % rows != 0) return 1;
  auto panel =
      tile_panel(n, s, "#blk", [](int64_t bytes, int64_t) { return bytes <= kMaxPanelBytes; });
  if (!panel ||
      panel->size * static_cast<int64_t>(tile::dtype_size(panel->type.dtype)) < kPanelMinBytes)
    return 1;
  // A work-item's chunk runs over row tiles or, where one tile holds every row, over the points
  // of the next output index (gpu_panel_chunk).
  int chunk = gpu_panel_chunk(n, s, row);
  if (chunk < 0) return 1;
  int64_t per_step = chunk == row ? rows : e,
          steps = chunk == row ? e / rows : n.indices[chunk].extent;
  int64_t others = n.indices[v].extent / T;  // work-items besides the chunks
  for (size_t j = 0; j < n.outputs(); ++j)
    if (static_cast<int>(j) != v && static_cast<int>(j) != row && static_cast<int>(j) != chunk)
      others *= n.indices[j].extent;
  for (int64_t R = std::min(steps, std::max<int64_t>(1, kPanelRows / per_step)); R >= 2; --R)
    if (steps % R == 0 && others * (steps / R) >= 4 * target.cores) return R;
  return 1;
}

Schedule choose_gpu_schedule(const ContractionNest &n, const Target &target) {
  Schedule s;
  size_t k = n.indices.size(), r = n.outputs();
  s.tile_sizes.assign(k, 1);
  for (size_t j = 0; j < k; ++j) s.loop_order.push_back(static_cast<int>(j));
  int64_t max_items = std::max(1, target.max_workgroup_size);
  bool any_output = false;
  for (size_t j = 0; j < r; ++j) any_output |= n.indices[j].extent > 1;
  if (!any_output || n.empty) {
    s.workgroup = {std::min<int64_t>(64, max_items)};  // a full reduction: one group splits it
    return s;
  }
  bool wide = wide_vector_target(target);
  bool reduces = k > r;
  bool big_tile = !wide && target.cpu_invocations;
  int64_t lanes = std::max(1, target.subgroup_size);
  int lanes_index = -1;  // on lavapipe, the output index that fills the subgroup's lanes

  // The contiguous output index, vectorized with the widest width dividing its extent.
  int v = -1;
  for (size_t j = r; j-- > 0;)
    if (n.indices[j].extent > 1) {
      v = static_cast<int>(j);
      break;
    }
  int bytes = static_cast<int>(tile::dtype_size(n.acc_type.dtype));
  int width = wide ? std::max(1, target.vector_bits / (8 * bytes)) : 1;
  if (v >= 0 && free_of_guards(n, v) && !n.needs_written_flag() && has_vectors(n.acc_type.dtype))
    while (width > 1 && n.indices[v].extent % width != 0) width /= 2;
  else
    width = 1;
  if (width > 1) {
    s.vector_index = v;
    s.vector_width = width;
    s.tile_sizes[v] = width;
  }

  if (!reduces) {
    // Elementwise: a few vectors per work-item, the contiguous index on dimension 0.
    if (width > 1) {
      int64_t per = n.indices[v].extent / width;
      int u = per % 4 == 0 ? 4 : per % 2 == 0 ? 2 : 1;
      s.tile_sizes[v] = width * u;
      s.unroll = u;
    } else if (big_tile && v >= 0) {
      // lavapipe: a work-item takes a texel of the contiguous index (its loads of float32 inputs
      // one fetch, GlslSource.h), or the whole index where it is shorter than a subgroup (a padded
      // RGB image's 4 channels: the pixels fill the lanes instead of 4 of 8). ResNet-50's 16
      // padded copies ran 9.1 -> 4.9 ms, MobileNetV2's copy of its 4-channel image 1.75 -> 0.61
      // and BERT-base's 100 elementwise kernels 75.2 -> 36.9 on vulkan:0 (Zen 4, per-kernel
      // minima of 3 alternating profiles).
      int64_t e = n.indices[v].extent;
      if (e < lanes)
        s.tile_sizes[v] = e;
      else if (e % 4 == 0 && e / 4 >= lanes)
        s.tile_sizes[v] = 4;
    }
    s.workgroup = {std::min<int64_t>(wide ? 16 : 64, max_items), 1};
    if (!wide) fill_group_with_dimension_1(n, s, s.workgroup[0]);
    return s;
  }

  // Rows: the longest other output index free of guards or, on a wide target where each loaded
  // row value serves a whole row of the tile (an operand without the column index: a
  // convolution's input) or a loaded vector serves every row (an operand without the row index: a
  // depthwise convolution's weights), one that a guard bounds (padding); the guard then stays a
  // condition per row of the tile, which finish_kernel unswitches out of the taps' loops. PoCL ran
  // ResNet-50's 3x3 convolutions on 14x14x256 3x faster with 7 such rows than with one (11 -> 3.7
  // ms). MobileNetV2's 17 depthwise ones (Zen 4) ran as fast with rows as with one while the
  // guards stayed in their 3-tap loops, faster on small images and slower on 56x56 and 112x112;
  // unswitched across the taps' nest, all of them 0.77 -> 0.60 ms against that mix. Pools, whose
  // one operand has every index, ran slower with rows (Inception v3's nine 0.61 -> 0.85 ms).
  // Elsewhere guarded rows lost: lavapipe took 85 ms for that convolution with 14 of them against
  // 22 with none, and on an H200 4 guarded rows per work-item made ResNet-50 1.7x (OpenCL) and
  // 1.9x (Vulkan) slower, VGG16 2.1x and 1.7x.
  //
  // On a wide target, of indices equally long, one free of guards and then the innermost: PoCL
  // runs a group's work-items in a loop on one core, so with the rows along an image's columns a
  // group writes and reads neighbouring pixels where along its rows it touched every row of the
  // image (MobileNetV2's 1x1 convolution on 112x112x16 -> 96: 474 -> 339 us); a 1x7 convolution
  // keeps its rows along the unguarded index.
  bool guarded_rows = wide && v >= 0 && reused_along(n, v);
  auto may_tile = [&](size_t j) {
    return free_of_guards(n, j) || guarded_rows || (wide && v >= 0 && reused_along(n, j));
  };
  int row = -1;
  auto longer = [&](int j) {
    if (row < 0 || n.indices[j].extent != n.indices[row].extent)
      return row < 0 || n.indices[j].extent > n.indices[row].extent;
    if (!wide) return false;
    return free_of_guards(n, j) || !free_of_guards(n, row);  // j is the later index
  };
  for (size_t j = 0; j < r; ++j)
    if (static_cast<int>(j) != v && may_tile(j) && n.indices[j].extent > 1 &&
        longer(static_cast<int>(j)))
      row = static_cast<int>(j);

  if (wide) {
    // Register tile: rows x vecs explicit vectors (8 x 2 x float16 measured best on PoCL with
    // AVX-512: 16 accumulators, 2 operand vectors and a broadcast in 32 registers).
    int registers = target.vector_bits >= 512 ? 32 : 16;
    // An odd vector count that 3 divides (144 channels: 9 of 16 lanes; 24: 3 of 8) takes 3 vectors
    // instead of 1 where 32 registers hold 8 rows of 3: with 8 accumulators every FMA waited on
    // its broadcast. MobileNetV2's six such convolutions on PoCL 1.01 -> 0.69 ms together (each
    // 0.63-0.79 of its time), Inception v3's three on 48 channels 0.48 -> 0.42 (Intel kind,
    // per-kernel minima of 6 and 8 alternating profiles; the tuner had picked 3 vectors for one).
    // Even counts keep 2: with 3 also where 3 divides them, MobileNetV2's 31 others ran level
    // together (0.82-1.24 each).
    int vecs = 1;
    if (width > 1) {
      int64_t per = n.indices[v].extent / width;
      vecs = per % 2 == 0 ? 2 : per % 3 == 0 && registers >= 32 ? 3 : 1;
      s.tile_sizes[v] = width * vecs, s.unroll = vecs;
    }
    if (row >= 0) {
      int64_t max_rows = std::max(1, std::min(8, (registers - vecs - 2) / vecs));
      int64_t e = n.indices[row].extent;
      int64_t t = divisor_in(e, std::max<int64_t>(1, max_rows / 2), max_rows);
      s.tile_sizes[row] = t ? t : std::min(max_rows, e);
    }
  } else if (big_tile) {
    // lavapipe (Vulkan on the CPU): a large scalar register tile per invocation (each loaded value
    // used 16 times), the work-group spanning the contiguous index alone. Loads decide llvmpipe's
    // speed: it loads storage buffers lane by lane (uniform or not), so the GLSL backend reads
    // float32 inputs by texels of four where tiles of 4 align them (GlslSource.h), and the fewer
    // fetches per FMA the better while spilled accumulators cost little. SGEMM 1024 on lavapipe,
    // Sapphire Rapids, in GFLOP per CPU-second with the FMA roofline at 42-48: by texels 16x8
    // 23-30, 16x16 26-29, 8x16 20-25, 8x8 16-24, 4x4 10, work-groups of 8 to 64 alike; without the
    // fetches 42; by storage-buffer loads about 5. On an AVX2 EPYC (Zen 3), as a share of the
    // roofline measured just before: 16x8 0.26-0.36, 16x16 0.46-0.49, 16x16 with eight updates of
    // an accumulator in a row (AlignedLoads.h) 0.52-0.56; 32x16 and 16x32 lower (0.40-0.45). Fewer
    // columns where 16 would not divide the extent or would leave fewer work-items than a subgroup
    // has lanes: llvmpipe runs a subgroup's lanes as one SIMD vector, empty or not (Xception's
    // 37x37x64 Winograd product took twice as long with 4 work-items of 16 columns as with 8 of 8).
    // Not below 4, the texel.
    const int64_t rows = 16;
    if (row >= 0) {
      int64_t e = n.indices[row].extent;
      s.tile_sizes[row] =
          std::min(least_waste_tile(e, rows / 2, rows), e);  // a divisor wastes none
    }
    if (v >= 0 && free_of_guards(n, v)) {
      int64_t e = n.indices[v].extent, cols = 16;
      while (cols > 4 && (e % cols != 0 || e / cols < lanes)) cols /= 2;
      // Fewer than 64 columns (16 or 32 channels) would leave 4 columns a work-item, the texel:
      // there another output index with enough tiles takes dimension 0 (lanes_from, below) and
      // the work-item keeps 16 columns. The tuner's picks for MobileNetV2 on lavapipe (Zen 4) did
      // so: its stem (32 channels) 7.1 -> 3.6 ms, a 1x1 projection to 16 channels 1.9 -> 0.7.
      // With 64 or 96 channels (8 columns) the swap won on ResNet-50's stem (17.2 -> 12.0 ms)
      // but lost on Inception v3's 35x35 convolutions (4.6 -> 5.5 ms each: 35 columns leave 5
      // of 40 lanes idle) and, by 1-6%, on ResNet-50's 56x56 ones on 64 channels, so those keep
      // their columns on dimension 0. A stem on an image's colour channels (its innermost
      // reduction index shorter than a texel; not a pool or a depthwise convolution, whose input
      // has the channels too) swaps where the other index's tiles fill whole subgroups:
      // ResNet-50's 7x7 one on 112x112x64 16.6 -> 10.9 ms (Zen 4, per-kernel minima of 4
      // alternating profiles).
      int a = cols == 4 ? lanes_from(n, s, v, lanes) : -1;
      if (cols == 8 && n.indices.size() > n.outputs() && n.indices.back().extent < 4 &&
          reused_along(n, v)) {
        int b = lanes_from(n, s, v, lanes);
        if (b >= 0 && ceil_tiles(n, s, b) % lanes == 0) a = b;
      }
      if (a >= 0) {
        cols = 16;
        while (cols > 4 && e % cols != 0) cols /= 2;
        if ((e + cols - 1) / cols < lanes) lanes_index = a;
      }
      s.tile_sizes[v] = std::min(cols, e);
      // Where the columns' work-items leave a quarter of the lanes idle or more (144 channels: 9
      // work-items of 16, 7 of 16 lanes idle; 12 work-items, 4 idle), another index that idles
      // less than half that share takes dimension 0. On lavapipe (Zen 4), minima of 3 profiles
      // each way: MobileNetV2's four 144-channel depthwise convolutions 8.77 -> 6.36 ms together,
      // its two of 96 channels (12 work-items of 8) 6.55 -> 5.27, Inception v3's 3x3 to 192
      // channels on 71x71 35.6 -> 26.9. Its 35x35 convolutions (12 work-items; 35 pixels leave 5 of
      // 40 lanes idle) lost with the swap (stop 46) and keep their columns.
      int b = lanes_index < 0 ? lanes_from(n, s, v, lanes) : -1;
      double idle = idle_lanes(ceil_tiles(n, s, v), lanes);
      if (b >= 0 && idle >= 0.25 && idle_lanes(ceil_tiles(n, s, b), lanes) * 2 < idle)
        lanes_index = b;
      if (lanes_index < 0) whole_small_image(n, s, target, row, v, lanes);
    }
  } else {
    // SIMT: 4x4 scalar accumulators per work-item where operands are reused along both, fewer
    // where that leaves compute units idle.
    if (v >= 0 && free_of_guards(n, v) && reused_along(n, v))
      s.tile_sizes[v] = std::min<int64_t>(4, n.indices[v].extent);
    if (row >= 0 && reused_along(n, row))
      s.tile_sizes[row] = std::min<int64_t>(4, n.indices[row].extent);
  }

  // Loop order: the other outputs (folded into dimension 2), the vector index (dimension 1 on
  // wide targets), the rows (dimension 0: neighbouring groups share one panel of the vector
  // operand), then the reductions. SIMT targets put the contiguous index on dimension 0 instead
  // (coalesced accesses).
  int d0 = wide ? row : v, d1 = wide ? v : row;
  auto order = [&] {
    s.loop_order.clear();
    for (size_t j = 0; j < r; ++j)
      if (static_cast<int>(j) != d0 && static_cast<int>(j) != d1)
        s.loop_order.push_back(static_cast<int>(j));
    if (d1 >= 0) s.loop_order.push_back(d1);
    if (d0 >= 0) s.loop_order.push_back(d0);
    for (size_t j = r; j < k; ++j) s.loop_order.push_back(static_cast<int>(j));
  };
  order();
  if (wide) {
    s.workgroup = {std::min<int64_t>(16, max_items), 1};
    s.tiles_per_item = panel_tiles_per_item(n, s, target);
    // Where one register tile holds every row (a 7x7 image) and no panel serves the work-item,
    // the next output index takes dimension 0 from the vector index: a group's work-items then
    // share one vector tile of the weights, which PoCL's core keeps in L2 from one item to the
    // next. With the vector tiles on dimension 0, each group streamed 8 tiles' weights, and every
    // column's group again (ResNet-50's 3x3 convolutions on 7x7x512: 9.4 MB of weights, 7 times).
    if (s.tiles_per_item == 1 && row >= 0 && v >= 0 && s.tile_sizes[row] >= n.indices[row].extent) {
      int next = -1;
      for (size_t j = 0; j < r; ++j)
        if (static_cast<int>(j) != v && static_cast<int>(j) != row && n.indices[j].extent > 1 &&
            (next < 0 || n.indices[j].extent > n.indices[next].extent))
          next = static_cast<int>(j);
      if (next >= 0) d0 = next, order();
    }
    // PoCL runs a work-group's items in a loop on one core: where groups of 16 would not spread
    // evenly over the cores, the size (16, 8, 4, 2 or 1) that leaves the busiest core the fewest
    // items, by a tenth or more (MobileNetV2's 7x7 1x1 convolutions: 40 work-items in groups of
    // 16 put 32 on one core and 8 on the other; in groups of 4, 20 and 20).
    int64_t items_total = 1;
    for (size_t j = 0; j < r; ++j)
      items_total *= (n.indices[j].extent + s.tile_sizes[j] - 1) / s.tile_sizes[j];
    items_total = std::max<int64_t>(1, items_total / s.tiles_per_item);
    auto busiest = [&](int64_t wg) {
      int64_t groups = (items_total + wg - 1) / wg, cores = std::max(1, target.cores);
      return (groups + cores - 1) / cores * std::min(wg, items_total);
    };
    for (int64_t wg = s.workgroup[0] / 2; wg >= 1; wg /= 2)
      if (busiest(wg) * 10 <= busiest(s.workgroup[0]) * 9) s.workgroup[0] = wg;
  } else if (big_tile) {
    s.workgroup = {std::min<int64_t>(64, max_items), 1};
    even_out_groups(n, s, target, lanes);
    if (lanes_index >= 0) {  // the lanes along another output index (above)
      d0 = lanes_index, d1 = v;
      order();
      s.workgroup = {lanes, std::max<int64_t>(1, std::min<int64_t>(64, max_items) / lanes)};
      // The columns' tiles on dimension 1 in the size whose last group is least empty (9: 5).
      int64_t tiles = ceil_tiles(n, s, v);
      if (tiles > s.workgroup[1])
        s.workgroup[1] =
            least_waste_tile(tiles, std::max<int64_t>(1, s.workgroup[1] / 2), s.workgroup[1]);
    }
  } else if (int64_t t = reduction_split(n, target)) {
    for (size_t j = 0; j < r; ++j) s.tile_sizes[j] = 1;
    s.workgroup = {t};
    s.split_reduction = true;
    return s;
  } else {
    s.workgroup = {std::min<int64_t>(16, max_items),
                   std::min<int64_t>(16, std::max<int64_t>(1, max_items / 16))};
    fill_compute_units(n, s, target, d0, d1);
  }
  // SIMT GPUs stage operand tiles in local memory (chunks of up to 16 reduction steps of both
  // operands' block tiles) when the nest allows it (GpuMapping.h) and they fit.
  if (!wide && !big_tile && stageable(n)) {
    int64_t block = 0;
    for (int j : {d0, d1})
      if (j >= 0) block += s.tile_sizes[j] * (j == d0 ? s.workgroup[0] : s.workgroup[1]);
    s.use_local_memory = 16 * block * bytes <= target.local_memory_bytes;
  }
  return s;
}

}  // namespace tessera::compiler
