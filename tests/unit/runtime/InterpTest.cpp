// The reference interpreter against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "backends/interp/InterpBackend.h"
#include "runtime/Device.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using tile::DType;

HostTensor tensor(DType dtype, std::vector<int64_t> shape, const std::vector<double> &values) {
  HostTensor t(tile::TensorType{dtype, std::move(shape)});
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.elements());
  for (size_t i = 0; i < values.size(); ++i) t.set_double(i, values[i]);
  return t;
}
HostTensor f32(std::vector<int64_t> shape, const std::vector<double> &v) {
  return tensor(DType::Float32, shape, v);
}
HostTensor i32(std::vector<int64_t> shape, const std::vector<double> &v) {
  return tensor(DType::Int32, shape, v);
}

std::vector<double> values(const HostTensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.elements(); ++i) v.push_back(t.get_double(i));
  return v;
}

TensorMap run(const std::string &text, const TensorMap &inputs) {
  std::map<std::string, tile::TensorType> types;
  for (const auto &[name, t] : inputs) types[name] = t.type();
  auto program = tile::bind(tile::parse_program(text, "t.tile"), types);
  return interpret(program, inputs);
}

HostTensor run1(const std::string &text, const TensorMap &inputs, const std::string &out) {
  return run(text, inputs).at(out);
}

using V = std::vector<double>;

TEST(Interp, Matmul) {
  auto c = run1("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
                {{"A", f32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"B", f32({3, 2}, {7, 8, 9, 10, 11, 12})}},
                "C");
  EXPECT_EQ(c.type(), (tile::TensorType{DType::Float32, {2, 2}}));
  EXPECT_EQ(values(c), (V{58, 64, 139, 154}));
}

TEST(Interp, PaddedConvolutionSkipsOutOfRangeTaps) {
  const char *conv =
      "function (I[N], K[KN]) -> (O) { O[x : N] = +(I[x + k - (KN - 1) / 2] * K[k]); }";
  auto o3 = run1(conv, {{"I", f32({4}, {1, 2, 3, 4})}, {"K", f32({3}, {1, 10, 100})}}, "O");
  EXPECT_EQ(values(o3), (V{210, 321, 432, 43}));
  auto o4 = run1(conv, {{"I", f32({4}, {1, 2, 3, 4})}, {"K", f32({4}, {1, 10, 100, 1000})}}, "O");
  EXPECT_EQ(values(o4), (V{3210, 4321, 432, 43}));
}

TEST(Interp, StridedTwoDimensionalConvolution) {
  // 1x4x4x1 input, 2x2 kernel, stride 2: each output sums one 2x2 block weighted 1, 2, 3, 4.
  auto o = run1("function (I[N, H, W, C], K[KH, KW, C, CO]) -> (O) { "
                "O[n, x, y, co : N, 2, 2, CO] = +(I[n, 2*x + i, 2*y + j, c] * K[i, j, c, co]); }",
                {{"I", f32({1, 4, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})},
                 {"K", f32({2, 2, 1, 1}, {1, 2, 3, 4})}},
                "O");
  // block (0,0): 1*1 + 2*2 + 5*3 + 6*4 = 44; (0,1): 3 + 8 + 21 + 32 = 64; (1,0): 9 + 20 + 39 + 56 =
  // 124; (1,1): 11 + 24 + 45 + 64 = 144.
  EXPECT_EQ(values(o), (V{44, 64, 124, 144}));
}

TEST(Interp, MaxAndMinOfNothingAreZero) {
  TensorMap in{{"A", f32({2}, {-5, -7})}};
  EXPECT_EQ(values(run1("function (A[N]) -> (O) { O[i : 3] = >(A[i - 1]); }", in, "O")),
            (V{0, -5, -7}));
  EXPECT_EQ(values(run1("function (A[N]) -> (O) { O[0 : 1] = >(A[i]); }", in, "O")), (V{-5}));
  EXPECT_EQ(values(run1("function (A[N]) -> (O) { O[0 : 1] = <(A[i]); }", in, "O")), (V{-7}));
  EXPECT_EQ(values(run1("function (A[N]) -> (O) { O[0 : 1] = *(A[i]); }", in, "O")), (V{35}));
}

TEST(Interp, DefaultFillsUnwrittenElements) {
  auto o = run1("function (A[N], D[M]) -> (O) { O[i : M] = =(A[i - 1]) default D; }",
                {{"A", f32({2}, {1, 2})}, {"D", i32({3}, {7, 8, 9})}}, "O");
  EXPECT_EQ(o.dtype(), DType::Float32);
  EXPECT_EQ(values(o), (V{7, 1, 2}));
  // Written elements do not include the default: the sum starts from the first value.
  auto s = run1("function (A[N], D[M]) -> (O) { O[i : M] = +(A[i]) default D; }",
                {{"A", f32({2}, {1, 2})}, {"D", f32({3}, {7, 8, 9})}}, "O");
  EXPECT_EQ(values(s), (V{1, 2, 9}));
}

TEST(Interp, AssignWritingTwiceIsAnError) {
  try {
    run("function (A[N]) -> (O) {\n  O[0 : 1] = =(A[i]);\n}", {{"A", f32({2}, {1, 2})}});
    FAIL() << "no error";
  } catch (const tile::Error &e) {
    std::string s = e.what();
    EXPECT_EQ(s.substr(0, s.find('\n')),
              "t.tile:2:3: error: '=' writes element [0] of 'O' more than once");
  }
}

TEST(Interp, ConcatenationByAssign) {
  auto o = run1(
      "function (A[N], B[M]) -> (O) { X[i : 5] = =(A[i]); Y[i + 2 : 5] = =(B[i]); O = add(X, Y); }",
      {{"A", f32({2}, {1, 2})}, {"B", f32({3}, {3, 4, 5})}}, "O");
  EXPECT_EQ(values(o), (V{1, 2, 3, 4, 5}));
}

TEST(Interp, OutputAccessWithStrides) {
  // Winograd-style output access (xception): O[i + 2*x] = I[i, x].
  auto o = run1("function (I[N, M]) -> (O) { O[i + 2*x : 4] = +(I[i, x]) no_defract; }",
                {{"I", f32({2, 2}, {1, 2, 3, 4})}}, "O");
  EXPECT_EQ(values(o), (V{1, 3, 2, 4}));
}

TEST(Interp, RationalIndices) {
  TensorMap in{{"I", f32({3}, {1, 2, 3})}};
  // i/2 is an integer only for even i: odd outputs have no valid point.
  EXPECT_EQ(values(run1("function (I[N]) -> (O) { O[i : 6] = =(I[i / 2]); }", in, "O")),
            (V{1, 0, 2, 0, 3, 0}));
  TensorMap in6{{"I", f32({6}, {1, 2, 3, 4, 5, 6})}};
  EXPECT_EQ(values(run1("function (I[N]) -> (O) { O[i / 2 : 3] = +(I[i]); }", in6, "O")),
            (V{1, 3, 5}));
}

TEST(Interp, ConstraintGivesCumulativeSum) {
  auto o = run1("function (I[N]) -> (O) { O[i : N] = +(I[k]), i - k < N; }",
                {{"I", f32({4}, {1, 2, 3, 4})}}, "O");
  EXPECT_EQ(values(o), (V{1, 3, 6, 10}));
}

TEST(Interp, EqualityAndTernaryCombinations) {
  auto eq = run1("function (A[N], B[M]) -> (O) { O[i, j : N, M] = +(A[i] == B[j]); }",
                 {{"A", f32({2}, {1, 2})}, {"B", f32({2}, {2, 2})}}, "O");
  EXPECT_EQ(eq.dtype(), DType::Bool);
  EXPECT_EQ(values(eq), (V{0, 0, 1, 1}));
  // argmax through the ternary form: the index where X equals its maximum.
  auto am = run1("function (X[N, M]) -> (O) { Mx[i : N] = >(X[i, j]); Ix = index(X, 1); "
                 "O[i : N] = >(X[i, j] == Mx[i] ? Ix[i, j]); }",
                 {{"X", f32({2, 3}, {1, 9, 3, 7, 2, 5})}}, "O");
  EXPECT_EQ(am.dtype(), DType::Int32);
  EXPECT_EQ(values(am), (V{1, 0}));
}

TEST(Interp, IntegerArithmeticWraps) {
  TensorMap in{{"A", tensor(DType::Int8, {3}, {100, 100, 100})}};
  EXPECT_EQ(values(run1("function (A[N]) -> (B) { B = add(A, A); }", in, "B")), (V{-56, -56, -56}));
  EXPECT_EQ(values(run1("function (A[N]) -> (B) { B[0 : 1] = +(A[i]); }", in, "B")), (V{44}));
  auto u = run1("function (A[N]) -> (B) { B = neg(A); }",
                {{"A", tensor(DType::UInt8, {2}, {1, 0})}}, "B");
  EXPECT_EQ(values(u), (V{255, 0}));
}

TEST(Interp, IntegerDivisionTruncatesAndByZeroGivesZero) {
  auto o = run1("function (A[N], B[N]) -> (C) { C = div(A, B); }",
                {{"A", i32({4}, {7, -7, 5, 0})}, {"B", i32({4}, {2, 2, 0, 0})}}, "C");
  EXPECT_EQ(values(o), (V{3, -3, 0, 0}));
}

TEST(Interp, Shifts) {
  auto o = run("function (A[N], S[N]) -> (L, R) { L = bit_left(A, S); R = bit_right(A, S); }",
               {{"A", i32({4}, {-8, 1, -8, 3})}, {"S", i32({4}, {1, 31, 40, -1})}});
  // Counts outside [0, 32) give 0, or -1 for a negative value shifted right (arithmetic).
  EXPECT_EQ(values(o.at("L")), (V{-16, -2147483648.0, 0, 0}));
  EXPECT_EQ(values(o.at("R")), (V{-4, 0, -1, 0}));
}

TEST(Interp, Casts) {
  TensorMap in{{"F", f32({4}, {1.7, -1.7, 1e20, NAN})}};
  EXPECT_EQ(values(run1("function (F[N]) -> (B) { B = as_int(F, 32); }", in, "B")),
            (V{1, -1, 2147483647, 0}));
  EXPECT_EQ(values(run1("function (F[N]) -> (B) { B = as_bool(F); }", in, "B")), (V{1, 1, 1, 1}));
  auto u8 =
      run1("function (A[N]) -> (B) { B = as_uint(A, 8); }", {{"A", i32({2}, {300, -1})}}, "B");
  EXPECT_EQ(u8.dtype(), DType::UInt8);
  EXPECT_EQ(values(u8), (V{44, 255}));
  auto h = run1("function (F[N]) -> (B) { B = as_float(F, 16); }", {{"F", f32({1}, {0.1})}}, "B");
  EXPECT_EQ(h.dtype(), DType::Float16);
  EXPECT_EQ(values(h), (V{0.0999755859375}));  // the float16 nearest 0.1
}

TEST(Interp, Float16RoundsAtEveryNode) {
  auto o = run1("function (A[N]) -> (B) { B = add(A, 1.0); }",
                {{"A", tensor(DType::Float16, {2}, {1, 2048})}}, "B");
  EXPECT_EQ(o.dtype(), DType::Float16);
  EXPECT_EQ(values(o), (V{2, 2048}));  // 2049 is not a float16; ties go to even
}

TEST(Interp, WeakConstantStaysWithTheTensorType) {
  auto o = run1("function (X[N]) -> (Y) { C = 0; Y = cond(cmp_lt(X, C), C, X); }",
                {{"X", tensor(DType::Float16, {3}, {-1, 2, 0.5})}}, "Y");
  EXPECT_EQ(o.dtype(), DType::Float16);
  EXPECT_EQ(values(o), (V{0, 2, 0.5}));
}

TEST(Interp, MathIntrinsics) {
  auto o = run("function (X[N]) -> (R, S, Q, L) { R = relu(X); S = sigmoid(X); Q = round(X); L = "
               "max(X, 0.25); }",
               {{"X", tensor(DType::Float64, {3}, {-2.5, 0, 2.5})}});
  EXPECT_EQ(values(o.at("R")), (V{0, 0, 2.5}));
  auto s = values(o.at("S"));
  EXPECT_NEAR(s[0], 0.07585818002124355, 1e-15);
  EXPECT_EQ(s[1], 0.5);
  EXPECT_NEAR(s[2], 0.9241418199787566, 1e-15);
  EXPECT_EQ(values(o.at("Q")), (V{-3, 0, 3}));  // half away from zero
  EXPECT_EQ(values(o.at("L")), (V{0.25, 0.25, 2.5}));
}

TEST(Interp, ShapeReshapeIndex) {
  TensorMap in{{"X", f32({2, 3}, {1, 2, 3, 4, 5, 6})}};
  auto out = run("function (X[N, M]) -> (S, R, I0, I1) { S = shape(X); R = reshape(X, M, N); "
                 "I0 = index(X, 0); I1 = index(X, 1); }",
                 in);
  EXPECT_EQ(out.at("S").dtype(), DType::Int32);
  EXPECT_EQ(values(out.at("S")), (V{2, 3}));
  EXPECT_EQ(out.at("R").shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(values(out.at("R")), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(values(out.at("I0")), (V{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(values(out.at("I1")), (V{0, 1, 2, 0, 1, 2}));
}

TEST(Interp, GatherClampsIndices) {
  auto g = run1("function (X[N, M], I[K]) -> (G) { G = gather(X, I); }",
                {{"X", f32({3, 2}, {1, 2, 3, 4, 5, 6})}, {"I", i32({4}, {2, -1, 7, 0})}}, "G");
  EXPECT_EQ(g.shape(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(values(g), (V{5, 6, 1, 2, 5, 6, 1, 2}));
}

TEST(Interp, ScatterAddsIntoZeros) {
  auto s = run1(
      "function (X[K], I[K], S[N]) -> (O) { O = scatter(X, I, S); }",
      {{"X", f32({4}, {1, 2, 3, 4})}, {"I", i32({4}, {0, 2, 2, 9})}, {"S", i32({3}, {0, 0, 0})}},
      "O");
  EXPECT_EQ(s.dtype(), DType::Float32);
  EXPECT_EQ(values(s), (V{1, 0, 9}));
  auto rows = run1(
      "function (X[K, M], I[K], S[N, M]) -> (O) { O = scatter(X, I, S); }",
      {{"X", f32({2, 2}, {1, 2, 3, 4})}, {"I", i32({2}, {1, 1})}, {"S", f32({2, 2}, {9, 9, 9, 9})}},
      "O");
  EXPECT_EQ(values(rows), (V{0, 0, 4, 6}));
}

TEST(Interp, PrngIsDeterministicAndInRange) {
  const char *prog =
      "function (S[A, B]) -> (V, NS) { N = 64; T = prng_step(S, A, N); V = prng_value(T); "
      "NS = prng_state(T); }";
  HostTensor state(tile::TensorType{DType::UInt32, {3, 4}});
  for (int i = 0; i < 12; ++i) state.set_int(i, 1000 + i);
  auto a = run(prog, {{"S", state}}), b = run(prog, {{"S", state}});
  const HostTensor &v = a.at("V"), &ns = a.at("NS");
  EXPECT_EQ(v.type(), (tile::TensorType{DType::Float32, {3, 64}}));
  EXPECT_EQ(ns.type(), state.type());
  EXPECT_EQ(values(v), values(b.at("V")));
  EXPECT_EQ(values(ns), values(b.at("NS")));
  double sum = 0;
  for (double x : values(v)) {
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
    sum += x;
  }
  EXPECT_NEAR(sum / 192, 0.5, 0.1);  // 192 uniform draws: the mean is 0.5 +- 0.02 (1 sigma)
  EXPECT_NE(values(ns), values(state));
  // Another state gives another stream.
  state.set_int(0, 7);
  EXPECT_NE(values(run(prog, {{"S", state}}).at("V")), values(v));
}

TEST(Interp, DeviceRunsTheBoundProgram) {
  auto device = std::make_unique<Device>(interp_backend());
  EXPECT_EQ(device->info().name, "interp");
  auto program =
      tile::bind(tile::parse_program("function (A[N]) -> (B) { B = mul(A, 2); }", "t.tile"),
                 {{"A", {DType::Float32, {2}}}});
  auto exe = device->compile(program);
  EXPECT_EQ(values(exe->run({{"A", f32({2}, {1, 2})}}).at("B")), (V{2, 4}));
  EXPECT_EQ(values(exe->run({{"A", f32({2}, {3, 4})}}).at("B")), (V{6, 8}));
  EXPECT_THROW(exe->run({{"A", f32({3}, {1, 2, 3})}}), tile::Error);
}

}  // namespace
}  // namespace tessera
