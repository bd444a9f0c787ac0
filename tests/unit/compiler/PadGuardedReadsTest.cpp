// Zero padding made explicit (compiler/PadGuardedReads.h): which contractions read a padded copy
// and how, that the program computes what the original does (interp against interp), that the
// lavapipe cost model then tiles the rows it could not, and every device against interp.
#include <gtest/gtest.h>

#include "backends/Registry.h"
#include "compiler/Lower.h"
#include "compiler/PadGuardedReads.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/backends/vulkan/LavapipeLike.h"
#include "tests/unit/compiler/RandomInputs.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using tile::DType;

tile::BoundProgram bound(const std::string &source,
                         const std::map<std::string, std::vector<int64_t>> &shapes) {
  std::map<std::string, tile::TensorType> types;
  for (const auto &[name, shape] : shapes) types[name] = {DType::Float32, shape};
  return tile::bind(tile::parse_program(source), types);
}

std::vector<std::string> outputs_of(const tile::BoundProgram &p) {
  std::vector<std::string> out;
  for (const auto &s : p.statements) out.push_back(s.output);
  return out;
}

const tile::BoundContraction &contraction(const tile::BoundProgram &p, const std::string &name) {
  for (const auto &s : p.statements)
    if (s.output == name) return s.contraction();
  throw std::runtime_error("no statement " + name);
}

void expect_same(const tile::BoundProgram &want_p, const tile::BoundProgram &got_p, unsigned seed,
                 const std::string &what) {
  const TensorMap in = test::random_inputs(want_p, seed, -2, 2);
  TensorMap want = interpret(want_p, in), got = interpret(got_p, in);
  for (const auto &[name, type] : want_p.outputs)
    for (int64_t i = 0; i < want.at(name).elements(); ++i)
      ASSERT_NEAR(got.at(name).get_double(i), want.at(name).get_double(i), 1e-9)
          << what << " " << name << " at " << i;
}

// A padded 3x3 convolution, a strided one and a depthwise one, as the zoo's Tile writes them.
const char *const kConvs =
    R"(function (X[N, H, W, C], K[3, 3, C, D], S[3, 3, C, F], G[3, 3, C]) -> (A, B, E) {
  A[n, i, j, d : N, H, W, D] = +(X[n, i + k - 1, j + l - 1, c] * K[k, l, c, d]);
  B[n, i, j, f : N, H / 2, W / 2, F] = +(X[n, 2 * i + k - 1, 2 * j + l - 1, c] * S[k, l, c, f]);
  E[n, i, j, c : N, H, W, C] = +(X[n, i + k - 1, j + l - 1, c] * G[k, l, c]);
})";

TEST(PadGuardedReads, ConvolutionsReadOnePaddedCopyOfTheirInput) {
  auto p = bound(kConvs,
                 {{"X", {2, 8, 8, 3}}, {"K", {3, 3, 3, 5}}, {"S", {3, 3, 3, 5}}, {"G", {3, 3, 3}}});
  // Far below the points where a copy pays: unchanged.
  EXPECT_EQ(outputs_of(compiler::pad_guarded_reads(p)), outputs_of(p));
  auto padded = compiler::pad_guarded_reads(p, 1);
  // The stride-2 convolution reads rows -1 to 6, the first -1 to 8: the first's copy serves both.
  // The depthwise one reads X along every output index (no register tile would reuse a padded row).
  EXPECT_EQ(outputs_of(padded), (std::vector<std::string>{"X_padded", "A", "B", "E"}));
  EXPECT_EQ(contraction(padded, "E").inputs[0].tensor, "X");
  EXPECT_EQ(padded.type_of("X_padded").shape, (std::vector<int64_t>{2, 10, 10, 3}));
  const auto &copy = contraction(padded, "X_padded");
  EXPECT_EQ(copy.agg, tile::AggOp::Assign);
  EXPECT_EQ(copy.output.dims[1].str(copy.indices), "i1 + 1");
  const auto &a = contraction(padded, "A");
  EXPECT_EQ(a.inputs[0].tensor, "X_padded");
  EXPECT_EQ(a.inputs[0].dims[1].str(a.indices), "i + k");
  const auto &b = contraction(padded, "B");
  EXPECT_EQ(b.inputs[0].dims[2].str(b.indices), "2*j + l");
  expect_same(p, padded, 5, "convolutions");
}

// Not padded: a max pool (its skipped points are not zeros), a sum of one operand, a product
// whose other operand is also read past its edges, a constraint, a default, and an index that
// only the guarded read bounds (the copy would widen its range).
TEST(PadGuardedReads, OnlySumsOfProductsWithOneOperandReadPastItsEdges) {
  auto unchanged = [](const std::string &body) {
    auto p = bound("function (X[N], Y[N], W[K, D], Z[P], V[N, D]) -> (O) { " + body + " }",
                   {{"X", {10}}, {"Y", {10}}, {"W", {3, 4}}, {"Z", {8}}, {"V", {10, 4}}});
    return outputs_of(compiler::pad_guarded_reads(p, 1)) == outputs_of(p);
  };
  EXPECT_FALSE(unchanged("O[i, d : N, D] = +(X[i + k - 1] * W[k, d]);"));
  EXPECT_TRUE(unchanged("O[i, d : N, D] = >(X[i + k - 1] * W[k, d]);"));
  EXPECT_TRUE(unchanged("O[i : N] = +(X[i + k - 1]);"));
  EXPECT_TRUE(unchanged("O[i, d : N, D] = +(X[i + k - 1] * Y[i + k + d - 1]);"));
  EXPECT_TRUE(unchanged("O[i, d : N, D] = +(X[i + k - 1] * W[k, d]), i - k < 5;"));
  EXPECT_TRUE(unchanged("O[i, d : N, D] = +(X[i + k - 1] * W[k, d]) default V;"));
  EXPECT_TRUE(unchanged("O[i, d : P, D] = +(X[i + k + d] * Z[i]);"));
  // X read along every output index: no register tile would reuse a padded value.
  EXPECT_TRUE(unchanged("O[i : N] = +(X[i + k - 1] * W[k, 0]);"));
}

// Where a device reads texels of four floats, a convolution that reduces an image's 3 colour
// channels reads a copy widened to 4 (zeros in the fourth), padded or not, which serves a padded
// reader too; 8 channels, or channels that an output index reads (a depthwise convolution), stay.
TEST(PadGuardedReads, ColourChannelsWidenToATexel) {
  auto p = bound("function (X[N, H, W, C], K[3, 3, C, D], G[3, 3, C]) -> (A, B, E) {"
                 "  A[n, i, j, d : N, H - 2, W - 2, D] = +(X[n, i + k, j + l, c] * K[k, l, c, d]);"
                 "  B[n, i, j, d : N, H, W, D] = +(X[n, i + k - 1, j + l - 1, c] * K[k, l, c, d]);"
                 "  E[n, i, j, c : N, H - 2, W - 2, C] = +(X[n, i + k, j + l, c] * G[k, l, c]); }",
                 {{"X", {1, 8, 8, 3}}, {"K", {3, 3, 3, 5}}, {"G", {3, 3, 3}}});
  // Without texels only the padded convolution reads a copy, of 3 channels.
  auto padded = compiler::pad_guarded_reads(p, 1);
  EXPECT_EQ(outputs_of(padded), (std::vector<std::string>{"A", "X_padded", "B", "E"}));
  EXPECT_EQ(padded.type_of("X_padded").shape, (std::vector<int64_t>{1, 10, 10, 3}));
  auto widened = compiler::pad_guarded_reads(p, 1, 4);
  EXPECT_EQ(outputs_of(widened),
            (std::vector<std::string>{"X_padded", "A", "X_padded_", "B", "E"}));
  EXPECT_EQ(widened.type_of("X_padded").shape, (std::vector<int64_t>{1, 8, 8, 4}));
  EXPECT_EQ(widened.type_of("X_padded_").shape, (std::vector<int64_t>{1, 10, 10, 4}));
  EXPECT_EQ(contraction(widened, "A").inputs[0].tensor, "X_padded");
  EXPECT_EQ(contraction(widened, "E").inputs[0].tensor, "X");
  expect_same(p, widened, 7, "widened channels");
  auto eight =
      bound("function (X[N, H, W, C], K[3, 3, C, D]) -> (A) {"
            "  A[n, i, j, d : N, H - 2, W - 2, D] = +(X[n, i + k, j + l, c] * K[k, l, c, d]); }",
            {{"X", {1, 8, 8, 8}}, {"K", {3, 3, 8, 5}}});
  EXPECT_EQ(outputs_of(compiler::pad_guarded_reads(eight, 1, 4)), outputs_of(eight));
}

// On lavapipe the cost model tiles a convolution's rows only where no guard bounds them: with the
// padded copy, the 3x3 convolution's work-items compute several pixels each.
TEST(PadGuardedReads, LavapipeTilesTheRowsOfAPaddedConvolution) {
  auto p =
      bound("function (X[N, H, W, C], K[3, 3, C, D]) -> (A) {"
            "  A[n, i, j, d : N, H, W, D] = +(X[n, i + k - 1, j + l - 1, c] * K[k, l, c, d]); }",
            {{"X", {1, 28, 28, 32}}, {"K", {3, 3, 32, 32}}});
  auto rows = [](const tile::BoundProgram &program) {
    for (const auto &step : compiler::plan_program(program, vulkan::test::lavapipe_like()).steps)
      if (step.name == "A") return step.model.tile_sizes[1] * step.model.tile_sizes[2];
    return int64_t{0};
  };
  EXPECT_EQ(rows(p), 1);
  EXPECT_GT(rows(compiler::pad_guarded_reads(p, 1)), 1);
}

// Large enough for lavapipe to pad its input (kPadMinPoints): 32x32x32 outputs of 576 points.
TEST(PadGuardedReads, EveryDeviceRunsPaddedConvolutionsAsInterpRunsThem) {
  auto p = bound(
      kConvs,
      {{"X", {1, 32, 32, 64}}, {"K", {3, 3, 64, 32}}, {"S", {3, 3, 64, 8}}, {"G", {3, 3, 64}}});
  const TensorMap in = test::random_inputs(p, 9, -2, 2);
  const TensorMap want = interpret(p, in);
  DeviceRegistry registry = builtin_devices();
  for (const auto &device : registry.names()) {
    CompileOptions options;
    options.policy = TunePolicy::Off;
    TensorMap got = registry.create(device)->compile(p, options)->run(in);
    for (const auto &[name, type] : p.outputs)
      for (int64_t i = 0; i < want.at(name).elements(); ++i)
        ASSERT_NEAR(got.at(name).get_double(i), want.at(name).get_double(i),
                    1e-4 * (1 + std::abs(want.at(name).get_double(i))))
            << device << " " << name << " at " << i;
  }
}

}  // namespace
}  // namespace tessera
