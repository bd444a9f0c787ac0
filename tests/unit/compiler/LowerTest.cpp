// Lowered kernels, run by a small loop IR evaluator, against the reference interpreter; plus
// Bounds, output basis, printer, schedule JSON and cost model checks with hand-computed values.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "compiler/Bounds.h"
#include "compiler/CostModel.h"
#include "compiler/Fusion.h"
#include "compiler/IRPrinter.h"
#include "compiler/Lower.h"
#include "compiler/OutputBasis.h"
#include "compiler/Schedule.h"
#include "compiler/Simplify.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/compiler/LoopEval.h"
#include "tests/unit/compiler/MatchInterp.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera::compiler {
namespace {

using tile::DType;
using tile::TensorType;

tile::BoundProgram bind_text(const std::string &text, const std::map<std::string, TensorType> &in) {
  return tile::bind(tile::parse_program(text), in);
}

// Lowers for `target`, runs every step with LoopEval and compares each output with interp.
void expect_matches_interp(const std::string &text, const std::map<std::string, TensorType> &in,
                           Target target = {}) {
  auto bound = bind_text(text, in);
  // float32 kernels vs interp's double accumulation: 1e-4 absolute on values of order 1.
  test::expect_lowered_matches_interp(bound, lower(bound, target), 42, 1e-4, text);
}

Target avx512() {
  Target t;
  t.cores = 2, t.vector_bits = 512;
  return t;
}

TensorType f32(std::vector<int64_t> shape) { return {DType::Float32, std::move(shape)}; }

// ---- Bounds ---------------------------------------------------------------------------------

TEST(Bounds, PaddedConvTapsAreGuarded) {
  auto p = bind_text("function (I[X], K[KX]) -> (O) { O[x : X] = +(I[x + k - 1] * K[k]); }",
                     {{"I", f32({5})}, {"K", f32({3})}});
  const auto &s = p.statements[0];
  auto b = compute_bounds(p, s, s.contraction());
  // x spans the output; k in [0, 3) from K; 0 <= x + k - 1 <= 4 is not implied: two guards.
  EXPECT_EQ(b.lo, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(b.hi, (std::vector<int64_t>{4, 2}));
  ASSERT_EQ(b.guards.size(), 2u);
  EXPECT_EQ(b.guards[0].str(s.contraction().indices), "x + k - 1 >= 0");
  EXPECT_EQ(b.guards[1].str(s.contraction().indices), "-x - k + 5 >= 0");
}

TEST(Bounds, ConstraintLimitsARange) {
  auto p =
      bind_text("function (A[N]) -> (O) { O[i : N] = +(A[i + k]), k < 3; }", {{"A", f32({10})}});
  const auto &s = p.statements[0];
  auto b = compute_bounds(p, s, s.contraction());
  EXPECT_EQ(b.lo[1], 0);
  EXPECT_EQ(b.hi[1], 2);  // from k < 3, not from A (which allows up to 9)
  ASSERT_EQ(b.guards.size(), 1u);
  EXPECT_EQ(b.guards[0].str(s.contraction().indices), "-i - k + 9 >= 0");
}

TEST(Bounds, CumsumConstraint) {
  auto p =
      bind_text("function (A[N]) -> (O) { O[i : N] = +(A[k]), i - k < N; }", {{"A", f32({6})}});
  const auto &s = p.statements[0];
  auto b = compute_bounds(p, s, s.contraction());
  EXPECT_EQ(b.lo[1], 0);
  EXPECT_EQ(b.hi[1], 5);
  // i - k >= 0 is the only guard (i - k <= 5 is implied by the box).
  ASSERT_EQ(b.guards.size(), 1u);
  EXPECT_EQ(b.guards[0].str(s.contraction().indices), "i - k >= 0");
}

TEST(Bounds, ProjectionIsExactOverTheRationals) {
  // x + y <= 4, x - y >= 0, y >= 1: x in [1, 3] (x <= 4 - y <= 3), y in [1, 2] (2y <= x + y <= 4).
  std::vector<Inequality> q = {{{-1, -1}, 4}, {{1, -1}, 0}, {{0, 1}, -1}};
  int64_t lo, hi;
  bool empty;
  ASSERT_TRUE(project(q, 0, lo, hi, empty));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 3);
  ASSERT_TRUE(project(q, 1, lo, hi, empty));
  EXPECT_EQ(lo, 1);
  EXPECT_EQ(hi, 2);
  EXPECT_FALSE(empty);
}

// ---- Output basis ---------------------------------------------------------------------------

TEST(OutputBasis, StridedGradientGetsOneVariablePerOutputDim) {
  auto p = bind_text("function (DO[X], K[KW]) -> (DI) { DI[2*x + k - 1 : 9] = +(DO[x] * K[k]); }",
                     {{"DO", f32({4})}, {"K", f32({3})}});
  auto change = change_output_basis(p.statements[0].contraction());
  ASSERT_TRUE(change.changed);
  const auto &c = change.contraction;
  EXPECT_EQ(c.indices, (std::vector<std::string>{"o0", "x"}));
  EXPECT_EQ(c.inputs[0].dims[0].str(c.indices), "x");
  EXPECT_EQ(c.inputs[1].dims[0].str(c.indices), "o0 - 2*x + 1");
}

TEST(OutputBasis, IndicesAConstraintPinsToOneValueAreSubstituted) {
  // A depthwise convolution as grouped convolutions are written (groups of 1): co < 1 pins co to
  // 0, so the output access is g alone and no reduction index ranges over one value that depends
  // on the output channel (which kept the channel loop from being vectorized).
  const std::string depthwise =
      "function (I[N, X, C], K[KX, CI, C]) -> (O) { O[n, x, g + co : N, X, C] = "
      "+(I[n, x + k - 1, g + ci] * K[k, ci, g + co]), co < 1; }";
  std::map<std::string, TensorType> in = {{"I", f32({1, 6, 16})}, {"K", f32({3, 1, 16})}};
  auto p = bind_text(depthwise, in);
  auto change = change_output_basis(p.statements[0].contraction());
  ASSERT_TRUE(change.changed);
  const auto &c = change.contraction;
  EXPECT_EQ(c.indices, (std::vector<std::string>{"n", "x", "g", "k", "ci"}));
  EXPECT_EQ(c.inputs[1].dims[2].str(c.indices), "g");
  EXPECT_TRUE(c.constraints.empty());
  expect_matches_interp(depthwise, in, avx512());
  // Pinned to a value other than 0, and a constraint the pinned value fails (no point at all).
  expect_matches_interp("function (A[N]) -> (O) { O[i : N] = +(A[i + j]), j - 2 < 1, 3 - j < 2; }",
                        {{"A", f32({7})}});
  expect_matches_interp("function (A[N]) -> (O) { O[i : N] = +(A[i + j]), j < 1, j + 4 < 3; }",
                        {{"A", f32({7})}});
}

TEST(LowerVsInterp, OutputBasisChanges) {
  expect_matches_interp(
      "function (DO[X], K[KW]) -> (DI) { DI[2*x + k - 1 : 9] = +(DO[x] * K[k]); }",
      {{"DO", f32({4})}, {"K", f32({3})}});
  expect_matches_interp("function (DO[X], K[KW]) -> (DI) { DI[x + k : 7] = +(DO[x] * K[k]); }",
                        {{"DO", f32({5})}, {"K", f32({3})}});
  // Dilated: output stride 1 in x, 2 in k.
  expect_matches_interp("function (DO[X], K[KW]) -> (DI) { DI[x + 2*k : 9] = +(DO[x] * K[k]); }",
                        {{"DO", f32({5})}, {"K", f32({3})}});
  // A diagonal (dependent output dims) and a fractional output.
  expect_matches_interp("function (A[N]) -> (O) { O[i, i : N, N] = +(A[i]); }", {{"A", f32({4})}});
  expect_matches_interp("function (A[N]) -> (O) { O[i/2 : 4] = +(A[i]); }", {{"A", f32({8})}});
  // Hand-written pooling backward, stride 2, window 2, 2-D.
  expect_matches_interp(
      "function (DO[X, Y]) -> (DI) { DI[2*x + i, 2*y + j : 6, 6] = +(DO[x, y]), i < 2, j < 2; }",
      {{"DO", f32({3, 3})}});
}

// ---- Lowering, fusion, schedules ------------------------------------------------------------

TEST(LowerVsInterp, ContractionsAndElementwise) {
  const std::string mm =
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }";
  expect_matches_interp(mm, {{"A", f32({5, 7})}, {"B", f32({7, 6})}});
  expect_matches_interp(mm, {{"A", f32({13, 9})}, {"B", f32({9, 64})}},
                        avx512());  // register-blocked
  expect_matches_interp("function (A[N, M]) -> (O) { O[i : N] = >(A[i, j]); }",
                        {{"A", f32({4, 5})}});
  expect_matches_interp("function (A[N]) -> (O) { O[i : N] = +(A[k]), i - k < N; }",
                        {{"A", f32({6})}});
  expect_matches_interp("function (A[N], D[M]) -> (O) { O[i : M] = +(A[i - 2]) default D; }",
                        {{"A", f32({4})}, {"D", f32({7})}});
  expect_matches_interp("function (X[N], F[M]) -> (Q) { Q[i + 1 : M] = =(X[i]) default F; }",
                        {{"X", f32({4})}, {"F", f32({6})}});
  expect_matches_interp("function (A[N, M], B[M]) -> (O) { T = A * B; S = exp(T); O = S - 1.5; }",
                        {{"A", f32({3, 32})}, {"B", f32({32})}}, avx512());
  // Max pool with padding: unwritten elements are impossible but taps are guarded.
  expect_matches_interp("function (I[X]) -> (O) { O[x : 4] = >(I[2*x + k - 1]), k < 3; }",
                        {{"I", f32({8})}});
}

TEST(LowerVsInterp, ConvWithBiasAndReluIsOneKernel) {
  const std::string conv = R"(function (I[N, H, W, CI], K[KH, KW, CI, CO], B[CO]) -> (R) {
    O[n, x, y, co : N, H, W, CO] = +(I[n, x + kx - 1, y + ky - 1, ci] * K[kx, ky, ci, co]);
    S = O + B;
    R = relu(S);
  })";
  std::map<std::string, TensorType> in = {
      {"I", f32({1, 5, 6, 3})}, {"K", f32({3, 3, 3, 32})}, {"B", f32({32})}};
  expect_matches_interp(conv, in, avx512());
  auto lowered = lower(bind_text(conv, in), avx512());
  ASSERT_EQ(lowered.steps.size(), 1u);
  EXPECT_EQ(lowered.steps[0].fused, (std::vector<std::string>{"O", "R", "S"}));
  for (const auto &b : lowered.buffers) EXPECT_TRUE(b.name != "O" && b.name != "S") << b.name;
}

// Batch norm as a framework writes it (per-channel reshapes, sqrt of the variance) and relu as
// `cond(x > 0, x, 0)`, which reads its input twice: the convolution, the norm and the relu are one
// kernel; sqrt(variance + eps), per channel, is computed once by a kernel of its own; reshapes
// are no kernel and no buffer, their readers read their input.
TEST(LowerVsInterp, ConvBatchNormReluIsOneKernelPlusThePerChannelSqrt) {
  const std::string conv = R"(function (I[N, H, W, CI], K[KH, KW, CI, CO], M[CO], V[CO], G[CO])
      -> (R) {
    O[n, x, y, co : N, H, W, CO] = +(I[n, x + kx - 1, y + ky - 1, ci] * K[kx, ky, ci, co]);
    M4 = reshape(M, 1, 1, 1, CO);
    C = sub(O, M4);
    V4 = reshape(V, 1, 1, 1, CO);
    E = add(V4, 1.5);
    S = sqrt(E);
    D = div(C, S);
    G4 = reshape(G, 1, 1, 1, CO);
    Y = mul(D, G4);
    P = cmp_gt(Y, 0.0);
    R = cond(P, Y, 0);
  })";
  std::map<std::string, TensorType> in = {{"I", f32({1, 8, 9, 3})},
                                          {"K", f32({3, 3, 3, 16})},
                                          {"M", f32({16})},
                                          {"V", f32({16})},
                                          {"G", f32({16})}};
  expect_matches_interp(conv, in, avx512());
  auto lowered = lower(bind_text(conv, in), avx512());
  ASSERT_EQ(lowered.steps.size(), 2u);
  EXPECT_EQ(lowered.steps[0].fused, (std::vector<std::string>{"E", "S"}));
  EXPECT_EQ(lowered.steps[1].fused, (std::vector<std::string>{"C", "D", "O", "P", "R", "Y"}));
  std::set<std::string> buffers;
  for (const auto &b : lowered.buffers) buffers.insert(b.name);
  EXPECT_EQ(buffers, (std::set<std::string>{"G", "I", "K", "M", "R", "S", "V"}));
}

TEST(LowerVsInterp, SmallOrCheapBroadcastsStayInline) {
  // sqrt of a tensor as large as the kernel's, and a cheap per-channel add, are inlined.
  auto lowered = lower(bind_text("function (A[N, C], B[C], X[N, C]) -> (O) { "
                                 "S = sqrt(X); E = B + 1.0; O = A * E + S; }",
                                 {{"A", f32({70, 4})}, {"B", f32({4})}, {"X", f32({70, 4})}}),
                       Target{});
  ASSERT_EQ(lowered.steps.size(), 1u);
  EXPECT_EQ(lowered.steps[0].fused, (std::vector<std::string>{"E", "O", "S"}));
}

TEST(LowerVsInterp, ReadsManyTimesFuseUntilTheCopiesCap) {
  // Each statement reads the one before twice: T4 would be expanded 16 times in O, so the chain
  // is cut there (at most 8 copies of a statement in one kernel).
  const std::string text = "function (A[N]) -> (O) { T1 = A * A; T2 = T1 * T1; T3 = T2 * T2; "
                           "T4 = T3 - T3; T5 = T4 * T4; T6 = T5 * T5; O = T6 + T6; }";
  std::map<std::string, TensorType> in = {{"A", f32({9})}};
  expect_matches_interp(text, in);
  auto lowered = lower(bind_text(text, in), Target{});
  ASSERT_EQ(lowered.steps.size(), 2u);
  EXPECT_EQ(lowered.steps[0].fused, (std::vector<std::string>{"T1", "T2", "T3"}));
  EXPECT_EQ(lowered.steps[1].fused, (std::vector<std::string>{"O", "T4", "T5", "T6"}));
}

TEST(LowerVsInterp, ReshapesAreViewsUnlessAHostStepOrAnOutputNeedsThem) {
  // A reshape read by a contraction (flatten before dense) and one of a reshape: no steps.
  const std::string dense = R"(function (X[N, H, W], W1[F, U]) -> (Y) {
    Z = reshape(X, N, H * W);
    F2 = reshape(Z, N, 2, H * W / 2);
    G = reshape(F2, N, H * W);
    Y[n, u : N, U] = +(G[n, f] * W1[f, u]);
  })";
  std::map<std::string, TensorType> in = {{"X", f32({2, 3, 4})}, {"W1", f32({12, 5})}};
  expect_matches_interp(dense, in);
  auto lowered = lower(bind_text(dense, in), Target{});
  ASSERT_EQ(lowered.steps.size(), 1u);
  EXPECT_EQ(lowered.steps[0].kernel.name, "Y");
  // An output reshape is stored; a reshape another special reads (gather) keeps its buffer too.
  const std::string kept = "function (X[N, M], I[K]) -> (O, Q) { O = reshape(X, M, N); "
                           "R = reshape(X, M, N); Q = gather(R, I); }";
  std::map<std::string, TensorType> in2 = {{"X", f32({3, 4})}, {"I", {DType::Int32, {2}}}};
  expect_matches_interp(kept, in2);
  EXPECT_EQ(lower(bind_text(kept, in2), Target{}).steps.size(), 3u);
}

TEST(LowerVsInterp, Specials) {
  expect_matches_interp("function (A[N, M]) -> (O) { O = reshape(A, 6, 2); }",
                        {{"A", f32({3, 4})}});
  expect_matches_interp("function (A[N, M]) -> (O) { O = index(A, 1); }", {{"A", f32({3, 4})}});
  // Random int32 indices in (-1, 1) are all 0: scatter leaves rows 1-3 unwritten, which it must
  // still store (it claims to overwrite its output whole).
  TensorType i32x6{DType::Int32, {6}};
  expect_matches_interp("function (V[K, M], I[K], S[N, M]) -> (O) { O = scatter(V, I, S); }",
                        {{"V", f32({6, 3})}, {"I", i32x6}, {"S", f32({4, 3})}});
  expect_matches_interp("function (T[N, M], I[K]) -> (O) { O = gather(T, I); }",
                        {{"T", f32({5, 3})}, {"I", i32x6}});
}

// Average pooling as PlaidML's Keras backend writes it: the window sums divided by the in-range
// tap counts, computed from index(). index is elementwise code, so the division fuses into the
// pooling contraction as its epilogue and the count tensors are never stored.
TEST(LowerVsInterp, AveragePoolCountedByIndexIsOneKernel) {
  const std::string pool = R"(function (I[N, H, W, C]) -> (O) {
    S[n, i, j, c : N, H, W, C] = +(I[n, i + k - 1, j + l - 1, c]), k < 3, l < 3;
    X = index(S, 1);
    Y = index(S, 2);
    R = min(X + 2, H) - max(X - 1, 0);
    Q = min(Y + 2, W) - max(Y - 1, 0);
    O = S / as_float(R * Q, 32);
  })";
  std::map<std::string, TensorType> in = {{"I", f32({1, 7, 6, 32})}};
  expect_matches_interp(pool, in, avx512());
  auto lowered = lower(bind_text(pool, in), avx512());
  ASSERT_EQ(lowered.steps.size(), 1u);
  EXPECT_EQ(lowered.steps[0].fused, (std::vector<std::string>{"O", "Q", "R", "S", "X", "Y"}));
}

// A concatenation as PlaidML's Keras backend writes it (Inception's blocks): a chain of `=` links,
// each placing one part over the previous as its default, here with a concatenation nested as a
// part of another. Every part's kernel stores its box of the result's buffer and the links run no
// step; the parts fill the buffer, so it needs no zero fill (a hole would show as NaN).
TEST(LowerVsInterp, ConcatenationPartsAreStoredInPlace) {
  const std::string block = R"(function (I[N, H, W, C], K[CI, CO], B[CO]) -> (O) {
    A[n, x, y, co : N, H, W, CO] = +(I[n, x, y, ci] * K[ci, co]);
    R = relu(A + B);
    P[n, x, y, c : N, H, W, C] = >(I[n, x + k - 1, y + l - 1, c]), k < 3, l < 3;
    E = exp(I);
    Q0[n, x, y, c : N, H, W, 64] = =(P[n, x, y, c]);
    Q1[n, x, y, c + 32 : N, H, W, 64] = =(E[n, x, y, c]) default Q0;
    C0[n, x, y, c : N, H, W, 112] = =(R[n, x, y, c]);
    C1[n, x, y, c + 48 : N, H, W, 112] = =(Q1[n, x, y, c]) default C0;
    O[n, x, y, f : N, H, W, 8] = +(C1[n, x, y, c] * K[c, f]);
  })";
  std::map<std::string, TensorType> in = {
      {"I", f32({1, 5, 6, 32})}, {"K", f32({112, 48})}, {"B", f32({48})}};
  expect_matches_interp(block, in, avx512());
  auto lowered = lower(bind_text(block, in), avx512());
  std::vector<std::string> steps;
  for (const auto &step : lowered.steps) {
    steps.push_back(step.kernel.name);
    if (step.kernel.name != "O") {
      EXPECT_EQ(step.kernel.params[0].name, "C1") << step.kernel.name;
    }
  }
  EXPECT_EQ(steps, (std::vector<std::string>{"R", "P", "E", "O"}));
  EXPECT_TRUE(written_whole_first(lowered).count("C1"));
  for (const auto &b : lowered.buffers)
    EXPECT_TRUE(b.name != "C0" && b.name != "Q1" && b.name != "R") << b.name;

  // Left as copies (against a chain done in place): a part another statement reads too, parts that
  // leave a gap (the rest is 0), and an overlapping link (the later part wins).
  auto copies = [&](const std::string &text, const std::map<std::string, TensorType> &inputs) {
    expect_matches_interp(text, inputs, avx512());
    size_t n = 0;
    for (const auto &step : lower(bind_text(text, inputs), avx512()).steps)
      n += step.kernel.name == "C0" || step.kernel.name == "C1";
    return n;
  };
  // Two 3x16 parts, the second at column `at` of a result `width` columns wide; `more` reads the
  // first part once more.
  auto chain = [](int width, int at, const std::string &more) {
    std::string w = std::to_string(width);
    return "function (X[N, M], Y[N, M]) -> (O" + std::string(more.empty() ? "" : ", T") +
           ") { S = exp(X); U = exp(Y); " + more + " C0[i, j : 3, " + w +
           "] = =(S[i, j]); C1[i, j + " + std::to_string(at) + " : 3, " + w +
           "] = =(U[i, j]) default C0; O[i : N] = +(C1[i, j]); }";
  };
  std::map<std::string, TensorType> two = {{"X", f32({3, 16})}, {"Y", f32({3, 16})}};
  EXPECT_EQ(copies(chain(32, 16, ""), two), 0u);  // the control: done in place
  EXPECT_EQ(copies(chain(32, 16, "T = S * 2.0;"), two), 2u);
  EXPECT_EQ(copies(chain(40, 24, ""), two), 2u);
  EXPECT_EQ(copies(chain(24, 8, ""), two), 2u);
}

// A layer norm's variance as frameworks write it: the squares are computed inside the reduction
// that reads each of them once; the centred values, read by the normalisation too, keep their
// kernel. A product that reads its input many times (a matrix product) does not compute it in
// place, nor does a pool the epilogue (bias, relu) of the convolution it reads.
TEST(LowerVsInterp, ReductionsComputeAnInputTheyReadOnceInPlace) {
  auto steps = [&](const std::string &text, const std::map<std::string, TensorType> &in) {
    expect_matches_interp(text, in, avx512());
    std::vector<std::vector<std::string>> fused;
    for (const auto &step : lower(bind_text(text, in), avx512()).steps) fused.push_back(step.fused);
    return fused;
  };
  using Steps = std::vector<std::vector<std::string>>;
  const std::string norm = R"(function (X[N, K]) -> (O) {
    S[n, 0 : N, 1] = +(X[n, k]);
    C = X - S / 48.0;
    Q = C * C;
    V[n, 0 : N, 1] = +(Q[n, k]);
    O = C / sqrt(V / 48.0 + 0.001);
  })";
  EXPECT_EQ(steps(norm, {{"X", f32({5, 48})}}), (Steps{{"S"}, {"C"}, {"Q", "V"}, {"O"}}));

  const std::string product = R"(function (A[M, K], B[K, N]) -> (Y) {
    T = A * 2.0;
    Y[m, n : M, N] = +(T[m, k] * B[k, n]);
  })";
  EXPECT_EQ(steps(product, {{"A", f32({6, 5})}, {"B", f32({5, 32})}}), (Steps{{"T"}, {"Y"}}));

  const std::string pool = R"(function (I[N, H, W, CI], K[CI, CO], B[CO]) -> (P) {
    O[n, x, y, co : N, H, W, CO] = +(I[n, x, y, ci] * K[ci, co]);
    R = relu(O + B);
    P[n, c : N, CO] = +(R[n, x, y, c]);
  })";
  EXPECT_EQ(steps(pool, {{"I", f32({1, 3, 4, 8})}, {"K", f32({8, 32})}, {"B", f32({32})}}),
            (Steps{{"O", "R"}, {"P"}}));
}

// A layer norm as BERT's exporter writes it: the mean its own statement, the centred values a
// plain subtraction read by the variance's sum (through the squares) and by the normalisation, two
// kernels. The subtraction is computed again in each and has no kernel or buffer of its own. Not
// where it divides (costly), nor where it is the epilogue of the product it reads.
TEST(LowerVsInterp, CheapStatementsAreComputedAgainInEachReadersKernel) {
  auto steps = [&](const std::string &text, const std::map<std::string, TensorType> &in) {
    expect_matches_interp(text, in, avx512());
    auto lowered = lower(bind_text(text, in), avx512());
    std::vector<std::vector<std::string>> fused;
    for (const auto &step : lowered.steps) fused.push_back(step.fused);
    std::set<std::string> buffers;
    for (const auto &b : lowered.buffers) buffers.insert(b.name);
    EXPECT_EQ(buffers.count("C"), 0u) << text;
    return fused;
  };
  using Steps = std::vector<std::vector<std::string>>;
  const std::string norm = R"(function (X[N, K]) -> (O) {
    S[n, 0 : N, 1] = +(X[n, k]);
    M = S / 48.0;
    C = X - M;
    Q = C * C;
    V[n, 0 : N, 1] = +(Q[n, k]);
    O = C / sqrt(V / 48.0 + 0.001);
  })";
  EXPECT_EQ(steps(norm, {{"X", f32({5, 48})}}), (Steps{{"M", "S"}, {"C", "Q", "V"}, {"C", "O"}}));

  auto plan = [&](const std::string &text, const std::map<std::string, TensorType> &in) {
    return plan_fusion(bind_text(text, in));
  };
  const std::string divides = R"(function (X[N, K], M[N, 1]) -> (O) {
    C = X / M;
    V[n, 0 : N, 1] = +(C[n, k]);
    O = C * V;
  })";
  EXPECT_FALSE(plan(divides, {{"X", f32({5, 48})}, {"M", f32({5, 1})}}).inlined("C"));
  const std::string epilogue = R"(function (A[M, K], B[K, N], Z[M, N]) -> (O) {
    P[m, n : M, N] = +(A[m, k] * B[k, n]);
    C = P - Z;
    V[m, 0 : M, 1] = +(C[m, n]);
    O = C * V;
  })";
  auto e = plan(epilogue, {{"A", f32({5, 8})}, {"B", f32({8, 32})}, {"Z", f32({5, 32})}});
  EXPECT_FALSE(e.inlined("C"));
  EXPECT_EQ(e.contraction_of.at("C"), "P");
}

// Attention's heads split from the hidden dimension as a framework writes it: `=` copies that
// permute dimensions. The queries' copy, which keeps the innermost dimension innermost and which
// the product reads as its broadcast operand, is read in place: no kernel, no buffer. The keys'
// transpose (innermost moved) and the values' copy (read as the product's vectors, along its
// output's innermost dimension) keep their kernels.
TEST(LowerVsInterp, PermutationsAProductBroadcastsAreReadInPlace) {
  const std::string attention = R"(function (Q[M, H, D], K[M, H, D], V[M, H, D]) -> (O) {
    Q2[h, m, d : H, M, D] = =(Q[m, h, d]);
    K2[h, d, n : H, D, M] = =(K[n, h, d]);
    S[h, m, n : H, M, M] = +(Q2[h, m, d] * K2[h, d, n]);
    V2[h, n, d : H, M, D] = =(V[n, h, d]);
    O[h, m, d : H, M, D] = +(S[h, m, n] * V2[h, n, d]);
  })";
  std::map<std::string, TensorType> in = {
      {"Q", f32({7, 3, 32})}, {"K", f32({7, 3, 32})}, {"V", f32({7, 3, 32})}};
  expect_matches_interp(attention, in, avx512());
  auto lowered = lower(bind_text(attention, in), avx512());
  std::vector<std::vector<std::string>> fused;
  for (const auto &step : lowered.steps) fused.push_back(step.fused);
  EXPECT_EQ(fused, (std::vector<std::vector<std::string>>{{"K2"}, {"Q2", "S"}, {"V2"}, {"O"}}));
  for (const auto &b : lowered.buffers) EXPECT_NE(b.name, "Q2");
}

// Attention's heads merged back into the hidden dimension: the product stores each element where
// the permuting copy would put it, and the copy runs no step (no buffer for the product). A copy
// that moves the innermost dimension (a transpose: scattered stores) stays a kernel.
TEST(LowerVsInterp, PermutationOfAKernelsOutputIsStoredInPlace) {
  auto text = [](const std::string &permutation) {
    return R"(function (A[H, M, K], B[H, K, D], W[C, F]) -> (Y) {
      T[h, m, d : H, M, D] = +(A[h, m, k] * B[h, k, d]);
      )" + permutation +
           R"(
      R = reshape(P, M, H * D);
      Y[m, f : M, F] = +(R[m, c] * W[c, f]);
    })";
  };
  std::map<std::string, TensorType> in = {
      {"A", f32({3, 5, 4})}, {"B", f32({3, 4, 32})}, {"W", f32({96, 16})}};
  auto steps = [&](const std::string &program) {
    expect_matches_interp(program, in, avx512());
    auto lowered = lower(bind_text(program, in), avx512());
    std::vector<std::string> names;
    for (const auto &step : lowered.steps) names.push_back(step.kernel.name);
    for (const auto &b : lowered.buffers) names.push_back("buffer " + b.name);
    return names;
  };
  EXPECT_EQ(steps(text("P[m, h, d : M, H, D] = =(T[h, m, d]);")),
            (std::vector<std::string>{"T", "Y", "buffer A", "buffer B", "buffer P", "buffer W",
                                      "buffer Y"}));
  auto transposed = text("P[m, d, h : M, D, H] = =(T[h, m, d]);");
  EXPECT_EQ(steps(transposed)[1], "P");
}

TEST(Lower, GatherAndReshapeCopiesAreVectorizedNests) {
  auto lowered = lower(bind_text("function (T[N, M], I[K]) -> (O, R) { O = gather(T, I); "
                                 "R = reshape(T, 2, 160); }",
                                 {{"T", f32({5, 64})}, {"I", {DType::Int32, {6}}}}),
                       avx512());
  ASSERT_EQ(lowered.steps.size(), 2u);
  for (const auto &step : lowered.steps)
    EXPECT_EQ(step.schedule.vector_width, 16) << step.kernel.name;
}

TEST(Lower, BuffersNeedNoFillOnlyWhenAKernelOverwritesThemFirst) {
  // prng_* run on the host (no claim about what they write); the kernel after them, and the
  // fused conv kernel, store every element of their outputs.
  auto prng = bind_text("function (X[N, M]) -> (S, V) { T = prng_step(X, 3, 4); S = prng_state(T); "
                        "U = prng_value(T); V = U * 2.0; }",
                        {{"X", {DType::UInt32, {3, 2048}}}});
  EXPECT_EQ(written_whole_first(lower(prng, Target{})), (std::set<std::string>{"V"}));
  auto conv = bind_text("function (I[N, H, C], K[KH, C, F]) -> (R) { "
                        "O[n, x, f : N, H, F] = +(I[n, x + k - 1, c] * K[k, c, f]); R = relu(O); }",
                        {{"I", f32({1, 6, 3})}, {"K", f32({3, 3, 4})}});
  EXPECT_EQ(written_whole_first(lower(conv, Target{})), (std::set<std::string>{"R"}));
}

TEST(Lower, UnboundedIndexIsAnError) {
  EXPECT_THROW(
      bind_text("function (A[N]) -> (O) { O[i : N] = +(A[i]), i - k < N; }", {{"A", f32({4})}}),
      tile::Error);
}

TEST(Lower, LogPrintsOnlyPassesThatChanged) {
  auto p = bind_text("function (A[N]) -> (O) { O = A + 1; }", {{"A", f32({3})}});
  std::vector<std::string> passes;
  LowerOptions o;
  o.log = [&](const std::string &pass, const std::string &) { passes.push_back(pass); };
  lower(p, Target{}, o);
  // Fusion changed nothing; the scheduler (1 core, 3 elements) keeps the plain loop.
  EXPECT_EQ(passes, (std::vector<std::string>{"lower O"}));
}

// ---- Printer, JSON, cost model --------------------------------------------------------------

TEST(IRPrinter, ForStoreAndIndexMath) {
  Expr i = Var::make(Type::i64(), "i"), j = Var::make(Type::i64(), "j");
  Expr idx = Binary::make(Binary::Op::Add, Binary::make(Binary::Op::Mul, i, IntImm::make(64)), j);
  Type f = {DType::Float32, 1};
  Stmt s = For::make(
      "i", IntImm::make(0), IntImm::make(128), ForKind::Parallel,
      Store::make("C", idx,
                  Binary::make(Binary::Op::Add, Load::make(f, "C", idx), Load::make(f, "A", i))));
  EXPECT_EQ(print_stmt(s), "for i in [0, 128) parallel {\n  C[i*64 + j] = C[i*64 + j] + A[i]\n}\n");
}

// D[i - 2, i] has no valid point for i in [0, 1): the guard is false at compile time, and the load
// at a negative constant index goes with it (shader compilers reject such loads even where dead).
TEST(Simplify, AGuardFalseAtCompileTimeGoesWithWhatItHeld) {
  std::string text = "function (D[D0, D1]) -> (T1) { T1[i : 1] = >(D[i - 2, i]); }";
  auto bound = bind_text(text, {{"D", {DType::Float32, {3, 4}}}});
  auto lowered = lower(bound, Target{});
  for (const auto &s : lowered.steps)
    if (s.kind == Step::Kind::Kernel) {
      std::string printed = print_kernel(s.kernel);
      EXPECT_EQ(printed.find("if"), std::string::npos) << printed;
      EXPECT_EQ(printed.find("D["), std::string::npos) << printed;
    }
  expect_matches_interp(text, {{"D", {DType::Float32, {3, 4}}}});
}

TEST(Simplify, ConstantComparisonsFold) {
  Expr two = IntImm::make(2), three = IntImm::make(3);
  EXPECT_EQ(print_expr(simplify(Binary::make(Binary::Op::LT, two, three))), "1");
  EXPECT_EQ(print_expr(simplify(Binary::make(
                Binary::Op::GE, Binary::make(Binary::Op::Sub, two, three), IntImm::make(0)))),
            "0");
  Expr b = Var::make({DType::Bool, 1}, "b");
  Expr no = Binary::make(Binary::Op::LT, three, two),
       yes = Binary::make(Binary::Op::LT, two, three);
  EXPECT_EQ(print_expr(simplify(Binary::make(Binary::Op::And, b, no))), "0");
  EXPECT_EQ(print_expr(simplify(Binary::make(Binary::Op::And, yes, b))), "b");
  EXPECT_EQ(print_expr(simplify(Binary::make(Binary::Op::Or, b, yes))), "1");
  EXPECT_EQ(print_expr(simplify(Binary::make(Binary::Op::Or, no, b))), "b");
}

TEST(Schedule, JsonRoundTripWithStableKeys) {
  Schedule s;
  s.tile_sizes = {8, 32, 1};
  s.loop_order = {1, 0, 2};
  s.vector_index = 1, s.vector_width = 16, s.unroll = 2, s.parallel_loops = 1;
  EXPECT_EQ(
      s.to_json(),
      R"({"tile_sizes":[8,32,1],"loop_order":[1,0,2],"vector_index":1,"vector_width":16,"unroll":2,"parallel_loops":1,"workgroup":[],"use_local_memory":false})");
  EXPECT_EQ(Schedule::from_json(s.to_json()), s);
  EXPECT_THROW(Schedule::from_json("{\"tile_sizes\": 3}"), tile::Error);
  // tiles_per_item appears only where it is used, so schedules stored before it read back alike.
  s.tiles_per_item = 8;
  EXPECT_EQ(
      s.to_json(),
      R"({"tile_sizes":[8,32,1],"loop_order":[1,0,2],"vector_index":1,"vector_width":16,"unroll":2,"parallel_loops":1,"workgroup":[],"use_local_memory":false,"tiles_per_item":8})");
  EXPECT_EQ(Schedule::from_json(s.to_json()), s);
  try {
    Schedule::from_json(
        R"({"tile_sizes":[1],"loop_order":[0],"vector_index":-1,"vector_width":1,"unroll":1,"parallel_loops":0,"tiles_per_item":0})");
    FAIL() << "expected an error";
  } catch (const tile::Error &e) {
    EXPECT_NE(std::string(e.what()).find("non-positive vector_width, unroll or tiles_per_item"),
              std::string::npos)
        << e.what();
  }
}

TEST(CostModel, Sgemm1024OnAvx512IsRegisterBlocked) {
  auto p =
      bind_text("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                {{"A", f32({1024, 1024})}, {"B", f32({1024, 1024})}});
  auto lowered = lower(p, avx512());
  const Schedule &s = lowered.steps[0].schedule;
  // 16 floats per vector, 2 vectors x 8 rows = 16 accumulators of 32 registers.
  EXPECT_EQ(s.vector_index, 1);
  EXPECT_EQ(s.vector_width, 16);
  EXPECT_EQ(s.tile_sizes, (std::vector<int64_t>{8, 32, 1}));
  EXPECT_EQ(s.parallel_loops, 1);
}

}  // namespace
}  // namespace tessera::compiler
