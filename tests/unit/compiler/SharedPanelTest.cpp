// Padded contractions whose vector operand is too big for one panel (ResNet's 3x3 on 7x7x512,
// scaled down): one loop over vector tiles packs each tile's panel once and the interior and every
// border read it. LoopEval runs the lowered kernels against the reference interpreter.
#include <gtest/gtest.h>

#include <random>

#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/Lower.h"
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

// A padded NHWC convolution: `out` x `out` outputs, stride s, "same"-style padding p.
std::string conv(int64_t out, int64_t s, int64_t p, bool bias_relu = false) {
  auto o = std::to_string(out), st = std::to_string(s), pd = std::to_string(p);
  std::string c = "O[n, x, y, co : N, " + o + ", " + o + ", CO] = +(I[n, " + st + "*x + i - " + pd +
                  ", " + st + "*y + j - " + pd + ", ci] * K[i, j, ci, co]);";
  if (!bias_relu) return "function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) { " + c + " }";
  return "function (I[N, H, W, CI], K[KH, KW, CI, CO], B[CO]) -> (R) { " + c +
         " R = relu(O + B); }";
}

// Runs every kernel with LoopEval on random inputs and compares each output with interp
// (float32 kernels vs interp's double accumulation over <= 1152 terms of order 1: 1e-3 absolute).
void expect_matches_interp(const std::string &text, const std::map<std::string, TensorType> &in,
                           Target target) {
  auto bound = tile::bind(tile::parse_program(text), in);
  test::expect_lowered_matches_interp(bound, lower(bound, target), 11, 1e-3, text);
}

class Count : public IRVisitor {
 public:
  int parallel = 0, packs = 0;
  using IRVisitor::visit;
  void visit(const For *op) override {
    parallel += op->for_kind == ForKind::Parallel;
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    packs += op->buffer == "pack_K";
    IRVisitor::visit(op);
  }
};

TEST(SharedPanel, PackedOnceOutsideAllRegions) {
  // K is 3*3*64*512 floats (1.2 MB, over one panel's budget): the kernel is one parallel loop over
  // the 16 vector tiles, holding the only panel copy.
  auto bound = tile::bind(tile::parse_program(conv(5, 1, 1)),
                          {{"I", f32({1, 5, 5, 64})}, {"K", f32({3, 3, 64, 512})}});
  LoweredProgram lowered = lower(bound, avx512());
  const Stmt &body = lowered.steps[0].kernel.body;
  auto *outer = as<For>(body);
  ASSERT_NE(outer, nullptr) << print_stmt(body);
  EXPECT_EQ(outer->for_kind, ForKind::Parallel);
  EXPECT_EQ(as<IntImm>(outer->extent)->value, 512 / lowered.steps[0].schedule.tile_sizes[3]);
  Count c;
  c.visit_stmt(body);
  EXPECT_EQ(c.parallel, 1);
  EXPECT_EQ(c.packs, 1);
}

TEST(SharedPanel, SharedUpToTwoMegabytesPerTile) {
  // ResNet's 7x7x512 layer on 5x5 outputs: tiles of 4 vectors (64 columns) over 3*3*512 terms
  // make a 1.18 MB panel, over a single region's budget but shared; twice the channels (2.36 MB)
  // are not, and each region streams its part of K.
  auto structure = [](int64_t ci) {
    auto bound = tile::bind(tile::parse_program(conv(5, 1, 1)),
                            {{"I", f32({1, 5, 5, ci})}, {"K", f32({3, 3, ci, 512})}});
    LoweredProgram lowered = lower(bound, avx512());
    EXPECT_EQ(lowered.steps[0].schedule.tile_sizes[3], 64);
    Count c;
    c.visit_stmt(lowered.steps[0].kernel.body);
    return std::pair(c.parallel, c.packs);
  };
  EXPECT_EQ(structure(512), std::pair(1, 1));
  EXPECT_GT(structure(1024).first, 1);
  // Two such tiles (128 channels out) against interp: every region reads the 1.18 MB panel.
  std::map<std::string, TensorType> in = {{"I", f32({1, 5, 5, 512})}, {"K", f32({3, 3, 512, 128})}};
  auto bound = tile::bind(tile::parse_program(conv(5, 1, 1)), in);
  LoweredProgram lowered = lower(bound, avx512());
  Count c;
  c.visit_stmt(lowered.steps[0].kernel.body);
  EXPECT_EQ(std::pair(c.parallel, c.packs), std::pair(1, 1));
  test::expect_lowered_matches_interp(bound, lowered, 11, 1e-2, "1.18 MB shared panel");
}

TEST(SharedPanel, ConvsMatchInterp) {
  // {out, stride, pad, H, CI, CO, batch}: K over 1 MB in every case; 5x5 splits its border strips
  // again, 3x3 has a one-row interior, 1x1 has no interior; CO 288 gives 48-lane tiles (3 vectors).
  // One core runs the tile loop serially.
  struct Case {
    int64_t out, s, p, h, ci, co, n, cores;
  };
  for (Case c : {Case{5, 1, 1, 5, 64, 512, 1, 2}, Case{3, 1, 1, 3, 64, 512, 2, 1},
                 Case{1, 1, 1, 1, 64, 512, 1, 2}, Case{4, 2, 1, 7, 128, 288, 1, 2},
                 Case{5, 1, 1, 5, 128, 288, 1, 1}})
    expect_matches_interp(conv(c.out, c.s, c.p),
                          {{"I", f32({c.n, c.h, c.h, c.ci})}, {"K", f32({3, 3, c.ci, c.co})}},
                          avx512(c.cores));
}

TEST(SharedPanel, PartialRowTilesArePeeledAndMatchInterp) {
  // A 5x9 output under a 2x7 tile of points, one vector each (a schedule the tuner may time): the
  // unguarded 3x7 interior's last row is peeled into an untiled region; the border strips split
  // again and peel too.
  auto text =
      "function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) { O[n, x, y, co : N, 5, 9, CO] = "
      "+(I[n, x + i - 1, y + j - 1, ci] * K[i, j, ci, co]); }";
  std::map<std::string, TensorType> in = {{"I", f32({1, 5, 9, 64})}, {"K", f32({3, 3, 64, 512})}};
  auto bound = tile::bind(tile::parse_program(text), in);
  LowerOptions options;
  options.choose = [](const ContractionNest &, const Kernel &, const Schedule &model) {
    Schedule s = model;
    s.tile_sizes = {1, 2, 7, 16, 1, 1, 1};
    s.vector_index = 3, s.vector_width = 16, s.unroll = 1;
    s.loop_order = {3, 0, 1, 2, 4, 5, 6};
    return s;
  };
  LoweredProgram lowered = lower(bound, avx512(), options);
  EXPECT_EQ(lowered.steps[0].schedule.tile_sizes[2], 7);
  test::expect_lowered_matches_interp(bound, lowered, 11, 1e-3, text);
}

TEST(SharedPanel, FusedEpilogueReadsItsOwnChannel) {
  // The bias is indexed by the vector index, which the shared loop shifts by the tile's start.
  expect_matches_interp(conv(4, 1, 1, true),
                        {{"I", f32({1, 4, 4, 64})}, {"K", f32({3, 3, 64, 512})}, {"B", f32({512})}},
                        avx512());
}

// The variables of the parallel loops, outermost first.
class ParallelLoops : public IRVisitor {
 public:
  std::vector<std::string> vars;
  using IRVisitor::visit;
  void visit(const For *op) override {
    if (op->for_kind == ForKind::Parallel) vars.push_back(op->var);
    IRVisitor::visit(op);
  }
};

TEST(SharedPanel, ConstantWeightsWithFewMultiplyAddsPerByteSplitRows) {
  // Weights compiled in. With rows outermost in the schedule, a kernel doing few multiply-adds per
  // byte of activations (a depthwise convolution, or 9 * 64 / 4 = 144 for a 3x3 one with 64
  // output channels) keeps the rows as its parallel loops, so that each core reads the rows the
  // kernel before wrote there; at 9 * 128 / 4 = 288 the loop over vector tiles shares each tile's
  // panel. With vector tiles outermost, a depthwise convolution splits rows all the same. Both
  // only where the rows give as many parallel iterations as the tiles: 3 row tiles of 4 rows
  // against 3 vector tiles of 32 lanes, not against 4 tiles (of 16 lanes, or 32 of 128 channels);
  // or where the interior's rows split into whole tiles that the cores divide (12 interior rows of
  // a 14x14 image in 2 tiles on 2 cores, not on 4; a 7x7 image's 5 in one tile).
  auto depthwise_on = [](int out) {
    std::string o = std::to_string(out);
    return "function (I[N, H, W, C], K[KH, KW, C]) -> (O) { O[n, x, y, c : N, " + o + ", " + o +
           ", C] = +(I[n, x + i - 1, y + j - 1, c] * K[i, j, c]); }";
  };
  const std::string depthwise = depthwise_on(12);
  const std::vector<int> rows_first = {0, 1, 2, 3, 4, 5, 6}, tiles_first = {3, 0, 1, 2, 4, 5, 6};
  struct Case {
    std::string text;
    std::map<std::string, TensorType> in;
    std::vector<int> order;
    std::string parallel;  // the outermost parallel loop's variable
    int64_t vector_tile = 32, row_tile = 4;
    int cores = 2;
  };
  std::vector<Case> cases = {
      {depthwise, {{"I", f32({1, 12, 12, 96})}, {"K", f32({3, 3, 96})}}, rows_first, "x_o"},
      {conv(12, 1, 1),
       {{"I", f32({1, 12, 12, 32})}, {"K", f32({3, 3, 32, 64})}},
       rows_first,
       "x_o"},
      {conv(12, 1, 1),
       {{"I", f32({1, 12, 12, 32})}, {"K", f32({3, 3, 32, 128})}},
       rows_first,
       "co_t"},
      {conv(12, 1, 1),
       {{"I", f32({1, 12, 12, 32})}, {"K", f32({3, 3, 32, 64})}},
       rows_first,
       "co_t",
       16},
      {depthwise, {{"I", f32({1, 12, 12, 96})}, {"K", f32({3, 3, 96})}}, tiles_first, "x_o"},
      {depthwise, {{"I", f32({1, 12, 12, 128})}, {"K", f32({3, 3, 128})}}, tiles_first, "c_t"},
      {conv(12, 1, 1),
       {{"I", f32({1, 12, 12, 32})}, {"K", f32({3, 3, 32, 64})}},
       tiles_first,
       "co_t"},
      {depthwise_on(14),
       {{"I", f32({1, 14, 14, 128})}, {"K", f32({3, 3, 128})}},
       tiles_first,
       "x_o",
       32,
       6},
      {depthwise_on(14),
       {{"I", f32({1, 14, 14, 128})}, {"K", f32({3, 3, 128})}},
       tiles_first,
       "c_t",
       32,
       6,
       4},
      {depthwise_on(7),
       {{"I", f32({1, 7, 7, 128})}, {"K", f32({3, 3, 128})}},
       tiles_first,
       "c_t",
       32,
       5},
  };
  for (const auto &c : cases) {
    auto bound = tile::bind(tile::parse_program(c.text), c.in);
    LowerOptions options;
    options.constants = {"K"};
    options.choose = [&](const ContractionNest &n, const Kernel &, const Schedule &model) {
      Schedule s = model;
      s.tile_sizes.assign(n.indices.size(), 1);
      s.tile_sizes[1] = c.row_tile, s.tile_sizes[3] = c.vector_tile;
      s.vector_index = 3, s.vector_width = 16, s.unroll = static_cast<int>(c.vector_tile / 16);
      s.loop_order.assign(c.order.begin(), c.order.begin() + n.indices.size());
      return s;
    };
    LoweredProgram lowered = lower(bound, avx512(c.cores), options);
    const Stmt &body = lowered.steps.at(0).kernel.body;
    ParallelLoops p;
    p.visit_stmt(body);
    ASSERT_FALSE(p.vars.empty()) << print_stmt(body);
    EXPECT_EQ(p.vars[0], c.parallel) << c.text << "\n" << print_stmt(body);
    test::expect_lowered_matches_interp(bound, lowered, 11, 1e-3, c.text);
  }
}

}  // namespace
}  // namespace tessera::compiler
