// The register-blocked paths of the scheduler against the reference interpreter (LoopEval runs
// the lowered kernels): interior/border splitting of padded, strided and dilated convolutions,
// packed GEMM panels with tails and unit dimensions, and which loop runs in parallel.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>

#include "compiler/CostModel.h"
#include "compiler/Fusion.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/Lower.h"
#include "compiler/LowerContraction.h"
#include "compiler/Panel.h"
#include "compiler/SplitBorders.h"
#include "compiler/tune/SearchSpace.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/compiler/LoopEval.h"
#include "tests/unit/compiler/MatchInterp.h"
#include "tile/Parser.h"

namespace tessera::compiler {
namespace {

using tile::DType;
using tile::TensorType;

TensorType f32(std::vector<int64_t> shape) { return {DType::Float32, std::move(shape)}; }

Target avx512(int cores = 2) {
  Target t;
  t.cores = cores, t.vector_bits = 512;
  return t;
}

LoweredProgram lower_text(const std::string &text, const std::map<std::string, TensorType> &in,
                          Target t) {
  return lower(tile::bind(tile::parse_program(text), in), t);
}

// Runs every kernel with LoopEval on random inputs and compares each output with interp
// (float32 kernels vs interp's double accumulation: 1e-4 absolute on values of order 1).
void expect_matches_interp(const std::string &text, const std::map<std::string, TensorType> &in,
                           Target target = avx512()) {
  auto bound = tile::bind(tile::parse_program(text), in);
  test::expect_lowered_matches_interp(bound, lower(bound, target), 7, 1e-4, text);
}

// A 2-D NHWC convolution with stride, dilation and padding.
std::string conv(int64_t out, int64_t stride, int64_t dilation, int64_t pad) {
  auto s = std::to_string(stride), d = std::to_string(dilation), p = std::to_string(pad),
       o = std::to_string(out);
  return "function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) { O[n, x, y, co : N, " + o + ", " +
         o + ", CO] = +(I[n, " + s + "*x + " + d + "*i - " + p + ", " + s + "*y + " + d + "*j - " +
         p + ", ci] * K[i, j, ci, co]); }";
}

const char *kMatmul =
    "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";

// The first step of `text` planned for a CPU target with `l2_bytes` of L2, and whether it is
// expected to outgrow L2 (LoopOrder tests).
struct OutgrowCase {
  PlannedStep step;
  bool outgrow;
};
Target cpu_with_l2(int64_t l2_bytes) {
  Target t = avx512();
  t.l2_bytes = l2_bytes;
  t.backend = "llvm";  // the CPU search space
  return t;
}
OutgrowCase first_step(const std::string &text, const std::map<std::string, TensorType> &in,
                       const Target &t, bool outgrow) {
  return {plan_program(tile::bind(tile::parse_program(text), in), t).steps.at(0), outgrow};
}

// Forces on conv()'s nest (n, x, y, co, i, j, ci) a tile of `rows` rows (x) by two vectors of 16
// output channels, with the loops in `order`.
LowerOptions rows_of_two_vectors(int64_t rows, std::vector<int> order) {
  LowerOptions options;
  options.choose = [rows, order](const ContractionNest &, const Kernel &, const Schedule &model) {
    Schedule s = model;
    s.tile_sizes = {1, rows, 1, 32, 1, 1, 1};
    s.vector_index = 3, s.vector_width = 16, s.unroll = 2;
    s.loop_order = order;
    return s;
  };
  return options;
}

class Count : public IRVisitor {
 public:
  int parallel = 0, ifs = 0;
  std::vector<std::string> allocs;
  std::vector<int64_t> acc_sizes;
  using IRVisitor::visit;
  void visit(const For *op) override {
    parallel += op->for_kind == ForKind::Parallel;
    IRVisitor::visit(op);
  }
  void visit(const IfThenElse *op) override {
    ++ifs;
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    allocs.push_back(op->buffer);
    if (op->buffer == "acc") acc_sizes.push_back(op->size);
    IRVisitor::visit(op);
  }
};

// ---- Interior / border split ------------------------------------------------------------------

TEST(SplitBorders, PaddedConvHasAnUnguardedInterior) {
  auto bound = tile::bind(tile::parse_program(conv(6, 1, 1, 1)),
                          {{"I", f32({1, 6, 6, 2})}, {"K", f32({3, 3, 2, 16})}});
  const auto &s = bound.statements[0];
  ElementwiseContext ctx{bound, plan_fusion(bound), ""};
  auto regions = split_borders(contraction_nest(s, s, ctx));
  // x splits into [0,1) [1,5) [5,6); the middle's y into [0,1) [1,5) [5,6): five regions.
  ASSERT_EQ(regions.size(), 5u);
  EXPECT_TRUE(regions[0].guards.empty());
  EXPECT_EQ(regions[0].indices[1].lo, 1);
  EXPECT_EQ(regions[0].indices[1].extent, 4);
  EXPECT_EQ(regions[0].indices[2].lo, 1);
  EXPECT_EQ(regions[0].indices[2].extent, 4);
  int64_t points = 0;
  for (const auto &r : regions) points += r.indices[1].extent * r.indices[2].extent;
  EXPECT_EQ(points, 36);  // a partition of the 6x6 outputs
  for (size_t i = 1; i < regions.size(); ++i) EXPECT_FALSE(regions[i].guards.empty());
}

TEST(SplitBorders, PaddedStridedDilatedConvsMatchInterp) {
  for (int cores : {1, 2}) {
    // {out, stride, dilation, pad, H, KH, CI, CO}: tails in rows and vectors, unit dims.
    struct Case {
      int64_t out, s, d, p, h, k, ci, co;
    };
    for (Case c : {Case{7, 1, 1, 1, 7, 3, 3, 32}, Case{4, 2, 1, 1, 8, 3, 2, 16},
                   Case{5, 1, 2, 2, 5, 3, 2, 16}, Case{4, 2, 1, 3, 8, 7, 3, 16},
                   Case{9, 1, 1, 1, 9, 3, 1, 48}, Case{3, 1, 1, 1, 3, 3, 4, 64},
                   Case{6, 1, 1, 1, 6, 3, 2, 5}, Case{1, 1, 1, 1, 1, 3, 2, 16},
                   Case{8, 1, 1, 1, 8, 3, 2, 128}})
      expect_matches_interp(conv(c.out, c.s, c.d, c.p),
                            {{"I", f32({1, c.h, c.h, c.ci})}, {"K", f32({c.k, c.k, c.ci, c.co})}},
                            avx512(cores));
  }
}

TEST(SplitBorders, InteriorRowsAreRegisterBlocked) {
  auto lowered = lower_text(conv(14, 1, 1, 1),
                            {{"I", f32({1, 14, 14, 8})}, {"K", f32({3, 3, 8, 32})}}, avx512());
  const Schedule &s = lowered.steps[0].schedule;
  // Several output rows (x or y) share each K vector in the unguarded interior.
  EXPECT_GT(s.tile_sizes[1] * s.tile_sizes[2], 1);
  EXPECT_EQ(s.vector_index, 3);
}

TEST(SplitBorders, ShortInteriorRowsTakeWiderVectorTiles) {
  // 3x3 on 7x7: the interior has 5 rows, so 4 vectors per row fill the registers 2 would leave
  // idle.
  std::map<std::string, TensorType> in = {{"I", f32({1, 7, 7, 8})}, {"K", f32({3, 3, 8, 64})}};
  auto lowered = lower_text(conv(7, 1, 1, 1), in, avx512());
  const Schedule &s = lowered.steps[0].schedule;
  EXPECT_EQ(s.tile_sizes[1] * s.tile_sizes[2], 5);
  EXPECT_EQ(s.tile_sizes[3], 64);
  expect_matches_interp(conv(7, 1, 1, 1), in);
}

// AVX2 (16 registers): 128 rows take 4 of the 6 that two vectors would allow, so a third vector
// uses the registers left, unless its panel would not fit half of L2 (K = 3072: 288 KB); AVX-512
// keeps its own choice.
TEST(RegisterTile, FourRowsTakeAThirdVectorWhileThePanelFitsL2) {
  auto tiles = [](int64_t k, int64_t n, int vector_bits) {
    Target t;
    t.cores = 2, t.vector_bits = vector_bits, t.l2_bytes = 512 << 10;
    auto lowered =
        lower_text("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                   {{"A", f32({128, k})}, {"B", f32({k, n})}}, t);
    return lowered.steps[0].schedule.tile_sizes;
  };
  EXPECT_EQ(tiles(768, 3072, 256), (std::vector<int64_t>{4, 24, 1}));
  EXPECT_EQ(tiles(3072, 768, 256), (std::vector<int64_t>{4, 16, 1}));
  EXPECT_EQ(tiles(768, 1024, 256), (std::vector<int64_t>{4, 16, 1}));  // 128 vectors: no third
  EXPECT_EQ(tiles(768, 3072, 512), (std::vector<int64_t>{8, 48, 1}));
  expect_matches_interp(
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
      {{"A", f32({8, 16})}, {"B", f32({16, 48})}}, [] {
        Target t;
        t.cores = 2, t.vector_bits = 256;
        return t;
      }());
}

// 80 outputs are 5 vectors of 16: on 73 rows (Inception v3's 1x1 64 -> 80 on 73x73) the tile takes
// all 5, 5 rows of them, not 6 rows of one vector, whose every FMA needs its own broadcast; so
// does a dense layer of one row (1000 classes: 5 vectors of 8). Eight rows, which one vector's
// tile holds whole, keep it: 4 rows of 5 vectors would read the weights twice.
TEST(RegisterTile, FiveVectorsOfOutputsAreOneTile) {
  auto tile = [](int64_t m, int64_t n) {
    return lower_text(kMatmul, {{"A", f32({m, 64})}, {"B", f32({64, n})}}, avx512())
        .steps[0]
        .schedule.tile_sizes;
  };
  EXPECT_EQ(tile(73, 80), (std::vector<int64_t>{5, 80, 1}));
  EXPECT_EQ(tile(1, 1000), (std::vector<int64_t>{1, 40, 1}));
  EXPECT_EQ(tile(8, 80), (std::vector<int64_t>{8, 16, 1}));
  expect_matches_interp(kMatmul, {{"A", f32({73, 64})}, {"B", f32({64, 80})}});
  expect_matches_interp(conv(9, 1, 1, 0), {{"I", f32({1, 9, 9, 8})}, {"K", f32({1, 1, 8, 80})}});
}

// One vector of outputs leaves AVX-512 room for 28 rows of accumulators (MobileNetV2's 112x112x32
// -> 16 projection): their point loop is unrolled like a short one, else the accumulators live in
// memory (2.4x slower there). A tile beyond the register file stays a loop.
TEST(RegisterTile, RowsOfOneVectorThatFitTheRegistersAreUnrolled) {
  struct RowLoops : IRVisitor {
    std::vector<std::pair<int64_t, ForKind>> loops;  // extent and kind of each "*_i" loop
    using IRVisitor::visit;
    void visit(const For *op) override {
      const auto *extent = as<IntImm>(op->extent);
      if (op->var.size() > 2 && op->var.substr(op->var.size() - 2) == "_i" && extent)
        loops.emplace_back(extent->value, op->for_kind);
      IRVisitor::visit(op);
    }
  };
  std::map<std::string, TensorType> in = {{"A", f32({112, 32})}, {"B", f32({32, 16})}};
  auto lowered = lower_text(kMatmul, in, avx512());
  ASSERT_EQ(lowered.steps[0].schedule.tile_sizes, (std::vector<int64_t>{28, 16, 1}));
  RowLoops model;
  model.visit_stmt(lowered.steps[0].kernel.body);
  ASSERT_FALSE(model.loops.empty());
  for (const auto &[extent, kind] : model.loops) {
    EXPECT_EQ(extent, 28);
    EXPECT_EQ(kind, ForKind::Unrolled) << print_stmt(lowered.steps[0].kernel.body);
  }
  expect_matches_interp(kMatmul, in);

  // 40 rows of one vector: more accumulators than registers.
  LowerOptions forty;
  forty.choose = [](const ContractionNest &, const Kernel &, const Schedule &model) {
    Schedule s = model;
    s.tile_sizes = {40, 16, 1};
    return s;
  };
  auto bound =
      tile::bind(tile::parse_program(kMatmul), {{"A", f32({80, 32})}, {"B", f32({32, 16})}});
  auto loop = lower(bound, avx512(), forty);
  RowLoops serial;
  serial.visit_stmt(loop.steps[0].kernel.body);
  ASSERT_FALSE(serial.loops.empty());
  for (const auto &[extent, kind] : serial.loops) EXPECT_EQ(kind, ForKind::Serial);
}

// In a network, a CPU kernel whose activations of one image (read and written) outweigh twice its
// weights splits the image's rows over the cores even where its schedule runs channel tiles
// outermost: a 1x1 convolution 8 -> 64 on 16x16 (72 KB of activations, 2 KB of weights) scheduled
// channels first runs its row tiles in parallel, and computes what interp does. Unchanged: 512 ->
// 2048 on 7x7 (0.5 MB of activations, 4 MB of weights); 4 -> 4096 on 3x3, whose 3 rows would
// leave one core with twice the other's; and 8 images of 14x14, 1024 -> 256 (1 MB of activations
// an image, 1 MB of weights).
TEST(LoopOrder, NetworkKernelsSplitRowsWhereActivationsOutweighWeights) {
  Target t = avx512();
  t.backend = "llvm";
  auto outermost = [](const ContractionNest &n, const Schedule &s) {
    for (int j : s.loop_order)
      if (n.indices[j].output && (n.indices[j].extent + s.tile_sizes[j] - 1) / s.tile_sizes[j] > 1)
        return j;
    return -1;
  };
  const std::vector<int> channels_first = {3, 0, 1, 2, 4, 5, 6};
  auto bound = tile::bind(tile::parse_program(conv(16, 1, 1, 0)),
                          {{"I", f32({1, 16, 16, 8})}, {"K", f32({1, 1, 8, 64})}});
  LoweredProgram lowered = lower(bound, t, rows_of_two_vectors(4, channels_first));
  PlannedStep planned = plan_program(bound, t).steps.at(0);
  EXPECT_EQ(outermost(planned.nest, lowered.steps.at(0).schedule), 1)
      << lowered.steps[0].schedule.to_json();
  test::expect_lowered_matches_interp(bound, lowered, 12, 1e-4, "1x1 convolution, rows first");

  for (auto [images, image, in, out] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t>{1, 7, 512, 2048},
        {1, 3, 4, 4096},
        {8, 14, 1024, 256}}) {
    PlannedStep step = plan_program(tile::bind(tile::parse_program(conv(image, 1, 1, 0)),
                                               {{"I", f32({images, image, image, in})},
                                                {"K", f32({1, 1, in, out})}}),
                                    t)
                           .steps.at(0);
    Schedule s = step.model;
    s.tile_sizes = {1, 1, 1, 32, 1, 1, 1};
    s.vector_index = 3, s.vector_width = 16, s.unroll = 2, s.parallel_loops = 1;
    s.loop_order = channels_first;
    EXPECT_EQ(in_network_order(step.nest, s, t), s)
        << images << " x " << image << "x" << image << "x" << in;
  }
}

// A batched product (attention's scores: heads h, queries m, keys n) scheduled rows first runs its
// heads in parallel in a network, each core reading only its heads' slices of both operands, as
// the kernels around it split them, and computes what interp does. Unchanged: 3 heads on 2 cores
// (one core would get twice the other's), and a plain product, whose operands share no index.
TEST(LoopOrder, BatchedProductsSplitTheirBatchInANetwork) {
  Target t = avx512();
  t.backend = "llvm";
  const char *scores =
      "function (Q[H, M, K], KT[H, K, N]) -> (S) { S[h, m, n : H, M, N] = +(Q[h, m, k] * KT[h, "
      "k, n]); }";
  auto rows_first = [](const ContractionNest &, const Kernel &, const Schedule &model) {
    Schedule s = model;
    s.tile_sizes = {1, 4, 32, 1};
    s.vector_index = 2, s.vector_width = 16, s.unroll = 2, s.parallel_loops = 1;
    s.loop_order = {1, 2, 0, 3};
    return s;
  };
  for (auto [heads, batched] : {std::pair<int64_t, bool>{4, true}, {3, false}}) {
    auto bound = tile::bind(tile::parse_program(scores),
                            {{"Q", f32({heads, 12, 8})}, {"KT", f32({heads, 8, 32})}});
    LowerOptions options;
    options.choose = rows_first;
    LoweredProgram lowered = lower(bound, t, options);
    const Schedule &s = lowered.steps.at(0).schedule;
    EXPECT_EQ(s.loop_order.front(), batched ? 0 : 1) << heads << " heads: " << s.to_json();
    test::expect_lowered_matches_interp(bound, lowered, 5, 1e-4, "batched product");
  }
  PlannedStep plain =
      first_step(kMatmul, {{"A", f32({64, 64})}, {"B", f32({64, 64})}}, t, false).step;
  Schedule s = plain.model;
  s.tile_sizes = {4, 32, 1};
  s.vector_index = 1, s.vector_width = 16, s.unroll = 2, s.parallel_loops = 1;
  s.loop_order = {1, 0, 2};
  EXPECT_EQ(in_network_order(plain.nest, s, t), s);
}

// Activations larger than half of L2 with weights that fit it (a 1x1 convolution on 56x56x64 with
// 512 KB of L2): the cost model and every candidate of the tuner run the output channels innermost
// of the output loops, so a row tile's activations serve every channel tile; with weights too
// large (BERT's 768 x 3072 projection) or activations that fit, the channel tiles stay outermost.
TEST(LoopOrder, ActivationsThatOutgrowL2GoOutsideTheChannelTiles) {
  Target t = cpu_with_l2(512 << 10);
  std::vector<OutgrowCase> cases = {
      first_step(conv(56, 1, 1, 0), {{"I", f32({1, 56, 56, 64})}, {"K", f32({1, 1, 64, 256})}}, t,
                 true),
      first_step(conv(56, 1, 1, 0), {{"I", f32({8, 56, 56, 64})}, {"K", f32({1, 1, 64, 256})}}, t,
                 true),
      first_step(conv(28, 1, 1, 0), {{"I", f32({1, 28, 28, 64})}, {"K", f32({1, 1, 64, 256})}}, t,
                 false),
      first_step(kMatmul, {{"A", f32({128, 768})}, {"B", f32({768, 3072})}}, t, false),
  };
  for (const auto &c : cases) {
    const ContractionNest &n = c.step.nest;
    int v = c.step.model.vector_index;
    ASSERT_GE(v, 0);
    EXPECT_EQ(activations_outgrow_l2(n, v, t), c.outgrow) << n.indices[0].extent;
    for (const auto &s : tune::candidates(n, t)) {
      std::vector<int> outs;  // the output loops that iterate, outermost first
      for (int j : s.loop_order) {
        const NestIndex &ix = n.indices[j];
        if (ix.output && (ix.extent + s.tile_sizes[j] - 1) / s.tile_sizes[j] > 1) outs.push_back(j);
      }
      ASSERT_FALSE(outs.empty());
      if (c.outgrow) {
        EXPECT_EQ(outs.back(), v) << s.to_json();
      }
    }
    if (!c.outgrow && n.indices.size() == 3) {
      EXPECT_EQ(c.step.model.loop_order.front(), v);  // the panel stays in L2 for all row tiles
    }
  }
}

// Weights larger than half of L2 and than the activations (BERT's 768 x 3072 products, 2 MB of
// L2): every candidate of the tuner keeps the vector tiles outermost, so that each core reads its
// own share of the weights; where they fit L2 (a 1x1 convolution's 64 KB), rows may go outermost.
TEST(LoopOrder, WeightsThatOutgrowL2KeepTheVectorTilesOutermost) {
  Target t = cpu_with_l2(2 << 20);
  std::vector<OutgrowCase> cases = {
      first_step(kMatmul, {{"A", f32({128, 768})}, {"B", f32({768, 3072})}}, t, true),
      first_step(kMatmul, {{"A", f32({128, 3072})}, {"B", f32({3072, 768})}}, t, true),
      first_step(kMatmul, {{"A", f32({4096, 768})}, {"B", f32({768, 768})}}, t, false),
      first_step(conv(28, 1, 1, 0), {{"I", f32({1, 28, 28, 64})}, {"K", f32({1, 1, 64, 256})}}, t,
                 false),
  };
  for (const auto &c : cases) {
    const ContractionNest &n = c.step.nest;
    int v = c.step.model.vector_index;
    ASSERT_GE(v, 0);
    EXPECT_EQ(weights_outgrow_l2(n, v, t), c.outgrow) << n.indices[0].extent;
    int rows_outer = 0;
    for (const auto &s : tune::candidates(n, t)) {
      int first = outermost_tile_loop(n, s);
      if (c.outgrow) {
        EXPECT_EQ(first, v) << s.to_json();
      }
      rows_outer += first != v;
    }
    if (!c.outgrow) {
      EXPECT_GT(rows_outer, 0) << "the tuner should still try rows outermost";
    }
  }
}

const char *kPointwise =
    "function (I[N, H, W, C], K[C, F]) -> (O) { O[n, x, y, f : N, H, W, F] = +(I[n, x, y, c] * "
    "K[c, f]); }";

// The cost model's register tile rows of a 1x1 convolution from `channels` to 128 on a `side` x
// `side` image: (rows along x, rows along y), y being the pixels of one image row.
std::pair<int64_t, int64_t> pointwise_rows(int64_t side, int64_t channels, int vector_bits) {
  Target t = avx512();
  t.vector_bits = vector_bits;
  auto lowered = lower_text(
      kPointwise, {{"I", f32({1, side, side, channels})}, {"K", f32({channels, 128})}}, t);
  const auto &s = lowered.steps[0].schedule.tile_sizes;
  return {s[1], s[2]};
}

// A 1x1 convolution's register tile of 14 rows along x reads 14 streams an image row apart; where
// that is a multiple of 4 KB (28 pixels of 512 floats) they share one L1 set of 8 ways, so the
// rows go to y, the pixels of one image row, or where those alias too become as many as the ways.
// Not where the streams spread (144 channels), nor across a strided window.
TEST(RegisterTile, RowsWhoseStreamsShareAnL1SetGoAlongThePixels) {
  EXPECT_EQ(pointwise_rows(28, 512, 512), std::make_pair(int64_t{1}, int64_t{14}));
  EXPECT_EQ(pointwise_rows(28, 144, 512), std::make_pair(int64_t{14}, int64_t{1}));
  // 14 pixels of 1024 floats are 4 KB apart too: 7 rows along x, within the ways.
  EXPECT_EQ(pointwise_rows(14, 1024, 512), std::make_pair(int64_t{7}, int64_t{1}));
  // A stride-2 3x3 convolution (rows 2 x 28 x 128 floats apart) keeps its 12 rows on x: along y
  // its taps stride too, and ResNet-50's ran 1.08x longer at b8 with its rows there, 1.26x at b1
  // with 7 rows instead of 9.
  auto strided = lower_text(conv(12, 2, 1, 0),
                            {{"I", f32({1, 28, 28, 128})}, {"K", f32({3, 3, 128, 32})}}, avx512());
  EXPECT_EQ(strided.steps[0].schedule.tile_sizes[1], 12);
  EXPECT_EQ(strided.steps[0].schedule.tile_sizes[2], 1);
  // 12 rows of 12 pixels of 256 floats: 12 KB apart, on y, and the kernel still right.
  EXPECT_EQ(pointwise_rows(12, 256, 512), std::make_pair(int64_t{1}, int64_t{12}));
  expect_matches_interp(kPointwise, {{"I", f32({1, 12, 12, 256})}, {"K", f32({256, 32})}});
}

// AVX2's tiles of two vectors hold at most 6 rows. 28 pixels take 6 and a tail of 4 (5 tiles
// instead of 7 of 4) along y, the pixels of one image row; 56 keep 4 rows that divide (6 would
// leave a tail of 2) and 10 keep 5 (6 would not save a tile), each on x; 35 (Inception's 35x35)
// takes 6.
TEST(RegisterTile, Avx2TakesSixRowsAlongThePixelsWhereTheTailIsHalfATile) {
  EXPECT_EQ(pointwise_rows(28, 256, 256), std::make_pair(int64_t{1}, int64_t{6}));
  EXPECT_EQ(pointwise_rows(28, 512, 256), std::make_pair(int64_t{1}, int64_t{6}));
  EXPECT_EQ(pointwise_rows(35, 288, 256), std::make_pair(int64_t{1}, int64_t{6}));
  EXPECT_EQ(pointwise_rows(56, 64, 256), std::make_pair(int64_t{4}, int64_t{1}));
  EXPECT_EQ(pointwise_rows(10, 64, 256), std::make_pair(int64_t{5}, int64_t{1}));
  Target avx2 = avx512();
  avx2.vector_bits = 256;
  expect_matches_interp(kPointwise, {{"I", f32({1, 28, 28, 24})}, {"K", f32({24, 16})}}, avx2);
}

// A softmax's max and sum over the contiguous last axis, vectorized over the rows: every vector is
// a gather and no operand is shared between rows, so the model takes one vector per row and a few
// rows (6 of BERT's 12 heads), rows outermost before the parallel rule, and the tuner tries few
// accumulators of one vector first. A matmul keeps its register tile. Both match interp.
TEST(RegisterTile, GathersTakeOneVectorPerRow) {
  Target t = avx512();
  t.backend = "llvm";
  const std::string max_text =
      "function (T[N, H, R, C]) -> (M) { M[i, j, k, 0 : N, H, R, 1] = >(T[i, j, k, l]); }";
  std::map<std::string, TensorType> in = {{"T", f32({1, 12, 128, 128})}};
  auto step = plan_program(tile::bind(tile::parse_program(max_text), in), t).steps.at(0);
  const ContractionNest &n = step.nest;
  EXPECT_TRUE(gathers_along(n, 2));
  EXPECT_EQ(step.model.vector_index, 2);
  EXPECT_EQ(step.model.tile_sizes, (std::vector<int64_t>{1, 6, 16, 1, 1}));
  auto candidates = tune::candidates(n, t);
  ASSERT_GE(candidates.size(), 6u);
  for (size_t c = 1; c < 6; ++c) EXPECT_EQ(candidates[c].unroll, 1) << candidates[c].to_json();
  expect_matches_interp(max_text, {{"T", f32({1, 12, 8, 32})}}, avx512());
  expect_matches_interp(
      "function (T[N, H, R, C]) -> (M) { M[i, j, k, 0 : N, H, R, 1] = +(T[i, j, k, l]); }",
      {{"T", f32({2, 7, 16, 5})}}, avx512());

  auto gemm = plan_program(
      tile::bind(
          tile::parse_program(
              "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }"),
          {{"A", f32({128, 768})}, {"B", f32({768, 768})}}),
      t);
  EXPECT_FALSE(gathers_along(gemm.steps.at(0).nest, 1));
  EXPECT_EQ(gemm.steps.at(0).model.tile_sizes, (std::vector<int64_t>{8, 48, 1}));
}

// A transposing copy (attention's keys, heads of 64 x 128 from 128 x 768) gathers each output
// vector from 16 input rows; the next output row's vector reads the next element of the same
// rows, so that loop goes innermost, one vector per iteration. A copy that keeps the innermost
// dimension does not gather and keeps its order.
TEST(LoopOrder, TransposingCopiesTakeTheNextElementOfTheRowsTheyGathered) {
  Target t = avx512();
  t.backend = "llvm";
  const std::string keys =
      "function (K[S, D]) -> (KT) { KT[h, d, s : 12, 64, S] = =(K[s, 64*h + d]); }";
  auto step =
      plan_program(tile::bind(tile::parse_program(keys), {{"K", f32({128, 768})}}), t).steps.at(0);
  EXPECT_TRUE(gathers_along(step.nest, 2));
  EXPECT_EQ(gather_neighbour(step.nest, 2), 1);
  EXPECT_EQ(step.model.vector_index, 2);
  EXPECT_EQ(step.model.loop_order, (std::vector<int>{0, 2, 1}));
  EXPECT_EQ(step.model.tile_sizes, (std::vector<int64_t>{1, 1, 16}));
  expect_matches_interp(keys, {{"K", f32({32, 768})}}, t);

  const std::string values =
      "function (V[S, D]) -> (VH) { VH[h, s, d : 12, S, 64] = =(V[s, 64*h + d]); }";
  auto kept = plan_program(tile::bind(tile::parse_program(values), {{"V", f32({128, 768})}}), t)
                  .steps.at(0);
  EXPECT_FALSE(gathers_along(kept.nest, 2));
  EXPECT_EQ(kept.model.loop_order, (std::vector<int>{0, 1, 2}));
}

TEST(SplitBorders, BorderStripsAreRowBlockedAndTailsPeeled) {
  // 3x3 on 14x14 (interior 12x12) under 5 rows of 2 vectors: every border strip and every partial
  // row tile (of 2 rows) gets a row-blocked accumulator of its own, without a tail guard; only the
  // four corners are left with one point.
  auto text = conv(14, 1, 1, 1);
  std::map<std::string, TensorType> in = {{"I", f32({1, 14, 14, 8})}, {"K", f32({3, 3, 8, 64})}};
  auto bound = tile::bind(tile::parse_program(text), in);
  LoweredProgram lowered = lower(bound, avx512(), rows_of_two_vectors(5, {2, 3, 0, 1, 4, 5, 6}));
  Count c;
  c.visit_stmt(lowered.steps[0].kernel.body);
  EXPECT_EQ(c.ifs, 0) << print_stmt(lowered.steps[0].kernel.body);
  int64_t one_point = 32;
  EXPECT_EQ(std::count(c.acc_sizes.begin(), c.acc_sizes.end(), one_point), 4)
      << print_stmt(lowered.steps[0].kernel.body);
  test::expect_lowered_matches_interp(bound, lowered, 5, 1e-4, text);
}

TEST(SplitBorders, PaddedMaxPoolAndFusedEpilogueMatchInterp) {
  expect_matches_interp("function (I[N, H, W, C]) -> (O) { O[n, x, y, c : N, 5, 5, C] = >(I[n, 2*x "
                        "+ i - 1, 2*y + j - 1, c]), i < 3, j < 3; }",
                        {{"I", f32({1, 9, 9, 32})}});
  expect_matches_interp(R"(function (I[N, H, W, CI], K[KH, KW, CI, CO], B[CO]) -> (R) {
    O[n, x, y, co : N, H, W, CO] = +(I[n, x + kx - 1, y + ky - 1, ci] * K[kx, ky, ci, co]);
    R = relu(O + B);
  })",
                        {{"I", f32({2, 6, 5, 3})}, {"K", f32({3, 3, 3, 32})}, {"B", f32({32})}});
}

// ---- GEMM panels, tails, unit dims ------------------------------------------------------------

TEST(PackedGemm, TailsAndUnitDimsMatchInterp) {
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{13, 9, 64},
                                                                           {17, 31, 32},
                                                                           {1, 7, 32},
                                                                           {9, 1, 64},
                                                                           {30, 5, 96},
                                                                           {8, 3, 16},
                                                                           {5, 4, 7},
                                                                           {11, 6, 128}})
    for (int cores :
         {1, 2})  // one core keeps the vector tile loop outermost, so its panel is packed
      expect_matches_interp(kMatmul, {{"A", f32({m, k})}, {"B", f32({k, n})}}, avx512(cores));
  // 1x1 convolution: a GEMM over (x*y) x ci x co.
  for (int cores : {1, 2})
    expect_matches_interp(conv(5, 1, 1, 0), {{"I", f32({1, 5, 5, 8})}, {"K", f32({1, 1, 8, 64})}},
                          avx512(cores));
}

TEST(PackedGemm, RowTailsOfAnUnpaddedConvAreAPartOfTheirOwn) {
  // A valid 3x3 convolution, 11 rows under tiles of 6: the 5-row tail is peeled (no guard in any
  // reduction loop, which cost Inception's 71-row layer half its speed) and only the whole tiles
  // pack the weights' panel.
  auto text = conv(11, 1, 1, 0);
  std::map<std::string, TensorType> in = {{"I", f32({1, 13, 13, 8})}, {"K", f32({3, 3, 8, 64})}};
  auto bound = tile::bind(tile::parse_program(text), in);
  LoweredProgram lowered = lower(bound, avx512(), rows_of_two_vectors(6, {3, 0, 1, 2, 4, 5, 6}));
  Count c;
  c.visit_stmt(lowered.steps[0].kernel.body);
  EXPECT_EQ(c.ifs, 0) << print_stmt(lowered.steps[0].kernel.body);
  EXPECT_EQ(std::count(c.allocs.begin(), c.allocs.end(), "pack_K"), 1)
      << print_stmt(lowered.steps[0].kernel.body);
  test::expect_lowered_matches_interp(bound, lowered, 5, 1e-4, text);
}

// Loads of `buffer` that are not part of a copy into `pack_<buffer>`.
class UnpackedLoads : public IRVisitor {
 public:
  explicit UnpackedLoads(std::string buffer) : buffer_(std::move(buffer)) {}
  int count = 0;
  using IRVisitor::visit;
  void visit(const Store *op) override {
    bool fill = op->buffer == "pack_" + buffer_;
    filling_ += fill;
    IRVisitor::visit(op);
    filling_ -= fill;
  }
  void visit(const Load *op) override {
    count += op->buffer == buffer_ && filling_ == 0;
    IRVisitor::visit(op);
  }

 private:
  std::string buffer_;
  int filling_ = 0;
};

TEST(PackedGemm, RowTailsShareTheWholeTilesPanelOfLargeWeights) {
  // ResNet's last 1x1 convolutions, narrowed: 7 rows under tiles of 6 leave a row tail, and the
  // weights (1.1 MB) are larger than a panel. Every tail reads the panel of its vector tile:
  // streamed once instead of once per part.
  auto text = conv(7, 1, 1, 0);
  std::map<std::string, TensorType> in = {{"I", f32({1, 7, 7, 64})}, {"K", f32({1, 1, 64, 4352})}};
  auto bound = tile::bind(tile::parse_program(text), in);
  LoweredProgram lowered = lower(bound, avx512(), rows_of_two_vectors(6, {3, 0, 1, 2, 4, 5, 6}));
  const Stmt &body = lowered.steps[0].kernel.body;
  UnpackedLoads k("K");
  k.visit_stmt(body);
  EXPECT_EQ(k.count, 0) << print_stmt(body);
  Count c;
  c.visit_stmt(body);
  EXPECT_EQ(std::count(c.allocs.begin(), c.allocs.end(), "pack_K"), 1) << print_stmt(body);
  EXPECT_EQ(c.parallel, 1) << print_stmt(body);
  test::expect_lowered_matches_interp(bound, lowered, 3, 1e-4, text);
}

TEST(PackedGemm, VectorPanelIsPackedOncePerTile) {
  // Four vector tiles of 32 columns: enough to run them in parallel, each packing its panel.
  auto lowered = lower_text(kMatmul, {{"A", f32({64, 40})}, {"B", f32({40, 128})}}, avx512());
  Count c;
  c.visit_stmt(lowered.steps[0].kernel.body);
  EXPECT_NE(std::find(c.allocs.begin(), c.allocs.end(), "pack_B"), c.allocs.end())
      << print_stmt(lowered.steps[0].kernel.body);
  EXPECT_EQ(c.parallel, 1);
}

// ---- Filled panels of constant operands ---------------------------------------------------------

TEST(ConstantPanel, FillLaysOutEachTileRowAfterRow) {
  // A 3x4 row-major source in tiles of 2 columns: tile 0 is rows of columns 0-1, tile 1 of 2-3.
  ConstantPanel p;
  p.source = "W", p.dtype = DType::Int32, p.tiles = 2, p.width = 2, p.base = 0;
  p.dims = {{3, 4}};
  std::vector<int32_t> w = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23};
  auto bytes =
      fill_constant_panel(p, reinterpret_cast<const std::byte *>(w.data()), w.size() * 4, 4);
  std::vector<int32_t> got(bytes.size() / 4);
  std::memcpy(got.data(), bytes.data(), bytes.size());
  EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 10, 11, 20, 21, 2, 3, 12, 13, 22, 23}));
}

TEST(ConstantPanel, ConstantWeightsAreReadOnlyFromTheirFilledPanel) {
  // Padded (interior and borders), unpadded with row tails, and a GEMM: with K (B) constant no
  // kernel copies a panel or reads the weights as given, and every result matches interp.
  struct Case {
    std::string text, weights;
    std::map<std::string, TensorType> in;
    std::vector<int> order;
  };
  std::vector<Case> cases = {
      {conv(7, 1, 1, 1),
       "K",
       {{"I", f32({1, 7, 7, 8})}, {"K", f32({3, 3, 8, 64})}},
       {3, 0, 1, 2, 4, 5, 6}},
      {conv(7, 1, 1, 0),
       "K",
       {{"I", f32({1, 7, 7, 16})}, {"K", f32({1, 1, 16, 96})}},
       {3, 0, 1, 2, 4, 5, 6}},
      {conv(5, 2, 1, 1),
       "K",
       {{"I", f32({1, 9, 9, 8})}, {"K", f32({3, 3, 8, 64})}},
       {1, 3, 0, 2, 4, 5, 6}},
  };
  for (const auto &c : cases) {
    auto bound = tile::bind(tile::parse_program(c.text), c.in);
    LowerOptions options = rows_of_two_vectors(6, c.order);
    options.constants = {c.weights};
    LoweredProgram lowered = lower(bound, avx512(), options);
    const Step &step = lowered.steps.at(0);
    ASSERT_EQ(step.panels.size(), 1u) << c.text;
    EXPECT_EQ(step.panels[0].source, c.weights);
    EXPECT_EQ(step.panels[0].elements(), bound.type_of(c.weights).elements());
    UnpackedLoads given(c.weights);  // with no copy into a panel: every load of the weights
    given.visit_stmt(step.kernel.body);
    EXPECT_EQ(given.count, 0) << print_stmt(step.kernel.body);
    Count n;
    n.visit_stmt(step.kernel.body);
    EXPECT_EQ(std::count(n.allocs.begin(), n.allocs.end(), "pack_" + c.weights), 0);
    bool param = false;
    for (const auto &p : step.kernel.params) param |= p.name == step.panels[0].name && !p.is_output;
    EXPECT_TRUE(param) << c.text;
    test::expect_lowered_matches_interp(bound, lowered, 11, 1e-4, c.text);
  }
  for (auto [m, k, n] :
       std::vector<std::tuple<int64_t, int64_t, int64_t>>{{13, 9, 64}, {1, 7, 32}, {30, 5, 96}}) {
    auto bound = tile::bind(tile::parse_program(kMatmul), {{"A", f32({m, k})}, {"B", f32({k, n})}});
    LowerOptions options;
    options.constants = {"B"};
    LoweredProgram lowered = lower(bound, avx512(), options);
    test::expect_lowered_matches_interp(bound, lowered, 3, 1e-4, "matmul");
  }
}

// ---- Reduction blocks
// ----------------------------------------------------------------------------

// The extent of each loop, by its variable's name.
class LoopExtents : public IRVisitor {
 public:
  std::map<std::string, int64_t> extent;
  using IRVisitor::visit;
  void visit(const For *op) override {
    if (auto *e = as<IntImm>(op->extent)) extent[op->var] = e->value;
    IRVisitor::visit(op);
  }
};

// The padded 3x3 convolution of conv(7, 1, 1, 1), its sum stored as float16.
const char *const kConvToHalf = R"(function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (R) {
  O[n, x, y, co : N, 7, 7, CO] = +(I[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);
  R = as_float(O, 16);
})";

TEST(ReductionBlocks, LargeConstantPanelsOnFewRowsAreReadBlockByBlock) {
  // ResNet's last stages scaled down: with K constant, a panel of more than 32 KB per tile of 32
  // channels on at most 256 output rows is read in blocks of input channels of at most 64 KB, all
  // row tiles over one block before the next, the output holding the partial sums, and the panel
  // asks to be prefetched one block ahead. Padded (interior, borders, corners), a 1x1 with a row
  // tail, strided, and one with a bias and relu after the sum (run on partial sums, relu would
  // clip them): every result matches interp.
  const std::string relu =
      "function (I[N, H, W, CI], K[KH, KW, CI, CO], B[CO]) -> (R) {\n"
      "  O[n, x, y, co : N, 7, 7, CO] = +(I[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]);\n"
      "  OB = add(O, B);\n  P = cmp_gt(OB, 0.0);\n  R = cond(P, OB, 0);\n}";
  struct Case {
    std::string text;
    std::map<std::string, TensorType> in;
    int64_t blocks, ahead;  // 0 blocks: not blocked
  };
  std::vector<Case> cases = {
      // 3*3*64 points x 32 lanes x 4 bytes = 72 KB: blocks of 32 channels (36 KB).
      {conv(7, 1, 1, 1), {{"I", f32({1, 7, 7, 64})}, {"K", f32({3, 3, 64, 64})}}, 2, 32 * 32},
      // 512 x 32 x 4 = 64 KB: two blocks of 256.
      {conv(7, 1, 1, 0), {{"I", f32({1, 7, 7, 512})}, {"K", f32({1, 1, 512, 64})}}, 2, 256 * 32},
      {conv(5, 2, 1, 1), {{"I", f32({1, 9, 9, 128})}, {"K", f32({3, 3, 128, 64})}}, 4, 32 * 32},
      {relu, {{"I", f32({1, 7, 7, 64})}, {"K", f32({3, 3, 64, 64})}, {"B", f32({64})}}, 2, 32 * 32},
      // 17x17 = 289 rows: the panel's bytes feed enough multiply-adds unblocked.
      {conv(17, 1, 1, 1), {{"I", f32({1, 17, 17, 64})}, {"K", f32({3, 3, 64, 64})}}, 0, 0},
      // 3*3*16 x 32 x 4 = 18 KB: small enough to stream unblocked.
      {conv(7, 1, 1, 1), {{"I", f32({1, 7, 7, 16})}, {"K", f32({3, 3, 16, 64})}}, 0, 0},
  };
  for (const auto &c : cases) {
    auto bound = tile::bind(tile::parse_program(c.text), c.in);
    LowerOptions options = rows_of_two_vectors(6, {3, 0, 1, 2, 4, 5, 6});
    options.constants = {"K"};
    LoweredProgram lowered = lower(bound, avx512(), options);
    const Kernel &k = lowered.steps.at(0).kernel;
    LoopExtents loops;
    loops.visit_stmt(k.body);
    EXPECT_EQ(loops.extent.count("ci_blocks") ? loops.extent["ci_blocks"] : 0, c.blocks)
        << c.text << "\n"
        << print_stmt(k.body);
    int64_t ahead = 0;
    for (const auto &p : k.params) ahead += p.prefetch_ahead;
    EXPECT_EQ(ahead, c.ahead) << c.text;
    test::expect_lowered_matches_interp(bound, lowered, 17, 1e-4, c.text);
  }
  // Left as they are: row tiles outside the channel tiles (the schedule's parallel work is rows),
  // activations larger than L2 keeps beside the panel (16x16x1040, 1.06 MB: each block would
  // read them from L3 in runs of one block's channels), and a sum stored as float16 (the partial
  // sums would be rounded to it between blocks).
  struct Unblocked {
    std::string text;
    std::map<std::string, TensorType> in;
    std::vector<int> order;
  };
  for (const auto &c :
       std::vector<Unblocked>{{conv(7, 1, 1, 1),
                               {{"I", f32({1, 7, 7, 64})}, {"K", f32({3, 3, 64, 64})}},
                               {1, 3, 0, 2, 4, 5, 6}},
                              {conv(16, 1, 1, 0),
                               {{"I", f32({1, 16, 16, 1040})}, {"K", f32({1, 1, 1040, 64})}},
                               {3, 0, 1, 2, 4, 5, 6}},
                              {kConvToHalf,
                               {{"I", f32({1, 7, 7, 64})}, {"K", f32({3, 3, 64, 64})}},
                               {3, 0, 1, 2, 4, 5, 6}}}) {
    LowerOptions options = rows_of_two_vectors(6, c.order);
    options.constants = {"K"};
    LoopExtents loops;
    loops.visit_stmt(lower(tile::bind(tile::parse_program(c.text), c.in), avx512(), options)
                         .steps.at(0)
                         .kernel.body);
    EXPECT_EQ(loops.extent.count("ci_blocks"), 0u) << c.text;
  }
}

// ---- Parallel loops ---------------------------------------------------------------------------

TEST(Parallel, UnitBatchConvStillHasAParallelLoop) {
  // 3x3 on 7x7x512 (ResNet-50's last block, scaled down in channels): n has extent 1.
  for (int64_t co : {16, 512}) {
    auto lowered = lower_text(conv(7, 1, 1, 1),
                              {{"I", f32({1, 7, 7, 64})}, {"K", f32({3, 3, 64, co})}}, avx512());
    Count c;
    c.visit_stmt(lowered.steps[0].kernel.body);
    EXPECT_GE(c.parallel, 1) << co << "\n" << print_stmt(lowered.steps[0].kernel.body);
  }
}

// A 3x3 depthwise convolution padded 'same' on 14x14x192 (MobileNetV2's, fewer channels): at batch
// 8 each border strip has 8 x 12 x 192 x 6 = 110,592 points, under kParallelPoints, and splits over
// the images; at batch 1 only the interior runs in parallel (the strips would split channel tiles).
TEST(Parallel, BorderStripsOfABatchSplitOverItsImages) {
  const char *depthwise =
      "function (I[N, H, W, C], K[KH, KW, C]) -> (O) {\n"
      "  O[n, x, y, c : N, H, W, C] = +(I[n, x + i - 1, y + j - 1, c] * K[i, j, c]);\n"
      "}\n";
  std::map<int64_t, int> parallel;
  for (int64_t batch : {1, 8}) {
    auto lowered = lower_text(
        depthwise, {{"I", f32({batch, 14, 14, 192})}, {"K", f32({3, 3, 192})}}, avx512());
    Count c;
    c.visit_stmt(lowered.steps[0].kernel.body);
    parallel[batch] = c.parallel;
  }
  EXPECT_EQ(parallel[1], 1);
  EXPECT_GE(parallel[8], 5);  // the interior and four strips; corners (6,144 points) stay serial
}

TEST(Parallel, OneCoreHasNoParallelLoop) {
  Target one = avx512();
  one.cores = 1;
  auto lowered = lower_text(kMatmul, {{"A", f32({64, 40})}, {"B", f32({40, 64})}}, one);
  Count c;
  c.visit_stmt(lowered.steps[0].kernel.body);
  EXPECT_EQ(c.parallel, 0);
}

}  // namespace
}  // namespace tessera::compiler
