// tile::bind: types, shapes, folding, affine forms, and every bind error with its location.
#include <gtest/gtest.h>

#include "tile/Bind.h"
#include "tile/Diagnostics.h"
#include "tile/IndexRanges.h"
#include "tile/Parser.h"

namespace tessera::tile {
namespace {

using Types = std::map<std::string, TensorType>;

TensorType f32(std::vector<int64_t> shape) { return {DType::Float32, std::move(shape)}; }

BoundProgram bind_text(const std::string &text, const Types &inputs) {
  return tile::bind(parse_program(text, "f.tile"), inputs);
}

// The first line of the error bind reports (file:line:col: error: message).
std::string bind_error(const std::string &text, const Types &inputs) {
  try {
    bind_text(text, inputs);
  } catch (const Error &e) {
    std::string s = e.what();
    return s.substr(0, s.find('\n'));
  }
  return "no error";
}

TEST(Bind, ShapesAndDimsOfAMatmul) {
  auto b =
      bind_text("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                {{"A", f32({2, 3})}, {"B", f32({3, 5})}});
  EXPECT_EQ(b.dims.at("M"), 2);
  EXPECT_EQ(b.dims.at("K"), 3);
  EXPECT_EQ(b.dims.at("N"), 5);
  EXPECT_EQ(b.type_of("C"), f32({2, 5}));
  ASSERT_EQ(b.outputs.size(), 1u);
  const auto &c = b.statements[0].contraction();
  EXPECT_EQ(c.indices, (std::vector<std::string>{"i", "j", "k"}));
  EXPECT_EQ(c.inputs[0].dims[1].str(c.indices), "k");
  EXPECT_EQ(c.output.dims[1].str(c.indices), "j");
}

TEST(Bind, SizeExpressionsFoldWithFloorDivision) {
  auto b =
      bind_text("function (I[N], K[KN]) -> (O) { O[x : N] = +(I[x + k - (KN - 1) / 2] * K[k]); }",
                {{"I", f32({8})}, {"K", f32({4})}});
  const auto &c = b.statements[0].contraction();
  // (4 - 1) / 2 floors to 1.
  EXPECT_EQ(c.inputs[0].dims[0].str(c.indices), "x + k - 1");
}

TEST(Bind, RationalIndexCoefficients) {
  auto b = bind_text("function (I[N]) -> (O) { O[i : 6] = =(I[i / 2]); }", {{"I", f32({3})}});
  const auto &a = b.statements[0].contraction().inputs[0].dims[0];
  EXPECT_EQ(a.coeffs[0], Rational(1, 2));
}

TEST(Bind, WeakConstantsKeepTheTensorType) {
  auto b = bind_text(
      "function (X[N]) -> (Y, Z) { C = 0; Y = cond(cmp_lt(X, C), C, X); Z = add(X, 0.5); }",
      {{"X", {DType::Float16, {4}}}});
  EXPECT_EQ(b.type_of("C"), (TensorType{DType::Int32, {}}));
  EXPECT_EQ(b.type_of("Y").dtype, DType::Float16);
  EXPECT_EQ(b.type_of("Z").dtype, DType::Float16);
}

TEST(Bind, TypeRules) {
  auto b = bind_text(
      "function (I[N], U[N], F[N]) -> (A, B, C, D, E, G, H) { A = exp(I); B = add(I, U); C = "
      "cmp_lt(I, F); "
      "D = as_int(F, 16); E = bit_and(I, 3); G = neg(U); H = add(N, 1); }",
      {{"I", {DType::Int32, {2}}}, {"U", {DType::UInt8, {2}}}, {"F", {DType::Float64, {2}}}});
  EXPECT_EQ(b.type_of("A").dtype, DType::Float32);  // float math on ints gives float32
  EXPECT_EQ(b.type_of("B").dtype, DType::Int32);
  EXPECT_EQ(b.type_of("C").dtype, DType::Bool);
  EXPECT_EQ(b.type_of("D").dtype, DType::Int16);
  EXPECT_EQ(b.type_of("E").dtype, DType::Int32);
  EXPECT_EQ(b.type_of("G").dtype, DType::UInt8);
  EXPECT_EQ(b.type_of("H"), (TensorType{DType::Int32, {}}));  // a dimension used as a value
}

TEST(Bind, Broadcasting) {
  auto b = bind_text("function (A[N, M], B[M], C[N, 1]) -> (D) { D = add(mul(A, B), C); }",
                     {{"A", f32({2, 3})}, {"B", f32({3})}, {"C", f32({2, 1})}});
  EXPECT_EQ(b.type_of("D"), f32({2, 3}));
}

TEST(Bind, Specials) {
  auto b = bind_text(
      "function (X[N, M], I[K]) -> (S, R, X1, G, T, V, NS) { S = shape(X); R = reshape(X, M, N); "
      "X1 = index(X, 1); G = gather(X, I); T = prng_step(I, 2, N); V = prng_value(T); NS = "
      "prng_state(T); }",
      {{"X", f32({2, 3})}, {"I", {DType::Int32, {5}}}});
  EXPECT_EQ(b.type_of("S"), (TensorType{DType::Int32, {2}}));
  EXPECT_EQ(b.type_of("R"), f32({3, 2}));
  EXPECT_EQ(b.type_of("X1"), (TensorType{DType::Int32, {2, 3}}));
  EXPECT_EQ(b.type_of("G"), f32({5, 3}));
  EXPECT_EQ(b.type_of("T"), (TensorType{DType::UInt32, {2, 2}}));
  EXPECT_EQ(b.type_of("V"), f32({2, 2}));
  EXPECT_EQ(b.type_of("NS"), (TensorType{DType::Int32, {5}}));
}

TEST(Bind, BuiltinsExpandIntoOrdinaryStatements) {
  // The expansion's names avoid every name of the program, later ones included (A_max).
  auto b = bind_text(R"(function (X[N, C], T[N, C], S[]) -> (A, L, R, A_max) {
  A = builtin_softmax(X, N, C);
  L = builtin_binary_crossentropy(A, T, N * C);
  R = reverse_grad(X, S);
  A_max = X;
})",
                     {{"X", f32({2, 3})}, {"T", f32({2, 3})}, {"S", f32({})}});
  std::vector<std::string> names;
  for (const auto &s : b.statements) names.push_back(s.output);
  EXPECT_EQ(names, (std::vector<std::string>{"A_max2", "A_exp", "A_sum", "A", "L", "R", "A_max"}));
  EXPECT_EQ(b.statements[0].contraction().agg, AggOp::Max);
  EXPECT_EQ(b.type_of("A_max2"), f32({2, 1}));
  EXPECT_EQ(b.statements[2].contraction().agg, AggOp::Sum);
  EXPECT_EQ(b.type_of("A"), f32({2, 3}));
  EXPECT_EQ(b.type_of("L"), f32({2, 3}));
  EXPECT_EQ(b.type_of("R"), f32({2, 3}));
}

TEST(Bind, SoftmaxShapeFollowsItsRowArgumentAsInPlaidML) {
  // PlaidML's definition divides by a [X2, 1] column: one row of X broadcasts over X2 rows.
  const char *p = "function (X[N, C]) -> (Y, Z) { Y = builtin_softmax(X, 4, C); Z = "
                  "builtin_logsoftmax(X, N, C); }";
  auto b = bind_text(p, {{"X", {DType::Float16, {1, 3}}}});
  EXPECT_EQ(b.type_of("Y"), (TensorType{DType::Float16, {4, 3}}));
  EXPECT_EQ(b.type_of("Z"), (TensorType{DType::Float16, {1, 3}}));
}

// ---- errors: each names the place and says what is wrong ----

TEST(Bind, CheckedSizes) {
  EXPECT_EQ(f32({2, 3}).checked_bytes(), 24);
  EXPECT_EQ(f32({0, INT64_MAX, INT64_MAX}).checked_bytes(), 0);
  EXPECT_EQ(f32({INT64_MAX / 4}).checked_bytes(), INT64_MAX / 4 * 4);
  EXPECT_EQ(f32({INT64_MAX / 4 + 1}).checked_bytes(), std::nullopt);  // bytes overflow
  EXPECT_EQ(f32({int64_t{1} << 32, int64_t{1} << 32}).checked_bytes(), std::nullopt);
  EXPECT_EQ(too_large_message("T", f32({1000000, 1000000}), "cpu", 1 << 30),
            "tensor 'T' float32[1000000, 1000000] needs 4000000000000 bytes; device cpu holds at "
            "most 1073741824");
  EXPECT_THROW(tensor_bytes("C", f32({int64_t{1} << 62, 4})), Error);
}

TEST(BindError, SizesThatOverflow) {
  EXPECT_EQ(bind_error("function (A[N]) -> (C) {\n  C[i, j : 4294967296, 4294967296] = +(A[i]);\n}",
                       {{"A", f32({4})}}),
            "f.tile:2:3: error: tensor 'C' float32[4294967296, 4294967296] needs more than "
            "9223372036854775807 bytes; no device holds that much");
  EXPECT_EQ(bind_error("function (A[N, M]) -> (C) { C = A; }", {{"A", f32({int64_t{1} << 62, 3})}}),
            "f.tile:1:11: error: tensor 'A' float32[4611686018427387904, 3] needs more than "
            "9223372036854775807 bytes; no device holds that much");
}

TEST(BindError, DimensionBoundTwice) {
  EXPECT_EQ(bind_error("function (A[N], B[N]) -> (C) { C = add(A, B); }",
                       {{"A", f32({4})}, {"B", f32({3})}}),
            "f.tile:1:19: error: dimension N bound to 3 here and to 4 at f.tile:1:13");
}

TEST(BindError, RankMismatch) {
  EXPECT_EQ(
      bind_error("function (A[N, M]) -> (B) { B = A; }", {{"A", f32({4})}}),
      "f.tile:1:11: error: input 'A' is declared with 2 dimensions but its value float32[4] has 1");
}

TEST(BindError, LiteralSizeMismatch) {
  EXPECT_EQ(bind_error("function (A[3, N]) -> (B) { B = A; }", {{"A", f32({4, 2})}}),
            "f.tile:1:13: error: dimension of input 'A' is declared as 3 but is 4");
}

TEST(BindError, MissingInput) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B = A; }", {}),
            "f.tile:1:11: error: no value for input 'A'");
}

TEST(BindError, UnknownInput) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B = A; }", {{"A", f32({1})}, {"Z", f32({1})}}),
            "error: unknown input 'Z' (the program's inputs are A)");
}

TEST(BindError, NotAffine) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B[i : N] = +(A[i * i]); }", {{"A", f32({4})}}),
            "f.tile:1:41: error: index expression is not affine");
  EXPECT_EQ(
      bind_error("function (A[N]) -> (B) { B[i : N] = +(A[N / (i + 1)]); }", {{"A", f32({4})}}),
      "f.tile:1:41: error: index expression is not affine");
}

TEST(BindError, UnboundedIndex) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B[i : N] = +(A[i + j - j]); }", {{"A", f32({4})}}),
            "f.tile:1:26: error: index 'j' is unbounded");
}

// Neither access bounds j or k alone (each has the other variable in it); together they do:
// 0 <= 2j + k <= 4 and 0 <= j - k <= 4 give 0 <= j <= 2 and -2 <= k <= 1.
TEST(IndexRanges, AnIndexBoundedOnlyByTwoAccessesTogether) {
  auto b =
      bind_text("function (A[N]) -> (B) { B[] = +(A[2*j + k] + A[j - k]); }", {{"A", f32({5})}});
  const auto &c = b.statements[0].contraction();
  auto ranges = index_ranges(c, {}, b.types);
  ASSERT_EQ(ranges.size(), 2u);
  ASSERT_TRUE(ranges[0] && ranges[1]);
  EXPECT_EQ(c.indices[0], "j");
  EXPECT_EQ(std::make_pair(ranges[0]->lo, ranges[0]->hi), std::make_pair(int64_t{0}, int64_t{2}));
  EXPECT_EQ(std::make_pair(ranges[1]->lo, ranges[1]->hi), std::make_pair(int64_t{-2}, int64_t{1}));
}

TEST(BindError, BroadcastMismatch) {
  EXPECT_EQ(bind_error("function (A[N, M], B[K]) -> (C) { C = add(A, B); }",
                       {{"A", f32({2, 3})}, {"B", f32({4})}}),
            "f.tile:1:39: error: cannot broadcast float32[2, 3] with float32[4]");
}

TEST(BindError, BitwiseOnFloat) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B = bit_and(A, 1); }", {{"A", f32({2})}}),
            "f.tile:1:30: error: 'bit_and' needs integer or bool operands, not float32");
}

TEST(BindError, BadCastBits) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B = as_float(A, 12); }", {{"A", f32({2})}}),
            "f.tile:1:42: error: 'as_float' takes 16, 32 or 64 bits, not 12");
  EXPECT_EQ(bind_error("function (A[N], W[M]) -> (B) { B = as_int(A, W); }",
                       {{"A", f32({2})}, {"W", f32({1})}}),
            "f.tile:1:46: error: the bit width of 'as_int' must be a constant integer");
}

TEST(BindError, ReshapeCountMismatch) {
  EXPECT_EQ(
      bind_error("function (A[N, M]) -> (B) { B = reshape(A, 5); }", {{"A", f32({2, 3})}}),
      "f.tile:1:33: error: cannot reshape float32[2, 3] (6 elements) to float32[5] (5 elements)");
}

TEST(BindError, DefaultShapeMismatch) {
  EXPECT_EQ(
      bind_error("function (A[N], D[M]) -> (B) { B[i : N] = +(A[i]) default D; }",
                 {{"A", f32({2})}, {"D", f32({3})}}),
      "f.tile:1:59: error: the default float32[3] does not have the output's shape float32[2]");
}

TEST(BindError, SizeNotAnInteger) {
  EXPECT_EQ(
      bind_error("function (A[N]) -> (B) { C = 2.5; B[i : C] = +(A[i]); }", {{"A", f32({2})}}),
      "f.tile:1:41: error: an output size is not an integer");
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B[i : N - 3] = +(A[i]); }", {{"A", f32({2})}}),
            "f.tile:1:32: error: an output size must not be negative (it is -1)");
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B[i : N] = +(A[i]), i < A; }", {{"A", f32({2})}}),
            "f.tile:1:50: error: a constraint bound must be a constant integer");
}

TEST(BindError, AccessRank) {
  EXPECT_EQ(bind_error("function (A[N]) -> (B) { B[i : N] = +(A[i, i]); }", {{"A", f32({2})}}),
            "f.tile:1:39: error: tensor 'A' has rank 1 but is accessed with 2 indices");
}

TEST(BindError, GatherNeedsIntegerIndices) {
  EXPECT_EQ(bind_error("function (A[N], I[M]) -> (B) { B = gather(A, I); }",
                       {{"A", f32({2})}, {"I", f32({2})}}),
            "f.tile:1:46: error: 'gather' indices must be integers");
}

TEST(BindError, Builtins) {
  EXPECT_EQ(
      bind_error("function (X) -> (Y) { Y = builtin_softmax(X, 2, 3); }", {{"X", f32({2, 3, 4})}}),
      "f.tile:1:43: error: 'builtin_softmax' needs a 2-D tensor, but 'X' is float32[2, 3, 4]");
  EXPECT_EQ(bind_error("function (X[N, C]) -> (Y) { Y = builtin_logsoftmax(X, N, 0.5); }",
                       {{"X", f32({2, 3})}}),
            "f.tile:1:58: error: the column count of 'builtin_logsoftmax' is not an integer");
  EXPECT_EQ(bind_error("function (X[N, C]) -> (Y) { Y = builtin_softmax(X, 5, C); }",
                       {{"X", f32({2, 3})}}),
            "f.tile:1:33: error: cannot broadcast float32[2, 3] with float32[5, 1]");
}

}  // namespace
}  // namespace tessera::tile
