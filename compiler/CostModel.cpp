#include "compiler/CostModel.h"

#include <algorithm>
#include <optional>

#include "compiler/GpuCostModel.h"
#include "compiler/Panel.h"
#include "compiler/SplitBorders.h"

namespace tessera::compiler {

namespace {

// The ways of the L1 data cache of the CPUs measured (Zen 3 and Zen 4: 8; Sapphire Rapids has 12).
constexpr int64_t kL1Ways = 8;

// The index that walks the output contiguously: the last output dimension with extent > 1.
int contiguous_output(const ContractionNest &n) {
  for (size_t j = n.outputs(); j-- > 0;)
    if (n.indices[j].extent > 1) return static_cast<int>(j);
  return -1;
}

// Points of the reduction: the rows of a vector tile's panel.
int64_t reduction_points(const ContractionNest &n) {
  int64_t points = 1;
  for (size_t j = n.outputs(); j < n.indices.size(); ++j) points *= n.indices[j].extent;
  return points;
}

int64_t tile_count(const ContractionNest &n, const Schedule &s, int j) {
  return (n.indices[j].extent + s.tile_sizes[j] - 1) / s.tile_sizes[j];
}

// The outermost iterating tile loop is the parallel one: when it has too few iterations to keep
// every core busy (a unit batch, a single vector tile), the output tile loop with the most
// iterations goes outermost instead.
void prefer_parallel_outer(const ContractionNest &n, Schedule &s, const Target &target) {
  if (target.cores < 2) return;
  std::vector<int> outs;
  for (int j : s.loop_order)
    if (n.indices[j].output) outs.push_back(j);
  int first = outermost_tile_loop(n, s), best = -1;
  for (int j : outs)
    if (best < 0 || tile_count(n, s, j) > tile_count(n, s, best)) best = j;
  if (first < 0 || tile_count(n, s, first) >= 2 * target.cores || best == first) return;
  auto it = std::find(s.loop_order.begin(), s.loop_order.end(), best);
  s.loop_order.erase(it);
  s.loop_order.insert(s.loop_order.begin(), best);
}

// The weights of a contraction with vector index `v`: its first packable load (read only along
// `v` and reduction indices), and that operand's bytes over the whole vector index.
struct Weights {
  const Load *load = nullptr;
  int64_t bytes = 0;
};
std::optional<Weights> weights_of(const ContractionNest &n, int v) {
  if (v < 0 || n.indices.size() == n.outputs()) return std::nullopt;
  std::vector<int> reds;
  for (size_t j = n.outputs(); j < n.indices.size(); ++j) reds.push_back(static_cast<int>(j));
  auto loads = packable_loads(n, v, reds);
  if (loads.empty()) return std::nullopt;
  const Packable &p = loads.front();
  int64_t bytes = n.indices[v].extent * static_cast<int64_t>(tile::dtype_size(p.load->type.dtype));
  for (int j : p.mine) bytes *= n.indices[j].extent;
  return Weights{p.load, bytes};
}

// The batch of a batched product (attention's heads): an output index other than `v`, of more
// than one point, that every operand reads; -1 where none.
int batch_index(const ContractionNest &n, int v) {
  for (size_t j = 0; j < n.outputs(); ++j)
    if (static_cast<int>(j) != v && n.indices[j].extent > 1 &&
        every_load_reads(n, n.indices[j].name))
      return static_cast<int>(j);
  return -1;
}

// Whether `count` tiles give every core as many as the others, or enough that one more matters
// little.
bool splits_evenly(int64_t count, const Target &target) {
  return count >= target.cores && (count % target.cores == 0 || count >= 4 * target.cores);
}

}  // namespace

int outermost_tile_loop(const ContractionNest &n, const Schedule &s) {
  for (int j : s.loop_order)
    if (n.indices[j].output && tile_count(n, s, j) > 1) return j;
  return -1;
}

bool activations_outgrow_l2(const ContractionNest &n, int v, const Target &target) {
  auto w = weights_of(n, v);
  return w && w->bytes <= target.l2_bytes / 2 &&
         operand_span_bytes(n, w->load->buffer) > target.l2_bytes / 2;
}

bool weights_outgrow_l2(const ContractionNest &n, int v, const Target &target) {
  auto w = weights_of(n, v);
  return w && w->bytes > target.l2_bytes / 2 && w->bytes > operand_span_bytes(n, w->load->buffer);
}

Schedule in_network_order(const ContractionNest &n, const Schedule &s, const Target &target) {
  int v = s.vector_index;
  if (target.backend != "llvm" || target.cores < 2 || !s.workgroup.empty() ||
      s.parallel_loops < 1 || v < 0 || n.indices.size() == n.outputs() || n.empty)
    return s;
  // A batched product splits its batch: each core reads only its own slices of both operands, and
  // the kernels around it, which split the same tensors by the same index (attention's heads:
  // the keys' transpose, the softmax), wrote them on that core. Split by rows, every core reads
  // all of the other operand, half of it from the other core's cache: BERT's attention products
  // ran 0.167 -> 0.138 ms and 0.188 -> 0.143 ms a layer in the network split by heads (Intel kind).
  int b = batch_index(n, v);
  if (b >= 0 && outermost_tile_loop(n, s) != b && splits_evenly(tile_count(n, s, b), target)) {
    Schedule batched = s;
    batched.loop_order.erase(std::find(batched.loop_order.begin(), batched.loop_order.end(), b));
    batched.loop_order.insert(batched.loop_order.begin(), b);
    return batched;
  }
  auto w = weights_of(n, v);
  if (outermost_tile_loop(n, s) != v || !w) return s;
  int64_t out_bytes = static_cast<int64_t>(tile::dtype_size(n.result_type.dtype));
  for (size_t j = 0; j < n.outputs(); ++j) out_bytes *= n.indices[j].extent;
  // Per image (the leading output index): every core reads all the weights once per image it
  // computes. ResNet-50 b8's 3x3 convolutions on 28x28x128 (0.8 MB of activations an image, 0.6 MB
  // of weights) ran 5.7 -> 6.8-7.6 ms split by images, its 1x1 64 -> 256 on 56x56 (4 MB, 64 KB)
  // 4.3-7.3 -> 3.0-5.5 ms (two runs, Intel kind).
  int64_t images = std::max<int64_t>(1, n.indices[0].extent);
  if ((operand_span_bytes(n, w->load->buffer) + out_bytes) / images <= 2 * w->bytes) return s;
  Schedule rows = s;
  activations_first(n, v, rows);
  int lead = outermost_tile_loop(n, rows);
  // Every core its share of the rows.
  int64_t count = lead < 0 || lead == v ? 0 : tile_count(n, rows, lead);
  return splits_evenly(count, target) ? rows : s;
}

void activations_first(const ContractionNest &n, int v, Schedule &s) {
  s.loop_order.clear();
  for (size_t j = 0; j < n.outputs(); ++j)
    if (static_cast<int>(j) != v) s.loop_order.push_back(static_cast<int>(j));
  s.loop_order.push_back(v);
  for (size_t j = n.outputs(); j < n.indices.size(); ++j)
    s.loop_order.push_back(static_cast<int>(j));
}

Schedule choose_schedule(const ContractionNest &whole, const Target &target) {
  if (target.backend == "opencl" || target.backend == "vulkan")
    return choose_gpu_schedule(whole, target);
  // apply_schedule runs this schedule on the unguarded interior of a padded contraction (its
  // borders adapt it), so the interior is what is scheduled.
  const ContractionNest n = split_borders(whole)[0];
  Schedule s;
  size_t k = n.indices.size(), r = n.outputs();
  s.tile_sizes.assign(k, 1);
  for (size_t j = 0; j < k; ++j) s.loop_order.push_back(static_cast<int>(j));
  s.parallel_loops = r > 0 && target.cores > 1 ? 1 : 0;
  if (r == 0 || n.empty) return s;

  int bytes = static_cast<int>(tile::dtype_size(n.acc_type.dtype));
  bool reduces = k > r;
  int v = contiguous_output(n);
  // The widest vector whose lanes divide the contiguous extent: 728 channels (Xception) take
  // 8-lane vectors where 16 lanes would leave the kernel scalar.
  int width = std::max(1, target.vector_bits / (8 * bytes));
  while (v >= 0 && width > 2 && n.indices[v].extent % width != 0) width /= 2;
  bool vectorizable = v >= 0 && width > 1 && n.indices[v].extent % width == 0 && n.guard_free(v) &&
                      !n.needs_written_flag() && n.acc_type.dtype != tile::DType::Bool;
  if (vectorizable) {
    s.vector_index = v;
    s.vector_width = width;
    s.tile_sizes[v] = width;
  }
  if (!reduces || !vectorizable) {
    // Elementwise: a few vectors per innermost iteration; the outermost loop spreads across cores.
    // A transposing copy gathers each vector from as many rows of its input, and the next vector
    // of the output row takes the next element of the same rows: one vector per iteration, its
    // output row innermost, so that consecutive gathers read the same cache lines. With the output
    // rows outside the vector tiles, the rows one gather touches a whole input row apart fall into
    // a few L1 sets and are evicted before the next: BERT's keys' transpose (12 heads of 64 x 128
    // from 128 x 768) took 1.00 -> 0.45 ms a run in the network (Intel kind).
    int neighbour = vectorizable && gathers_along(n, v) ? gather_neighbour(n, v) : -1;
    if (neighbour >= 0) {
      s.loop_order.clear();
      for (size_t j = 0; j < k; ++j)
        if (static_cast<int>(j) != neighbour) s.loop_order.push_back(static_cast<int>(j));
      s.loop_order.push_back(neighbour);
      return s;
    }
    if (vectorizable) {
      int64_t per = n.indices[v].extent / width;
      int u = per % 4 == 0 ? 4 : per % 2 == 0 ? 2 : 1;
      s.tile_sizes[v] = width * u;
      s.unroll = u;
    }
    return s;
  }

  // Rows: the longest other guard-free output index.
  int row = -1;
  for (size_t j = 0; j < r; ++j)
    if (static_cast<int>(j) != v && n.guard_free(j) &&
        (row < 0 || n.indices[j].extent > n.indices[row].extent))
      row = static_cast<int>(j);
  // Every vector a gather (a softmax's max or sum over the contiguous last axis, vectorized over
  // the rows): no operand is shared between the rows of a register tile, so a GEMM's tile only
  // adds gathers. One vector per row and a few rows, rows outermost: enough independent
  // accumulators. Tuned over 40-60 schedules on the Intel kind, BERT's softmax max (12x128x128)
  // ran 4.7x faster as 6 rows of one vector than as the GEMM tile of 5 rows of 4; 2.7-4.7x on three
  // other shapes, every winner one vector wide.
  if (row >= 0 && n.indices[row].extent > 1 && gathers_along(n, v)) {
    int64_t e = n.indices[row].extent, rows = std::min<int64_t>(6, e);
    for (int64_t t = rows; t >= 3; --t)
      if (e % t == 0) {
        rows = t;
        break;
      }
    s.tile_sizes[row] = rows;
    s.loop_order.clear();
    s.loop_order.push_back(row);
    s.loop_order.push_back(v);
    for (size_t j = 0; j < k; ++j)
      if (static_cast<int>(j) != row && static_cast<int>(j) != v)
        s.loop_order.push_back(static_cast<int>(j));
    prefer_parallel_outer(n, s, target);
    return s;
  }
  // Register blocking: rows x vectors accumulators, bounded by the register file (32 vector
  // registers with AVX-512, 16 below): leave room for the B vectors and one broadcast.
  int registers = target.vector_bits >= 512 ? 32 : 16;
  // The most rows a tile of `w` vectors can have.
  auto rows_for = [&](int w) { return (registers - w - 2) / w; };
  int64_t per = n.indices[v].extent / width;
  int vecs = per % 3 == 0 && registers >= 32 ? 3 : per % 2 == 0 ? 2 : 1;
  // A vector count that neither 2 nor 3 divides (80 channels: 5 of 16 lanes) takes its largest
  // divisor that leaves the tile two rows (AVX-512: up to 10; none with 16 registers): one vector
  // wide, every FMA waits on its own broadcast. Inception v3's 1x1 64 -> 80 convolution on 73x73,
  // weights compiled in, in a network of its own on the Intel kind: 6 rows of 1 vector 0.29 ms, 5
  // rows of 5 vectors 0.19 (11 rows of 1 vector, the tuner's pick alone, 0.24 there). Not where one
  // vector's tile would hold every row and the wider one would not: the weights would be read once
  // per row tile instead of once (MobileNetV2 b8's 8 x 1280 x 1000 dense layer: 0.30 -> 0.33 ms
  // with 4 rows of 5 vectors).
  int64_t row_extent = row >= 0 ? n.indices[row].extent : 1;
  for (int d = (registers - 2) / 3; vecs == 1 && per % 3 != 0 && d >= 2; --d)
    if (per % d == 0 && (row_extent <= rows_for(d) || row_extent > rows_for(1))) vecs = d;
  s.tile_sizes[v] = width * vecs;
  s.unroll = vecs;
  if (row >= 0) {
    int max_rows = std::max(1, rows_for(vecs));
    int64_t e = n.indices[row].extent;
    int64_t best = 1;
    for (int64_t t = std::min<int64_t>(max_rows, e); t >= 1; --t)
      if (e % t == 0) {
        best = t;
        break;
      }
    // A row count that leaves most registers idle is worse than a tail.
    if (best * 2 <= max_rows && e > max_rows) best = std::min<int64_t>(max_rows, 6);
    s.tile_sizes[row] = best;
    // A short row index (the 5-row interior of a 7x7 image) leaves them idle too: wider vector
    // tiles use them instead (ResNet's 3x3 on 7x7x512: 5x4 vectors ran about 1.1x faster than 5x2).
    for (int w : {4, 3})
      if (e <= max_rows && w > vecs && per % w == 0 && best * w + w + 2 <= registers) {
        vecs = w;
        s.tile_sizes[v] = width * vecs;
        s.unroll = vecs;
        break;
      }
    // Rows that divide the extent but fall short of the register file (128 rows take 4 of 6
    // with two vectors) take a third vector where it divides: the FMAs read the B vectors from
    // memory, so 12 accumulators and a broadcast fit 16 registers (BERT's 128x768x3072 product
    // with GELU on an AVX2 EPYC: 5.45 -> 4.95 ms in the network). Not where the wider panel would
    // leave L2 (the loop order below would change: BERT's 128x3072x768 product, 4.5 -> 4.8 ms).
    if (vecs == 2 && best < max_rows && per % 3 == 0 && best * 3 + 2 <= registers &&
        reduction_points(n) * width * 3 * bytes <= target.l2_bytes / 2) {
      vecs = 3;
      s.tile_sizes[v] = width * vecs;
      s.unroll = vecs;
    }
    // The innermost output index as long as the rows' (the pixels of one image row) where its
    // own steps spread over L1's sets and no window strides along it: where the rules below move
    // the rows.
    auto pixels = [&] {
      for (size_t j = r; j-- > static_cast<size_t>(row) + 1;)
        if (static_cast<int>(j) != v && n.guard_free(j) && n.indices[j].extent == e &&
            !steps_alias_in_l1(n, static_cast<int>(j)) &&
            !strided_window_along(n, static_cast<int>(j)))
          return static_cast<int>(j);
      return -1;
    };
    auto move_rows_to = [&](int along) {
      s.tile_sizes[along] = s.tile_sizes[row];
      s.tile_sizes[row] = 1;
      row = along;
    };
    // AVX2's tiles of 2 vectors have at most 6 rows: a tail of at least half a tile costs less than
    // the tiles a smaller divisor adds (28 pixels: 4 tiles of 6 and one of 4 against 7 of 4), and
    // the 6 rows go along the pixels, one run of adjacent pixels where 6 image rows would be 6
    // streams. Zen 4 with AVX2 code (TESSERA_CPU=x86-64-v3), weights compiled in, per-kernel minima
    // of 4-5 alternating profiles: ResNet-50's nine such convolutions on 28x28 images 5.05 -> 4.63
    // ms (0.85-0.95 each but one at 1.02); Inception v3's max pool into 35x35 (rows on their
    // index: a pool shares no operand along them) 0.76, its thirteen convolutions on 35x35 level
    // (0.98-1.08); MobileNetV2's four on 28x28 and 112x112 level. Not where a tail would be short:
    // 56 pixels as 9 tiles of 6 and one of 2 (ResNet-50's 1x1 convolutions on 56x56, 1.11-1.17x
    // longer); their 4 rows along the pixels measured level. 6 rows along the pixels was the
    // tuner's pick on most of ResNet-50's convolutions.
    if (registers == 16 && vecs == 2 && best < max_rows && e > max_rows &&
        e % max_rows >= (max_rows + 1) / 2 && (e + max_rows - 1) / max_rows < e / best) {
      s.tile_sizes[row] = max_rows;
      int along = reused_along(n, static_cast<size_t>(row)) ? pixels() : -1;
      if (along >= 0) move_rows_to(along);
    }
    // More rows than L1 has ways, each a stream 4 KB apart (an NHWC image's rows of 28 x 512
    // floats), evict one another at every step of the reduction. The rows go to the innermost
    // output index as long (the pixels of one image row) where its own steps spread over the sets
    // and no window strides along it; else there are only as many as the ways. Zen 4, AVX-512,
    // weights compiled in, per-kernel minima of 3-5 alternating profiles: ResNet-50's nine 1x1
    // convolutions on 28x28x512 and 56x56x256 inputs (14 rows) 5.92 -> 4.52 ms at b1 and 46.9
    // -> 39.9 at b8 along the pixels, its five on 14x14x1024 (whose pixels are 4 KB apart too)
    // 3.06 -> 2.28 and 24.1 -> 18.3 with 7 rows; VGG16's 3x3 ones 133.6 -> 117.8. Left out as
    // measured: rows whose streams spread (MobileNetV2 b8's 1x1 on 56x56x144: 1.7x longer along
    // the pixels), strided windows (ResNet-50's stride-2 3x3 convolution on 56x56x64: 1.26x
    // longer with 7 rows; depthwise ones and pools up to 1.4x along the pixels), and nests
    // without an operand the rows share (pools).
    if (best > kL1Ways && steps_alias_in_l1(n, row) && reused_along(n, static_cast<size_t>(row)) &&
        !strided_window_along(n, row)) {
      if (int along = pixels(); along >= 0) {
        move_rows_to(along);
      } else {
        int64_t t = kL1Ways;
        while (e % t != 0) --t;  // the largest divisor within the ways, else all ways and a tail
        s.tile_sizes[row] = t > kL1Ways / 2 ? t : kL1Ways;
      }
    }
  }
  // Loop order: the vector tile loop outermost (a B panel stays in L2 while all row tiles pass),
  // then the other outputs, the reduction indices, innermost the point loops.
  s.loop_order.clear();
  s.loop_order.push_back(v);
  for (size_t j = 0; j < r; ++j)
    if (static_cast<int>(j) != v) s.loop_order.push_back(static_cast<int>(j));
  for (size_t j = r; j < k; ++j) s.loop_order.push_back(static_cast<int>(j));
  // The panel of the reduction for one vector tile: when it does not fit L2, rows go outermost
  // instead so the A rows stay in L1.
  if (reduction_points(n) * s.tile_sizes[v] * bytes > target.l2_bytes / 2 && row >= 0) {
    std::swap(s.loop_order[0], s.loop_order[1]);
  }
  if (activations_outgrow_l2(n, v, target)) activations_first(n, v, s);
  prefer_parallel_outer(n, s, target);
  return s;
}

}  // namespace tessera::compiler
