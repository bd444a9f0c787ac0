// GPU schedules (GpuCostModel, GpuMapping, the GPU search space) against the interpreter: each
// lowered kernel, its work-group and work-item loops run in sequence by LoopEval (kernels without
// barriers mean the same either way), must give interp's outputs. Schedules that stage operands in
// local memory (barriers) run on an OpenCL device in OpenCLDeviceTest.
#include <gtest/gtest.h>

#include "compiler/ApplySchedule.h"
#include "compiler/GpuCostModel.h"
#include "compiler/GpuMapping.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/tune/GpuSearchSpace.h"
#include "tests/unit/compiler/MatchInterp.h"
#include "tile/Parser.h"

namespace tessera::compiler {
namespace {

using tile::DType;

Target wide_target() {  // PoCL on an AVX-512 CPU
  Target t;
  t.backend = "opencl";
  t.cores = 2;
  t.vector_bits = 512;
  t.max_workgroup_size = 4096;
  return t;
}

Target simt_target() {  // a GPU: scalar lanes, 1024 work-items per group
  Target t;
  t.backend = "vulkan";
  t.cores = 16;
  t.vector_bits = 32;
  t.max_workgroup_size = 1024;
  t.local_memory_bytes = 48 << 10;
  return t;
}

Target lavapipe_target() {  // Vulkan on a 2-core CPU: subgroups of 8 lanes
  Target t = simt_target();
  t.cores = 2;
  t.subgroup_size = 8;
  t.cpu_invocations = true;
  t.guards_in_taps = true;
  return t;
}

// The output index a schedule puts on dimension 0 of the work-group: its innermost output loop.
int dimension_0(const Schedule &s, size_t outputs) {
  int last = -1;
  for (int j : s.loop_order)
    if (static_cast<size_t>(j) < outputs) last = j;
  return last;
}

tile::BoundProgram bind_program(const std::string &text,
                                const std::map<std::string, tile::TensorType> &inputs) {
  return tile::bind(tile::parse_program(text), inputs);
}

struct Case {
  const char *name, *text;
  std::map<std::string, tile::TensorType> inputs;
};

const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {"matmul with partial tiles",
       "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", {DType::Float32, {37, 9}}}, {"B", {DType::Float32, {9, 48}}}}},
      {"padded conv",
       "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 6, 5, D] = +(I[n, x + "
       "i - 1, y + j - 1, c] * K[i, j, c, d]); }",
       {{"I", {DType::Float32, {2, 6, 5, 3}}}, {"K", {DType::Float32, {3, 3, 3, 16}}}}},
      {"max pool",
       "function (I[H, W]) -> (O) { O[x, y : 4, 4] = >(I[2 * x + i, 2 * y + j]), i < 2, j < 2; }",
       {{"I", {DType::Float32, {8, 8}}}}},
      {"elementwise over four dims",
       "function (A[P, Q, R, S], B[S]) -> (C) { C = A * B + 1; }",
       {{"A", {DType::Float32, {3, 2, 5, 32}}}, {"B", {DType::Float32, {32}}}}},
      {"row sums",
       "function (A[M, N]) -> (S) { S[i : M] = +(A[i, j]); }",
       {{"A", {DType::Float32, {13, 40}}}}},
      // Specials as scheduled nests: spread over work-items, not one work-item looping.
      {"gather",
       "function (T[N, M], I[K]) -> (O) { O = gather(T, I); }",
       {{"T", {DType::Float32, {5, 32}}}, {"I", {DType::Int32, {6}}}}},
      {"reshaped copy",
       "function (A[N, M]) -> (O) { O = reshape(A, M, N); }",
       {{"A", {DType::Float32, {4, 24}}}}},
      {"index",
       "function (A[N, M]) -> (O) { O = index(A, 0) * 3 + index(A, 1); }",
       {{"A", {DType::Float32, {5, 16}}}}},
      {"int64 matmul",
       "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", {DType::Int64, {5, 4}}}, {"B", {DType::Int64, {4, 24}}}}},
  };
  return c;
}

TEST(GpuMapping, CostModelSchedulesMatchInterp) {
  for (const Target &target : {wide_target(), simt_target()})
    for (const auto &c : cases()) {
      auto bound = bind_program(c.text, c.inputs);
      // Staging in local memory needs barriers, which LoopEval's sequential work-items cannot
      // honour: OpenCLDeviceTest runs those schedules on a device.
      LowerOptions no_local;
      no_local.choose = [](const ContractionNest &, const Kernel &, const Schedule &model) {
        Schedule s = model;
        s.use_local_memory = false;
        return s;
      };
      auto lowered = lower(bound, target, no_local);
      for (const auto &step : lowered.steps)
        EXPECT_FALSE(step.schedule.workgroup.empty()) << c.name << ": " << step.schedule.to_json();
      test::expect_lowered_matches_interp(bound, lowered, 7, 1e-4,
                                          std::string(c.name) + " on " + target.backend);
    }
}

TEST(GpuMapping, EveryCandidateOfTheSearchSpaceMatchesInterp) {
  for (const Target &target : {wide_target(), simt_target()})
    for (const auto &c : cases()) {
      auto bound = bind_program(c.text, c.inputs);
      std::vector<Schedule> all;
      LowerOptions collect;
      collect.choose = [&](const ContractionNest &nest, const Kernel &, const Schedule &model) {
        all = tune::gpu_candidates(nest, target);
        EXPECT_EQ(all.at(0), model) << c.name << ": the cost model's choice comes first";
        return model;
      };
      lower(bound, target, collect);
      ASSERT_FALSE(all.empty()) << c.name;
      // A spread of candidates (all of them is thousands of LoopEval runs).
      for (size_t i = 0; i < all.size(); i += std::max<size_t>(1, all.size() / 12)) {
        if (all[i].use_local_memory || all[i].split_reduction) continue;  // barriers: see above
        LowerOptions pick;
        pick.choose = [&](const ContractionNest &, const Kernel &, const Schedule &) {
          return all[i];
        };
        test::expect_lowered_matches_interp(bound, lower(bound, target, pick), 8, 1e-4,
                                            std::string(c.name) + " candidate " + all[i].to_json());
      }
    }
}

// Reductions whose vector operand's panel does not stay in L1 (300 x 32 floats and more): on a
// wide target the cost model gives each work-item a chunk of row tiles and a copied panel. The
// cases cover a batch index (a third GPU dimension), a convolution's weights read at three
// reduction indices with a fused epilogue, and rows that divide into no whole chunk (the plain
// mapping instead).
TEST(GpuMapping, PanelSchedulesMatchInterp) {
  const std::vector<Case> panel_cases = {
      {"matmul",
       "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", {DType::Float32, {256, 300}}}, {"B", {DType::Float32, {300, 64}}}}},
      {"dense over a batch",
       "function (A[B, M, K], W[K, N]) -> (C) { C[b, i, j : B, M, N] = +(A[b, i, k] * W[k, j]); }",
       {{"A", {DType::Float32, {3, 64, 300}}}, {"W", {DType::Float32, {300, 32}}}}},
      {"conv with relu",
       "function (I[N, H, W, C], K[KH, KW, C, D]) -> (R) { O[n, x, y, d : N, 32, 4, D] = +(I[n, x "
       "+ i, y + j, c] * K[i, j, c, d]); R = relu(O); }",
       {{"I", {DType::Float32, {1, 34, 6, 16}}}, {"K", {DType::Float32, {3, 3, 16, 32}}}}},
      // One register tile holds all 7 rows of the image: the chunk runs over its columns.
      {"1x1 conv on a 7x7 image",
       "function (I[N, H, W, C], K[C, D]) -> (O) { O[n, x, y, d : N, H, W, D] = +(I[n, x, y, c] "
       "* K[c, d]); }",
       {{"I", {DType::Float32, {1, 7, 7, 300}}}, {"K", {DType::Float32, {300, 256}}}}},
  };
  for (const auto &c : panel_cases) {
    auto bound = bind_program(c.text, c.inputs);
    auto lowered = lower(bound, wide_target());
    EXPECT_GT(lowered.steps.at(0).schedule.tiles_per_item, 1)
        << c.name << ": " << lowered.steps[0].schedule.to_json();
    test::expect_lowered_matches_interp(bound, lowered, 9, 1e-4,
                                        std::string(c.name) + " with a panel");
  }
  auto bound = bind_program(panel_cases[0].text, {{"A", {DType::Float32, {37, 300}}},
                                                  {"B", {DType::Float32, {300, 64}}}});
  LowerOptions force;
  force.choose = [](const ContractionNest &, const Kernel &, const Schedule &model) {
    Schedule s = model;
    s.tiles_per_item = 4;
    return s;
  };
  auto lowered = lower(bound, wide_target(), force);
  EXPECT_EQ(print_stmt(lowered.steps.at(0).kernel.body).find("pack_B"), std::string::npos)
      << "37 rows make no chunk of 4 tiles";
  test::expect_lowered_matches_interp(bound, lowered, 10, 1e-4,
                                      "matmul of 37 rows, tiles_per_item 4");
}

// A 1x1 convolution of an HxWxC image into D channels.
tile::BoundProgram bind_pointwise(int64_t h, int64_t w, int64_t c, int64_t d) {
  return bind_program(
      "function (I[N, H, W, C], K[C, D]) -> (O) { O[n, x, y, d : N, H, W, D] = +(I[n, x, y, c] * "
      "K[c, d]); }",
      {{"I", {DType::Float32, {1, h, w, c}}}, {"K", {DType::Float32, {c, d}}}});
}

// PoCL runs a work-group's items in a loop on one core: 40 work-items (a 7x7 1x1 convolution into
// 1280 channels, each item a panel and all 49 pixels of 32 channels) go in groups of 4, not 16
// (3 groups: 32 items on one core, 8 on the other), while 64 keep their groups of 16.
TEST(GpuMapping, WideTargetsSpreadWorkGroupsEvenlyOverCores) {
  auto schedule = [](int64_t channels) {
    return lower(bind_pointwise(7, 7, 320, channels), wide_target()).steps.at(0).schedule;
  };
  Schedule few = schedule(1280);
  EXPECT_EQ(few.tiles_per_item, 7) << few.to_json();
  EXPECT_EQ(few.workgroup, (std::vector<int64_t>{4, 1}));
  EXPECT_EQ(schedule(2048).workgroup, (std::vector<int64_t>{16, 1}));
}

TEST(GpuMapping, WideTargetsGetTallRegisterTilesOfVectors) {
  auto bound =
      bind_program("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                   {{"A", {DType::Float32, {256, 64}}}, {"B", {DType::Float32, {64, 256}}}});
  auto lowered = lower(bound, wide_target());
  const Schedule &s = lowered.steps.at(0).schedule;
  EXPECT_EQ(s.vector_width, 16);
  EXPECT_EQ(s.tile_sizes, (std::vector<int64_t>{8, 32, 1}));  // 8 rows x 2 float16 per work-item
  EXPECT_EQ(s.workgroup, (std::vector<int64_t>{16, 1}));
}

// An odd vector count that 3 divides (144 channels: 9 vectors of 16) takes 3 vectors a work-item
// on a wide target with 32 registers, not one; an even count keeps 2, also where 3 divides it
// (96: 6 vectors); the tiles compute what interp does.
TEST(GpuMapping, WideTargetsTakeThreeVectorsOfAnOddCountThatThreeDivides) {
  auto lowered = [](int64_t channels) {
    auto bound = bind_pointwise(8, 8, 24, channels);
    return std::make_pair(bound, lower(bound, wide_target()));
  };
  for (auto [channels, vectors] : {std::pair<int64_t, int64_t>{144, 3}, {96, 2}, {16, 1}}) {
    auto [bound, l] = lowered(channels);
    const Schedule &s = l.steps.at(0).schedule;
    EXPECT_EQ(s.vector_width, 16) << channels;
    EXPECT_EQ(s.tile_sizes.at(3), 16 * vectors) << channels << ": " << s.to_json();
    EXPECT_EQ(s.unroll, vectors) << channels;
    EXPECT_EQ(s.tile_sizes.at(2), 8) << channels << ": " << s.to_json();  // rows along y
    test::expect_lowered_matches_interp(bound, l, 21, 1e-4,
                                        std::to_string(channels) + " channels on PoCL");
  }
  // AVX2: 16 registers, where 3 vectors would leave 3 rows; 72 channels are 9 vectors of 8.
  Target avx2 = wide_target();
  avx2.vector_bits = 256;
  auto bound = lowered(72).first;
  EXPECT_EQ(lower(bound, avx2).steps.at(0).schedule.unroll, 1);
}

// Padding bounds a convolution's rows with guards. A wide target (PoCL) still takes a tall tile
// of them where the input is one broadcast value per row (a convolution) or the weights one
// vector for every row (a depthwise convolution), not in a pool (its one operand has every
// index); lavapipe and SIMT GPUs keep their rows guard-free (both ran such tiles slower), and the
// tiles compute what interp does.
TEST(GpuMapping, WideTargetsTileRowsThatPaddingGuards) {
  const std::string conv =
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 14, 14, D] = "
      "+(I[n, x + i - 1, y + j - 1, c] * K[i, j, c, d]); }";
  const std::string depthwise =
      "function (I[H, W, C], K[KH, KW, C]) -> (O) { O[x, y, c : 14, 14, C] = "
      "+(I[x + i - 1, y + j - 1, c] * K[i, j, c]); }";
  auto bound_conv = bind_program(
      conv, {{"I", {DType::Float32, {1, 14, 14, 8}}}, {"K", {DType::Float32, {3, 3, 8, 32}}}});
  auto bound_depthwise = bind_program(
      depthwise, {{"I", {DType::Float32, {14, 14, 32}}}, {"K", {DType::Float32, {3, 3, 32}}}});
  Target lavapipe = simt_target();
  lavapipe.cpu_invocations = true;
  auto rows = [](const LoweredProgram &l, int x) {  // outputs per work-item along x and y
    const Schedule &s = l.steps.at(0).schedule;
    return s.tile_sizes.at(x) * s.tile_sizes.at(x + 1);
  };

  auto wide_conv = lower(bound_conv, wide_target());
  EXPECT_EQ(rows(wide_conv, 1), 7) << wide_conv.steps[0].schedule.to_json();
  test::expect_lowered_matches_interp(bound_conv, wide_conv, 11, 1e-4, "guarded rows on PoCL");
  auto wide_depthwise = lower(bound_depthwise, wide_target());
  EXPECT_EQ(rows(wide_depthwise, 0), 7) << wide_depthwise.steps[0].schedule.to_json();
  test::expect_lowered_matches_interp(bound_depthwise, wide_depthwise, 12, 1e-4,
                                      "guarded depthwise rows on PoCL");
  auto bound_large_depthwise =
      bind_program("function (I[H, W, C], K[KH, KW, C]) -> (O) { O[x, y, c : 48, 48, C] = "
                   "+(I[x + i - 1, y + j - 1, c] * K[i, j, c]); }",
                   {{"I", {DType::Float32, {48, 48, 32}}}, {"K", {DType::Float32, {3, 3, 32}}}});
  auto wide_large_depthwise = lower(bound_large_depthwise, wide_target());
  EXPECT_EQ(rows(wide_large_depthwise, 0), 8) << wide_large_depthwise.steps[0].schedule.to_json();
  test::expect_lowered_matches_interp(bound_large_depthwise, wide_large_depthwise, 14, 1e-4,
                                      "guarded rows of a 48x48 depthwise convolution on PoCL");
  auto bound_pool = bind_program(
      "function (I[H, W, C]) -> (O) { O[x, y, c : 14, 14, C] = >(I[x + i - 1, y + j - 1, c]), "
      "i < 3, j < 3; }",
      {{"I", {DType::Float32, {14, 14, 32}}}});
  EXPECT_EQ(rows(lower(bound_pool, wide_target()), 0), 1);
  EXPECT_EQ(rows(lower(bound_conv, simt_target()), 1), 1);
  EXPECT_EQ(rows(lower(bound_conv, lavapipe), 1), 1);
}

// A GPU work-item whose row tile runs past the last row computes the last row again in place of
// the missing ones (its row index clamped) and guards only its stores: the reduction loop holds no
// condition (on lavapipe each was a lane mask and a blend per update). 37 rows in tiles of 4.
TEST(GpuMapping, PartialRowTilesComputeTheLastRowAgainInsteadOfGuardingTheReduction) {
  auto bound =
      bind_program("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                   {{"A", {DType::Float32, {37, 9}}}, {"B", {DType::Float32, {9, 48}}}});
  LowerOptions rows_of_4;
  rows_of_4.choose = [](const ContractionNest &, const Kernel &, const Schedule &model) {
    Schedule s = model;
    s.tile_sizes[0] = 4;
    s.use_local_memory = false;
    return s;
  };
  auto lowered = lower(bound, simt_target(), rows_of_4);
  class Conditions : public IRVisitor {
   public:
    int in_reduction = 0, elsewhere = 0, clamps = 0;
    using IRVisitor::visit;
    void visit(const For *op) override {
      bool k = op->var == "k";
      depth_ += k;
      IRVisitor::visit(op);
      depth_ -= k;
    }
    void visit(const IfThenElse *op) override {
      ++(depth_ ? in_reduction : elsewhere);
      IRVisitor::visit(op);
    }
    void visit(const Binary *op) override {
      clamps += op->op == Binary::Op::Min;
      IRVisitor::visit(op);
    }

   private:
    int depth_ = 0;
  } conditions;
  conditions.visit_stmt(lowered.steps.at(0).kernel.body);
  const std::string text = print_kernel(lowered.steps.at(0).kernel);
  EXPECT_EQ(conditions.in_reduction, 0) << text;
  EXPECT_GT(conditions.elsewhere, 0) << text;  // the stores
  EXPECT_GT(conditions.clamps, 0) << text;
  test::expect_lowered_matches_interp(bound, lowered, 13, 1e-4, "clamped rows");
}

// Constant weights on a wide target (PoCL): a work-item reads its vector tile's panel from the
// buffer filled once at compile time, straight through, instead of copying it into private memory
// (a panel schedule) or reading the weights' rows a row apart (a plain one, padded rows). A SIMT
// GPU keeps the weights as they are (neighbouring work-items read neighbouring columns).
TEST(GpuMapping, WideTargetsReadConstantWeightsFromFilledPanels) {
  const std::vector<Case> weighted = {
      {"matmul, a panel schedule",
       "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", {DType::Float32, {256, 300}}}, {"B", {DType::Float32, {300, 64}}}}},
      {"padded conv, a plain schedule",
       "function (I[N, H, W, C], B[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 14, 14, D] = "
       "+(I[n, x + i - 1, y + j - 1, c] * B[i, j, c, d]); }",
       {{"I", {DType::Float32, {1, 14, 14, 8}}}, {"B", {DType::Float32, {3, 3, 8, 64}}}}},
  };
  LowerOptions constant_b;
  constant_b.constants = {"B"};
  for (const auto &c : weighted) {
    auto bound = bind_program(c.text, c.inputs);
    auto lowered = lower(bound, wide_target(), constant_b);
    const Step &step = lowered.steps.at(0);
    std::string body = print_stmt(step.kernel.body);
    ASSERT_EQ(step.panels.size(), 1u) << c.name << "\n" << body;
    EXPECT_NE(body.find(step.panels[0].name), std::string::npos) << c.name << "\n" << body;
    EXPECT_EQ(body.find("pack_B"), std::string::npos) << c.name << ": a copy\n" << body;
    test::expect_lowered_matches_interp(bound, lowered, 12, 1e-4, c.name);
    EXPECT_TRUE(lower(bound, simt_target(), constant_b).steps.at(0).panels.empty()) << c.name;
    // PoCL's kernels prefetch their panels 2 KB ahead (512 floats), no other parameter.
    Target pocl = wide_target();
    pocl.panel_prefetch_bytes = 2048;
    auto prefetching = lower(bound, pocl, constant_b);
    for (const auto &p : prefetching.steps.at(0).kernel.params)
      EXPECT_EQ(p.prefetch_ahead, p.name == step.panels[0].name ? 512 : 0) << c.name << p.name;
    for (const auto &p : step.kernel.params) EXPECT_EQ(p.prefetch_ahead, 0) << c.name << p.name;
  }
}

// Where one register tile of a wide target holds every row of the image (7x7) and no panel serves
// the work-item (padding guards the rows), the columns take dimension 0: a work-group's items
// then share one vector tile of the weights on one core, instead of each reading another.
TEST(GpuMapping, WideTargetsGroupColumnsWhereOneTileHoldsEveryRow) {
  auto bound = bind_program(
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 7, 7, D] = "
      "+(I[n, x + i - 1, y + j - 1, c] * K[i, j, c, d]); }",
      {{"I", {DType::Float32, {1, 7, 7, 64}}}, {"K", {DType::Float32, {3, 3, 64, 128}}}});
  auto lowered = lower(bound, wide_target());
  const Schedule &s = lowered.steps.at(0).schedule;
  ASSERT_EQ(s.tile_sizes.at(2), 7) << s.to_json();  // the rows: y, the innermost of x and y
  EXPECT_EQ(s.tiles_per_item, 1) << s.to_json();
  std::vector<int> outputs;  // the output loops in order, innermost (dimension 0) last
  for (int j : s.loop_order)
    if (j < 4) outputs.push_back(j);
  EXPECT_EQ(outputs.back(), 1) << s.to_json();
  EXPECT_EQ(outputs.at(2), 3) << s.to_json();
  test::expect_lowered_matches_interp(bound, lowered, 13, 1e-4, "7x7 padded conv on PoCL");
}

// On a wide target the rows of a register tile run along the innermost of the output indices
// equally long, where no guard bounds it: PoCL runs a group's work-items in a loop on one core,
// which then reads and writes neighbouring pixels, not one pixel of every row of the image.
TEST(GpuMapping, WideTargetsTileRowsAlongTheInnermostUnguardedIndexOfEqualLength) {
  auto row_index = [](const std::string &text, const tile::TensorType &kernel) {
    auto bound = bind_program(text, {{"I", {DType::Float32, {1, 16, 16, 8}}}, {"K", kernel}});
    auto lowered = lower(bound, wide_target());
    const Schedule &s = lowered.steps.at(0).schedule;
    test::expect_lowered_matches_interp(bound, lowered, 17, 1e-4, text.c_str());
    int row = -1;
    for (int j : {1, 2})
      if (s.tile_sizes.at(j) > 1) row = row < 0 ? j : 0;  // 0: both tiled
    return row;
  };
  const std::string pointwise =
      "function (I[N, H, W, C], K[C, D]) -> (O) { O[n, x, y, d : N, 16, 16, D] = "
      "+(I[n, x, y, c] * K[c, d]); }";
  const std::string along_y =  // 1x7: padding guards y
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 16, 16, D] = "
      "+(I[n, x + i, y + j - 3, c] * K[i, j, c, d]); }";
  const std::string along_x =  // 7x1: padding guards x
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 16, 16, D] = "
      "+(I[n, x + i - 3, y + j, c] * K[i, j, c, d]); }";
  EXPECT_EQ(row_index(pointwise, {DType::Float32, {8, 32}}), 2);
  EXPECT_EQ(row_index(along_y, {DType::Float32, {1, 7, 8, 32}}), 1);
  EXPECT_EQ(row_index(along_x, {DType::Float32, {7, 1, 8, 32}}), 2);
}

TEST(GpuMapping, VulkanTilesFillASubgroupAndWasteFewRows) {
  const Target lavapipe = lavapipe_target();
  auto tiles = [&](int64_t m, int64_t n) {
    auto bound = bind_program(
        "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
        {{"A", {DType::Float32, {m, 32}}}, {"B", {DType::Float32, {32, n}}}});
    return lower(bound, lavapipe).steps.at(0).schedule.tile_sizes;
  };
  EXPECT_EQ(tiles(1024, 1024), (std::vector<int64_t>{16, 16, 1}));
  EXPECT_EQ(tiles(1024, 64), (std::vector<int64_t>{16, 8, 1}));   // 16 columns: 4 work-items
  EXPECT_EQ(tiles(1024, 728), (std::vector<int64_t>{16, 8, 1}));  // 16 does not divide 728
  EXPECT_EQ(tiles(1024, 16), (std::vector<int64_t>{16, 16, 1}));
  EXPECT_EQ(tiles(128, 16), (std::vector<int64_t>{16, 4, 1}));    // 8 tiles of rows: the texel
  EXPECT_EQ(tiles(37, 1024), (std::vector<int64_t>{13, 16, 1}));  // 39 rows computed, not 48
}

// Where 16 columns leave fewer work-items along the contiguous index than a subgroup has lanes
// (lavapipe runs them along dimension 0 alone), the output index with the most tiles, twice the
// lanes or more, takes dimension 0: a product's rows, a strided convolution's columns (its rows
// are guarded).
TEST(GpuMapping, LavapipeTakesTheLanesOfNarrowOutputsFromAnotherIndex) {
  const Target lavapipe = lavapipe_target();
  auto product =
      bind_program("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                   {{"A", {DType::Float32, {320, 32}}}, {"B", {DType::Float32, {32, 16}}}});
  auto lowered = lower(product, lavapipe);
  const Schedule &p = lowered.steps.at(0).schedule;
  EXPECT_EQ(p.tile_sizes, (std::vector<int64_t>{16, 16, 1}));
  EXPECT_EQ(dimension_0(p, 2), 0) << p.to_json();
  EXPECT_EQ(p.workgroup, (std::vector<int64_t>{8, 8}));
  test::expect_lowered_matches_interp(product, lowered, 5, 1e-4, "320x32x16 product on lavapipe");

  auto stem = bind_program(
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 18, 18, D] = "
      "+(I[n, 2 * x + i - 1, 2 * y + j - 1, c] * K[i, j, c, d]); }",
      {{"I", {DType::Float32, {1, 36, 36, 3}}}, {"K", {DType::Float32, {3, 3, 3, 32}}}});
  auto conv = lower(stem, lavapipe);
  const Schedule &c = conv.steps.at(0).schedule;
  EXPECT_EQ(c.tile_sizes.at(3), 16) << c.to_json();
  EXPECT_NE(dimension_0(c, 4), 3) << c.to_json();
  test::expect_lowered_matches_interp(stem, conv, 7, 1e-4, "strided 3x3 stem on lavapipe");

  // A depthwise 3x3 on 144 channels: 9 work-items of 16 would idle 7 of 16 lanes, so a pixel
  // index takes dimension 0 and the channels' 9 tiles go to dimension 1 in groups of 5 (the least
  // empty last group). 192 channels (12 work-items, 4 of 16 lanes idle) keep dimension 0: the 20
  // pixels would idle 4 of 24, not less than half that share; 32 pixels (none idle) take it.
  auto depthwise = [&](int64_t channels, int64_t pixels = 20) {
    const std::string p = std::to_string(pixels);
    return bind_program("function (I[N, H, W, C], K[KH, KW, C]) -> (O) { O[n, x, y, c : N, " + p +
                            ", " + p + ", C] = +(I[n, x + i - 1, y + j - 1, c] * K[i, j, c]); }",
                        {{"I", {DType::Float32, {1, pixels, pixels, channels}}},
                         {"K", {DType::Float32, {3, 3, channels}}}});
  };
  auto wide = depthwise(144);
  auto dw = lower(wide, lavapipe);
  const Schedule &d = dw.steps.at(0).schedule;
  EXPECT_EQ(d.tile_sizes.at(3), 16) << d.to_json();
  EXPECT_NE(dimension_0(d, 4), 3) << d.to_json();
  EXPECT_EQ(d.workgroup, (std::vector<int64_t>{8, 5})) << d.to_json();
  test::expect_lowered_matches_interp(wide, dw, 9, 1e-4, "depthwise 3x3 on 144 channels");
  const Schedule q = lower(depthwise(192), lavapipe).steps.at(0).schedule;
  EXPECT_EQ(dimension_0(q, 4), 3) << q.to_json();
  const Schedule q32 = lower(depthwise(192, 32), lavapipe).steps.at(0).schedule;
  EXPECT_NE(dimension_0(q32, 4), 3) << q32.to_json();
  EXPECT_EQ(q32.workgroup, (std::vector<int64_t>{8, 6})) << q32.to_json();
}

// With 64 channels (8 columns a work-item) the columns keep dimension 0, except in a stem on an
// image's colour channels (fewer than a texel) whose pixels' tiles fill whole subgroups: there a
// row of pixels takes it and a work-item computes 16 columns. Not a pool or a 3x3 convolution on
// 8 channels.
TEST(GpuMapping, LavapipeGivesAColourStemsLanesToItsPixels) {
  const Target lavapipe = lavapipe_target();
  auto conv = [](int64_t channels) {
    return bind_program(
        "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 16, 16, D] = "
        "+(I[n, 2 * x + i - 1, 2 * y + j - 1, c] * K[i, j, c, d]); }",
        {{"I", {DType::Float32, {1, 33, 33, channels}}},
         {"K", {DType::Float32, {3, 3, channels, 64}}}});
  };
  auto stem = conv(3);
  auto lowered = lower(stem, lavapipe);
  const Schedule &s = lowered.steps.at(0).schedule;
  EXPECT_EQ(s.tile_sizes.at(3), 16) << s.to_json();
  EXPECT_NE(dimension_0(s, 4), 3) << s.to_json();
  test::expect_lowered_matches_interp(stem, lowered, 11, 1e-4, "RGB stem to 64 channels");
  const Schedule c = lower(conv(8), lavapipe).steps.at(0).schedule;
  EXPECT_EQ(c.tile_sizes.at(3), 8) << c.to_json();
  EXPECT_EQ(dimension_0(c, 4), 3) << c.to_json();
  auto pool = bind_program("function (I[N, H, W, C]) -> (O) { O[n, x, y, c : N, 16, 16, C] = "
                           ">(I[n, 2 * x + i, 2 * y + j, c]), i < 3, j < 3; }",
                           {{"I", {DType::Float32, {1, 33, 33, 64}}}});
  const Schedule p = lower(pool, lavapipe).steps.at(0).schedule;
  EXPECT_EQ(dimension_0(p, 4), 3) << p.to_json();
}

// lavapipe keeps a padded depthwise convolution's taps' loops whole (bounds that vary from lane
// to lane would make the weights' index do so too), with its padding one condition around the
// register tile's updates; a convolution over channels, and other devices, get the guards as the
// taps' loop bounds.
TEST(GpuMapping, LavapipeRunsPaddedTapsWholeUnderOneCondition) {
  auto depthwise = bind_program(
      "function (I[N, H, W, C], K[KH, KW, C]) -> (O) { O[n, x, y, c : N, 10, 10, C] = "
      "+(I[n, x + i - 1, y + j - 1, c] * K[i, j, c]); }",
      {{"I", {DType::Float32, {1, 10, 10, 16}}}, {"K", {DType::Float32, {3, 3, 16}}}});
  struct Shape : IRVisitor {
    int ifs = 0, serial = 0, whole = 0;
    using IRVisitor::visit;
    void visit(const IfThenElse *op) override {
      ++ifs;
      IRVisitor::visit(op);
    }
    void visit(const For *op) override {
      if (op->for_kind == ForKind::Serial) {
        ++serial;
        auto *lo = as<IntImm>(op->min), *extent = as<IntImm>(op->extent);
        whole += lo && lo->value == 0 && extent && extent->value == 3;
      }
      IRVisitor::visit(op);
    }
  };
  Target lavapipe = lavapipe_target();
  auto lowered = lower(depthwise, lavapipe);
  const Schedule &s = lowered.steps.at(0).schedule;
  ASSERT_GE(s.tile_sizes.at(3), 4) << s.to_json();  // a register tile of channels
  Shape taps;
  taps.visit_stmt(lowered.steps.at(0).kernel.body);
  EXPECT_EQ(taps.serial, 2);
  EXPECT_EQ(taps.whole, 2);
  EXPECT_EQ(taps.ifs, 1) << print_stmt(lowered.steps.at(0).kernel.body);
  test::expect_lowered_matches_interp(depthwise, lowered, 17, 1e-4, "padded depthwise, lavapipe");

  // A convolution over channels keeps the guards as its taps' bounds (a condition inside the
  // channel loop would split its texels' loads).
  auto conv = bind_program(
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 10, 10, D] = "
      "+(I[n, x + i - 1, y + j - 1, c] * K[i, j, c, d]); }",
      {{"I", {DType::Float32, {1, 10, 10, 8}}}, {"K", {DType::Float32, {3, 3, 8, 32}}}});
  auto regular = lower(conv, lavapipe);
  Shape conv_loops;
  conv_loops.visit_stmt(regular.steps.at(0).kernel.body);
  EXPECT_EQ(conv_loops.whole, 0) << print_stmt(regular.steps.at(0).kernel.body);
  test::expect_lowered_matches_interp(conv, regular, 17, 1e-4, "padded convolution, lavapipe");

  lavapipe.guards_in_taps = false;
  auto bounded = lower(depthwise, lavapipe);
  Shape loops;
  loops.visit_stmt(bounded.steps.at(0).kernel.body);
  EXPECT_EQ(loops.whole, 0);
  test::expect_lowered_matches_interp(depthwise, bounded, 17, 1e-4, "padded depthwise, bounds");
}

// On a 7x7 image whose work-items each read 32 KB of weights or more (512 input channels x 16
// columns) and whose columns still give each core two subgroups (512 channels: 32 work-items), a
// work-item computes the whole image; with 160 output channels, or on 14x14, the tiles stay.
TEST(GpuMapping, LavapipeTakesASmallImageWholeWhereItsWeightsOutgrowL1) {
  const Target lavapipe = lavapipe_target();
  auto pointwise = [](int64_t pixels, int64_t in, int64_t out) {
    const std::string p = std::to_string(pixels);
    return bind_program(
        "function (I[H, W, C], K[C, D]) -> (O) { O[x, y, d : " + p + ", " + p +
            ", D] = +(I[x, y, c] * K[c, d]); }",
        {{"I", {DType::Float32, {pixels, pixels, in}}}, {"K", {DType::Float32, {in, out}}}});
  };
  auto small = pointwise(7, 512, 512);
  auto lowered = lower(small, lavapipe);
  const Schedule &s = lowered.steps.at(0).schedule;
  EXPECT_EQ(s.tile_sizes, (std::vector<int64_t>{7, 7, 16, 1})) << s.to_json();
  test::expect_lowered_matches_interp(small, lowered, 13, 1e-3, "whole 7x7x512 image a work-item");
  const Schedule narrow = lower(pointwise(7, 512, 160), lavapipe).steps.at(0).schedule;
  EXPECT_EQ(narrow.tile_sizes.at(1), 1) << narrow.to_json();
  const Schedule short_slab = lower(pointwise(7, 256, 512), lavapipe).steps.at(0).schedule;
  EXPECT_EQ(short_slab.tile_sizes.at(1), 1) << short_slab.to_json();
  const Schedule larger = lower(pointwise(14, 512, 512), lavapipe).steps.at(0).schedule;
  EXPECT_EQ(larger.tile_sizes.at(1), 1) << larger.to_json();
}

// lavapipe runs each work-group on one thread a core: a 1x1 convolution on 7x7x512 (32 x 7
// work-items of 16 columns) would run 7 groups of 32, 4 on one core and 3 on the other; in groups
// of 16 the cores get 7 each. On 14x14x256 (14 groups of 16) they are even already.
TEST(GpuMapping, LavapipeSpreadsWorkGroupsEvenlyOverItsThreads) {
  const Target lavapipe = lavapipe_target();
  auto pointwise = [](int64_t pixels, int64_t channels) {
    const std::string p = std::to_string(pixels);
    return bind_program(
        "function (I[H, W, C], K[C, D]) -> (O) { O[x, y, d : " + p + ", " + p +
            ", D] = +(I[x, y, c] * K[c, d]); }",
        {{"I", {DType::Float32, {pixels, pixels, 8}}}, {"K", {DType::Float32, {8, channels}}}});
  };
  auto small = pointwise(7, 512);
  auto lowered = lower(small, lavapipe);
  const Schedule &s = lowered.steps.at(0).schedule;
  EXPECT_EQ(s.tile_sizes, (std::vector<int64_t>{7, 1, 16, 1})) << s.to_json();
  EXPECT_EQ(s.workgroup, (std::vector<int64_t>{16, 1})) << s.to_json();
  test::expect_lowered_matches_interp(small, lowered, 3, 1e-4, "1x1 convolution on 7x7x512");
  const Schedule even = lower(pointwise(14, 256), lavapipe).steps.at(0).schedule;
  EXPECT_EQ(even.workgroup, (std::vector<int64_t>{64, 1})) << even.to_json();
}

// Elementwise on lavapipe: a work-item copies a texel (4 elements) of a contiguous index long
// enough for the lanes, or the whole of one shorter than a subgroup (a padded image's 4 channels),
// whose pixels then fill the lanes; an index of 4n + 2 elements keeps one a work-item.
TEST(GpuMapping, LavapipeGivesAnElementwiseWorkItemATexelOrAShortRow) {
  const Target lavapipe = lavapipe_target();
  auto copy = [&](int64_t channels) {
    return bind_program("function (I[H, W, C]) -> (O) { O = I * 2; }",
                        {{"I", {DType::Float32, {9, 30, channels}}}});
  };
  auto wide = copy(64);
  auto lowered = lower(wide, lavapipe);
  const Schedule &s = lowered.steps.at(0).schedule;
  EXPECT_EQ(s.tile_sizes, (std::vector<int64_t>{1, 1, 4})) << s.to_json();
  test::expect_lowered_matches_interp(wide, lowered, 5, 0, "a copy of 64 channels");
  auto rgba = copy(4);
  lowered = lower(rgba, lavapipe);
  const Schedule &r = lowered.steps.at(0).schedule;
  EXPECT_EQ(r.tile_sizes, (std::vector<int64_t>{1, 1, 4})) << r.to_json();
  const PlannedStep planned = plan_program(rgba, lavapipe).steps.at(0);
  EXPECT_EQ(gpu_launch(planned.nest, planned.model).items[0], 30) << r.to_json();
  test::expect_lowered_matches_interp(rgba, lowered, 6, 0, "a copy of 4 channels");
  EXPECT_EQ(lower(copy(66), lavapipe).steps.at(0).schedule.tile_sizes,
            (std::vector<int64_t>{1, 1, 1}));
}

// A SIMT GPU keeps 4x4 outputs per work-item in groups of 16x16 while that gives each compute unit
// 128 work-items: with 132 units (an H200) a 49x2048 product computes 4x1 per work-item instead,
// in the same groups (it stages its operands in local memory, which the whole group shares). A
// padded 3x3 convolution on 7x7x256 (its guards rule out staging) also trades its groups' rows for
// 4 groups a unit.
TEST(GpuMapping, SimtLaunchesEnoughWorkItemsAndGroupsForTheComputeUnits) {
  auto schedule = [](int cores, const std::string &text,
                     const std::map<std::string, tile::TensorType> &inputs) {
    Target gpu = simt_target();
    gpu.cores = cores;
    return lower(bind_program(text, inputs), gpu).steps.at(0).schedule;
  };
  const std::string matmul =
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  const std::map<std::string, tile::TensorType> product = {{"A", {DType::Float32, {49, 512}}},
                                                           {"B", {DType::Float32, {512, 2048}}}};
  Schedule few = schedule(16, matmul, product);
  EXPECT_EQ(few.tile_sizes, (std::vector<int64_t>{4, 4, 1}));
  EXPECT_EQ(few.workgroup, (std::vector<int64_t>{16, 16}));
  Schedule many = schedule(132, matmul, product);
  EXPECT_EQ(many.tile_sizes, (std::vector<int64_t>{4, 1, 1}));
  EXPECT_EQ(many.workgroup, (std::vector<int64_t>{16, 16}));
  EXPECT_TRUE(many.use_local_memory);

  const std::string conv =
      "function (I[N, H, W, C], K[KH, KW, C, D]) -> (O) { O[n, x, y, d : N, 7, 7, D] = "
      "+(I[n, x + i - 1, y + j - 1, c] * K[i, j, c, d]); }";
  const std::map<std::string, tile::TensorType> layer = {{"I", {DType::Float32, {1, 7, 7, 256}}},
                                                         {"K", {DType::Float32, {3, 3, 256, 256}}}};
  // 16 units: 3136 work-items of 4 channels are enough, 28 groups are not: 112 in groups of 16x2.
  Schedule conv_few = schedule(16, conv, layer);
  EXPECT_EQ(conv_few.tile_sizes, (std::vector<int64_t>{1, 1, 1, 4, 1, 1, 1}));
  EXPECT_EQ(conv_few.workgroup, (std::vector<int64_t>{16, 2}));
  // 132 units: one output per work-item (12544), 784 groups of 16.
  Schedule conv_many = schedule(132, conv, layer);
  EXPECT_EQ(conv_many.tile_sizes, (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(conv_many.workgroup, (std::vector<int64_t>{16, 1}));
}

// The GPU loops of the kernels map_to_gpu builds, as gpu_launch counts them without building one:
// work-groups in all, and work-items per group along dimensions 0 and 1.
TEST(GpuMapping, GpuLaunchCountsTheGroupsAndItemsOfTheKernel) {
  class GpuLoops : public IRVisitor {
   public:
    int64_t groups = 1, items[3] = {1, 1, 1};
    using IRVisitor::visit;
    void visit(const For *op) override {
      auto *extent = as<IntImm>(op->extent);
      if (op->for_kind == ForKind::GpuBlock) groups *= extent->value;
      if (op->for_kind == ForKind::GpuThread) items[op->gpu_dim] *= extent->value;
      IRVisitor::visit(op);
    }
  };
  int checked = 0;
  for (const auto &c : cases()) {
    auto bound = bind_program(c.text, c.inputs);
    std::vector<std::pair<ContractionNest, Schedule>> candidates;
    LowerOptions collect;
    collect.choose = [&](const ContractionNest &nest, const Kernel &, const Schedule &model) {
      for (const Schedule &s : tune::gpu_candidates(nest, simt_target()))
        candidates.push_back({nest, s});
      return model;
    };
    lower(bound, simt_target(), collect);
    for (size_t i = 0; i < candidates.size(); i += std::max<size_t>(1, candidates.size() / 8)) {
      const auto &[nest, s] = candidates[i];
      if (s.workgroup.size() < 2) continue;  // a full reduction: one group splits it
      LowerOptions pick;
      pick.choose = [&](const ContractionNest &, const Kernel &, const Schedule &) { return s; };
      GpuLoops loops;
      loops.visit_stmt(lower(bound, simt_target(), pick).steps.at(0).kernel.body);
      GpuLaunch launch = gpu_launch(nest, s);
      EXPECT_EQ(launch.groups, loops.groups) << c.name << ": " << s.to_json();
      EXPECT_EQ(launch.items[0], loops.items[0]) << c.name << ": " << s.to_json();
      EXPECT_EQ(launch.items[1], loops.items[1]) << c.name << ": " << s.to_json();
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

// A zero-padded copy of an RGB image: its contiguous index (3 channels) alone would make groups of
// 3 work-items; dimension 1 (37 columns, in 2 groups of 19) fills them, the last group partial.
TEST(GpuMapping, ShortContiguousIndicesFillTheirWorkGroupsAlongDimension1) {
  auto bound = bind_program("function (I[N, H, W, C]) -> (O) { O[n, x + 1, y + 2, c : N, 12, 37, "
                            "C] = =(I[n, x, y, c]); }",
                            {{"I", {DType::Float32, {1, 10, 33, 3}}}});
  Target lavapipe = simt_target();
  lavapipe.cores = 2;
  lavapipe.cpu_invocations = true;
  for (const Target &target : {simt_target(), lavapipe}) {
    auto lowered = lower(bound, target);
    const Schedule &s = lowered.steps.at(0).schedule;
    EXPECT_EQ(s.workgroup, (std::vector<int64_t>{64, 19})) << s.to_json();
    test::expect_lowered_matches_interp(bound, lowered, 3, 0, "padded RGB copy");
  }
}

// A SIMT register tile pays only along an output index some operand does not depend on: a row
// sum (each element read once) and a depthwise convolution's channels get one output per
// work-item there, a matrix product its 4x4 tile.
TEST(GpuMapping, SimtTilesOnlyWhereAnOperandIsReused) {
  auto schedule = [&](const std::string &text,
                      const std::map<std::string, tile::TensorType> &inputs) {
    return lower(bind_program(text, inputs), simt_target()).steps.at(0).schedule.tile_sizes;
  };
  EXPECT_EQ(schedule("function (A[M, N]) -> (S) { S[i : M] = +(A[i, j]); }",
                     {{"A", {DType::Float32, {1536, 128}}}}),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(schedule("function (I[H, W, C], K[KH, KW, C]) -> (O) { O[x, y, c : 30, 30, C] = "
                     "+(I[x + i, y + j, c] * K[i, j, c]); }",
                     {{"I", {DType::Float32, {32, 32, 64}}}, {"K", {DType::Float32, {3, 3, 64}}}}),
            (std::vector<int64_t>{4, 1, 1, 1, 1}));
  EXPECT_EQ(
      schedule("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
               {{"A", {DType::Float32, {256, 32}}}, {"B", {DType::Float32, {32, 256}}}}),
      (std::vector<int64_t>{4, 4, 1}));
}

// A SIMT GPU splits a one-operand reduction with too few outputs for its compute units over a
// work-group per output (BERT's layer norm sums: 128 rows of 768; softmax's: 12 x 128 rows of
// 128); not a product, not where the outputs alone give 128 work-items a unit, not a wide target,
// not a reduction too short for a warp's 4 iterations each. The kernel is a group per output with
// a barrier tree, as gpu_launch counts it; the search space offers 32 to 256 work-items a group.
TEST(GpuMapping, SimtSplitsReductionsOfFewOutputsOverAWorkGroup) {
  Target gpu = simt_target();
  gpu.cores = 132;
  auto lowered = [&](const std::string &text, const std::map<std::string, tile::TensorType> &inputs,
                     const Target &t) { return lower(bind_program(text, inputs), t); };
  const std::string layer_norm_mean =
      "function (X[B, N, K]) -> (M) { S[b, n, 0 : B, N, 1] = +(X[b, n, k]); M = div(S, 768.0); }";
  auto mean = lowered(layer_norm_mean, {{"X", {DType::Float32, {1, 128, 768}}}}, gpu);
  ASSERT_EQ(mean.steps.size(), 1u);
  const Schedule &s = mean.steps[0].schedule;
  EXPECT_TRUE(s.split_reduction) << s.to_json();
  EXPECT_EQ(s.workgroup, (std::vector<int64_t>{128}));
  EXPECT_NE(print_kernel(mean.steps[0].kernel).find("barrier"), std::string::npos)
      << print_kernel(mean.steps[0].kernel);

  const std::string softmax_max =
      "function (X[B, H, M, N]) -> (R) { R[b, h, m, 0 : B, H, M, 1] = >(X[b, h, m, n]); }";
  auto rows = lowered(softmax_max, {{"X", {DType::Float32, {1, 12, 128, 128}}}}, gpu);
  EXPECT_TRUE(rows.steps.at(0).schedule.split_reduction);
  EXPECT_EQ(rows.steps[0].schedule.workgroup, (std::vector<int64_t>{32}));

  // Not split: a product; outputs enough (65536 rows); a wide target; a reduction of 64.
  const std::string matmul =
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  EXPECT_FALSE(
      lowered(matmul, {{"A", {DType::Float32, {4, 768}}}, {"B", {DType::Float32, {768, 8}}}}, gpu)
          .steps.at(0)
          .schedule.split_reduction);
  EXPECT_FALSE(lowered(layer_norm_mean, {{"X", {DType::Float32, {1, 65536, 768}}}}, gpu)
                   .steps.at(0)
                   .schedule.split_reduction);
  EXPECT_FALSE(lowered(layer_norm_mean, {{"X", {DType::Float32, {1, 128, 768}}}}, wide_target())
                   .steps.at(0)
                   .schedule.split_reduction);
  EXPECT_FALSE(lowered(softmax_max, {{"X", {DType::Float32, {1, 12, 128, 64}}}}, gpu)
                   .steps.at(0)
                   .schedule.split_reduction);

  // The launch, counted from the kernel's loops and by gpu_launch, for every split candidate.
  class GpuLoops : public IRVisitor {
   public:
    int64_t groups = 1, items = 1;
    using IRVisitor::visit;
    void visit(const For *op) override {
      auto *extent = as<IntImm>(op->extent);
      if (op->for_kind == ForKind::GpuBlock) groups *= extent->value;
      if (op->for_kind == ForKind::GpuThread) items *= extent->value;
      IRVisitor::visit(op);
    }
  };
  auto bound = bind_program(layer_norm_mean, {{"X", {DType::Float32, {2, 5, 768}}}});
  std::vector<std::pair<ContractionNest, Schedule>> split;
  LowerOptions collect;
  collect.choose = [&](const ContractionNest &nest, const Kernel &, const Schedule &model) {
    for (const Schedule &c : tune::gpu_candidates(nest, gpu))
      if (c.split_reduction) split.push_back({nest, c});
    return model;
  };
  lower(bound, gpu, collect);
  ASSERT_EQ(split.size(), 4u);  // 32, 64, 128 and 256 work-items
  for (const auto &[nest, c] : split) {
    LowerOptions pick;
    pick.choose = [&](const ContractionNest &, const Kernel &, const Schedule &) { return c; };
    GpuLoops loops;
    loops.visit_stmt(lower(bound, gpu, pick).steps.at(0).kernel.body);
    GpuLaunch launch = gpu_launch(nest, c);
    EXPECT_EQ(launch.groups, 10);
    EXPECT_EQ(loops.groups, 10) << c.to_json();
    EXPECT_EQ(launch.items[0], c.workgroup[0]);
    EXPECT_EQ(loops.items, c.workgroup[0]) << c.to_json();
  }
}

}  // namespace
}  // namespace tessera::compiler
