// Row reductions in two stages (compiler/RowReductions.h): which reductions split and into what,
// that the program computes what the original does (interp against interp), that the stages'
// loads are dense vectors on a 16-lane target, and every device against interp on the original.
#include <gtest/gtest.h>

#include "backends/Registry.h"
#include "compiler/IRPrinter.h"
#include "compiler/Lower.h"
#include "compiler/RowReductions.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/compiler/RandomInputs.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using tile::DType;
using tile::TensorType;

tile::BoundProgram bound(const std::string &source, const std::vector<int64_t> &shape) {
  return tile::bind(tile::parse_program(source), {{"X", {DType::Float32, shape}}});
}

void expect_near(const TensorMap &want, const TensorMap &got, const tile::BoundProgram &p,
                 const std::string &where) {
  for (const auto &[name, type] : p.outputs) {
    const HostTensor &a = want.at(name), &b = got.at(name);
    ASSERT_EQ(a.type(), b.type()) << where << " " << name;
    for (int64_t i = 0; i < a.elements(); ++i)
      ASSERT_NEAR(b.get_double(i), a.get_double(i), 1e-4 * (1 + std::abs(a.get_double(i))))
          << where << " " << name << " at " << i;
  }
}

std::vector<std::string> outputs_of(const tile::BoundProgram &p) {
  std::vector<std::string> out;
  for (const auto &s : p.statements) out.push_back(s.output);
  return out;
}

// Softmax's and a layer norm's reductions as BERT's Tile writes them (an output dimension of 1,
// an epilogue on the mean).
const char *const kSoftmax = R"(function (X[B, H, M, N]) -> (Y) {
  R[b, h, m, 0 : B, H, M, 1] = >(X[b, h, m, n]);
  E = exp(sub(X, R));
  S[b, h, m, 0 : B, H, M, 1] = +(E[b, h, m, n]);
  Y = div(E, S);
})";
const char *const kMean = R"(function (X[B, M, K]) -> (Y, L) {
  S[b, m, 0 : B, M, 1] = +(X[b, m, k]);
  Y = div(S, 768.0);
  L[b, m : B, M] = <(X[b, m, k]);
})";

TEST(RowReductions, SoftmaxAndLayerNormReductionsSplitInTwoStages) {
  auto softmax = bound(kSoftmax, {1, 3, 5, 128});
  auto split = compiler::split_row_reductions(softmax, 16);
  EXPECT_EQ(outputs_of(split),
            (std::vector<std::string>{"R_lanes", "R", "E", "S_lanes", "S", "Y"}));
  EXPECT_EQ(split.type_of("R_lanes").shape, (std::vector<int64_t>{1, 3, 5, 1, 16}));
  for (const auto &s : split.statements)
    if (s.output == "R_lanes") {
      const auto &c = s.contraction();
      EXPECT_EQ(c.inputs[0].dims.back().str(c.indices), "n_lane + 16*n_chunk");
    }
  TensorMap in = test::random_inputs(softmax, 3, -4, 4);
  expect_near(interpret(softmax, in), interpret(split, in), softmax, "softmax");

  auto mean = bound(kMean, {2, 7, 768});
  auto split_mean = compiler::split_row_reductions(mean, 8);
  EXPECT_EQ(outputs_of(split_mean),
            (std::vector<std::string>{"S_lanes", "S", "Y", "L_lanes", "L"}));
  in = test::random_inputs(mean, 4, -4, 4);
  expect_near(interpret(mean, in), interpret(split_mean, in), mean, "mean and minimum");
}

// Not split: a product, a reduction along another dimension, rows shorter than 4 vectors or not a
// multiple of one, two reduction indices, float64, and no vectors (lanes 1).
TEST(RowReductions, OnlyOneOperandReductionsAlongWholeRowsOfVectorsSplit) {
  auto unchanged = [](const std::string &text, const std::vector<int64_t> &shape, int lanes,
                      DType dtype = DType::Float32) {
    auto p = tile::bind(tile::parse_program(text), {{"X", {dtype, shape}}});
    return outputs_of(compiler::split_row_reductions(p, lanes)) == outputs_of(p);
  };
  const std::string rows = "function (X[M, N]) -> (S) { S[m : M] = +(X[m, n]); }";
  EXPECT_FALSE(unchanged(rows, {4, 64}, 16));
  EXPECT_TRUE(unchanged(rows, {4, 48}, 16));  // 3 vectors
  EXPECT_TRUE(unchanged(rows, {4, 72}, 16));  // not whole vectors
  EXPECT_TRUE(unchanged(rows, {4, 64}, 1));   // no vectors
  EXPECT_TRUE(unchanged(rows, {4, 64}, 16, DType::Float64));
  EXPECT_TRUE(unchanged("function (X[M, N]) -> (S) { S[n : N] = +(X[m, n]); }", {64, 64}, 16));
  EXPECT_TRUE(unchanged("function (X[M, N]) -> (S) { S[] = +(X[m, n]); }", {64, 64}, 16));
  EXPECT_TRUE(
      unchanged("function (X[M, N]) -> (S) { S[m : M] = +(X[m, n] * X[m, n]); }", {4, 64}, 16));
  EXPECT_TRUE(unchanged("function (X[M, N]) -> (S) { S[m : M] = =(X[m, n]); }", {4, 64}, 16));
}

// The first stage reads each row as dense vectors (no stride but 1 in its loads); the original
// gathered 16 rows' elements a row apart.
TEST(RowReductions, TheFirstStageLoadsDenseVectors) {
  auto p = compiler::split_row_reductions(bound(kSoftmax, {1, 12, 128, 128}), 16);
  compiler::Target target{"llvm"};
  target.vector_bits = 512;
  target.cores = 2;
  auto lowered = compiler::lower(p, target);
  std::string first;
  for (const auto &step : lowered.steps)
    if (step.kind == compiler::Step::Kind::Kernel && step.kernel.name == "R_lanes")
      first = compiler::print_kernel(step.kernel);
  ASSERT_FALSE(first.empty());
  EXPECT_NE(first.find("X[ramp("), std::string::npos) << first;
  EXPECT_EQ(first.find(", 128, 16)"), std::string::npos) << first;
}

TEST(RowReductions, EveryDeviceRunsSplitReductionsAsInterpRunsTheOriginal) {
  for (const auto &[text, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {kSoftmax, {1, 2, 9, 128}}, {kMean, {1, 5, 768}}}) {
    auto p = bound(text, shape);
    const TensorMap in = test::random_inputs(p, 7, -4, 4);
    const TensorMap want = interpret(p, in);
    DeviceRegistry registry = builtin_devices();
    for (const auto &device : registry.names()) {
      CompileOptions options;
      options.policy = TunePolicy::Off;
      expect_near(want, registry.create(device)->compile(p, options)->run(in), p, device);
    }
  }
}

}  // namespace
}  // namespace tessera
