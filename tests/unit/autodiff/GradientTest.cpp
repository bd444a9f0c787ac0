// autodiff::gradient: each rule on a small program against hand-computed gradients (run on
// interp), the override hook, and every user error with its message and location.
#include <gtest/gtest.h>

#include <cmath>

#include "autodiff/Gradient.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace tessera {
namespace {

using tile::DType;
using V = std::vector<double>;

HostTensor f64(std::vector<int64_t> shape, const V &values) {
  HostTensor t(tile::TensorType{DType::Float64, std::move(shape)});
  for (size_t i = 0; i < values.size(); ++i) t.set_double(i, values[i]);
  return t;
}

V values(const HostTensor &t) {
  V v;
  for (int64_t i = 0; i < t.elements(); ++i) v.push_back(t.get_double(i));
  return v;
}

// Differentiates `text` and runs the gradient program on interp.
TensorMap grad(const std::string &text, const std::string &of, const std::vector<std::string> &wrt,
               const TensorMap &inputs, const autodiff::GradientOverrides &overrides = {}) {
  tile::Program g = autodiff::gradient(tile::parse_program(text, "t.tile"), of, wrt, overrides);
  // The printed program is what `tessera grad` gives: run that, parsed back.
  tile::Program printed = tile::parse_program(tile::print_program(g), "grad.tile");
  std::map<std::string, tile::TensorType> types;
  for (const auto &[name, t] : inputs) types[name] = t.type();
  return interpret(tile::bind(printed, types), inputs);
}

void expect_near(const V &got, const V &want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "at " << i;
}

std::string error_of(const std::string &text, const std::string &of,
                     const std::vector<std::string> &wrt,
                     const std::map<std::string, DType> &types = {}) {
  try {
    autodiff::gradient(tile::parse_program(text, "t.tile"), of, wrt, {}, types);
  } catch (const tile::Error &e) {
    return e.what();
  }
  return "no error";
}

TEST(Gradient, MatmulIsTransposedProducts) {
  auto r =
      grad("function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }", "C",
           {"A", "B"},
           {{"A", f64({1, 2}, {1, 2})}, {"B", f64({2, 1}, {3, 4})}, {"d_C", f64({1, 1}, {10})}});
  expect_near(values(r.at("d_A")), {30, 40});  // dC B^T
  expect_near(values(r.at("d_B")), {10, 20});  // A^T dC
}

TEST(Gradient, SeveralUsesAddUp) {
  auto r = grad("function (X[N]) -> (Y) { A = X * X; Y = A + 3 * X; }", "Y", {"X"},
                {{"X", f64({2}, {1, -2})}, {"d_Y", f64({2}, {1, 1})}});
  expect_near(values(r.at("d_X")), {2 * 1 + 3, 2 * -2 + 3});
}

TEST(Gradient, BroadcastingIsUndoneBySumming) {
  // Y[2,3] = A[2,3] + B[3] + C[2,1]: dB sums rows, dC sums columns.
  auto r = grad("function (A[M, N], B[N], C[M, 1]) -> (Y) { Y = A + B + C; }", "Y", {"B", "C"},
                {{"A", f64({2, 3}, V(6, 0))},
                 {"B", f64({3}, V(3, 0))},
                 {"C", f64({2, 1}, V(2, 0))},
                 {"d_Y", f64({2, 3}, {1, 2, 3, 4, 5, 6})}});
  expect_near(values(r.at("d_B")), {5, 7, 9});
  expect_near(values(r.at("d_C")), {6, 15});
}

TEST(Gradient, BroadcastBetweenNamesThatMayBeOne) {
  const char *p = "function (A[P], B[Q]) -> (Y) { Y = A * B; }";
  auto stretched =
      grad(p, "Y", {"A"},
           {{"A", f64({1}, {2})}, {"B", f64({3}, {1, 2, 3})}, {"d_Y", f64({3}, {1, 1, 1})}});
  expect_near(values(stretched.at("d_A")), {6});
  auto same =
      grad(p, "Y", {"A"},
           {{"A", f64({3}, {2, 2, 2})}, {"B", f64({3}, {1, 2, 3})}, {"d_Y", f64({3}, {1, 1, 1})}});
  expect_near(values(same.at("d_A")), {1, 2, 3});
}

TEST(Gradient, MaxGivesEveryTiedElementTheGradient) {
  auto r = grad("function (I[N]) -> (O) { O[0 : 1] = >(I[i]); }", "O", {"I"},
                {{"I", f64({3}, {5, 1, 5})}, {"d_O", f64({1}, {7})}});
  expect_near(values(r.at("d_I")), {7, 0, 7});
}

TEST(Gradient, ProductCountsZeros) {
  auto r = grad("function (X[N, K]) -> (P) { P[n : N] = *(X[n, k]); }", "P", {"X"},
                {{"X", f64({3, 2}, {2, 3, 0, 4, 0, 0})}, {"d_P", f64({3}, {1, 1, 1})}});
  expect_near(values(r.at("d_X")), {3, 2, 4, 0, 0, 0});
}

TEST(Gradient, TernaryFlowsToTheValueOnly) {
  auto r =
      grad("function (A[N], B[N], C[N]) -> (O) { O[i : N] = +(A[i] == B[j] ? C[j]); }", "O", {"C"},
           {{"A", f64({2}, {1, 2})},
            {"B", f64({2}, {2, 2})},
            {"C", f64({2}, {5, 6})},
            {"d_O", f64({2}, {10, 100})}});
  expect_near(values(r.at("d_C")), {100, 100});
}

TEST(Gradient, DefaultGetsTheUnwrittenElements) {
  auto r =
      grad("function (X[N], T[M]) -> (O) { O[i : M] = +(X[i]) default T; }", "O", {"X", "T"},
           {{"X", f64({2}, {1, 2})}, {"T", f64({3}, {0, 0, 0})}, {"d_O", f64({3}, {1, 2, 3})}});
  expect_near(values(r.at("d_X")), {1, 2});
  expect_near(values(r.at("d_T")), {0, 0, 3});
}

TEST(Gradient, ElementwiseRules) {
  const double x = 0.3;
  struct Case {
    const char *expr;
    double want;
  };
  const Case cases[] = {
      {"exp(X)", std::exp(x)},
      {"log(X)", 1 / x},
      {"sqrt(X)", 0.5 / std::sqrt(x)},
      {"tanh(X)", 1 - std::tanh(x) * std::tanh(x)},
      {"sin(X)", std::cos(x)},
      {"cos(X)", -std::sin(x)},
      {"tan(X)", 1 / (std::cos(x) * std::cos(x))},
      {"asin(X)", 1 / std::sqrt(1 - x * x)},
      {"acos(X)", -1 / std::sqrt(1 - x * x)},
      {"atan(X)", 1 / (1 + x * x)},
      {"sinh(X)", std::cosh(x)},
      {"cosh(X)", std::sinh(x)},
      {"erf(X)", 2 / std::sqrt(M_PI) * std::exp(-x * x)},
      {"sigmoid(X)", std::exp(-x) / ((1 + std::exp(-x)) * (1 + std::exp(-x)))},
      {"abs(-X)", 1},
      {"floor(X)", 0},
      {"relu(X)", 1},
      {"pow(X, 3)", 3 * x * x},
      {"pow(2, X)", std::pow(2, x) * std::log(2)},
      {"1 / X", -1 / (x * x)},
      {"max(X, 0.5)", 0},
      {"min(X, 0.5)", 1},
      {"X > 0 ? X : 0", 1},
      {"as_float(X, 32) * 2", 2},
      {"X - 2 * X", -1},
  };
  for (const auto &c : cases) {
    std::string p = std::string("function (X[N]) -> (Y) { Y = ") + c.expr + "; }";
    auto r = grad(p, "Y", {"X"}, {{"X", f64({1}, {x})}, {"d_Y", f64({1}, {1})}});
    EXPECT_NEAR(values(r.at("d_X"))[0], c.want, 1e-6) << c.expr;
  }
}

TEST(Gradient, ComparisonsAndIntegerValuesStopTheGradient) {
  auto r = grad("function (X[N]) -> (Y) { C = as_float(X < 0.5, 64); Y = C * 2 + X; }", "Y", {"X"},
                {{"X", f64({1}, {0.2})}, {"d_Y", f64({1}, {1})}});
  expect_near(values(r.at("d_X")), {1});
}

TEST(Gradient, OverrideReplacesAStatementsRule) {
  // log(sum(exp(X))) with the stable rule dX = dL * exp(X - L) given as an override.
  const char *p = "function (X[N]) -> (L) { E = exp(X); S[0 : 1] = +(E[i]); L = log(S); }";
  int calls = 0;
  autodiff::GradientOverrides o;
  o["L"] = [&](autodiff::GradientBuilder &b, const tile::Statement &, const std::string &d_out) {
    ++calls;
    using namespace autodiff::ex;
    std::string g =
        b.emit(mul(ref(d_out), call(tile::Intrinsic::Exp, {sub(ref("X"), ref("L"))})), "dX");
    return std::map<std::string, std::string>{{"X", g}};
  };
  auto r = grad(p, "L", {"X"}, {{"X", f64({2}, {0, std::log(3.0)})}, {"d_L", f64({1}, {1})}}, o);
  EXPECT_EQ(calls, 1);
  expect_near(values(r.at("d_X")), {0.25, 0.75});
}

TEST(Gradient, ReverseGradIsTheIdentityWithAReversedScaledGradient) {
  const char *p = "function (X[N], S[]) -> (Y) { Y = reverse_grad(X, S); }";
  TensorMap in{{"X", f64({2}, {1, 2})}, {"S", f64({}, {0.5})}, {"d_Y", f64({2}, {10, 20})}};
  auto r = grad(p, "Y", {"X", "S"}, in);
  expect_near(values(r.at("d_X")), {-5, -10});
  expect_near(values(r.at("d_S")), {0});  // PlaidML: DX2 = 0
  auto y = interpret(
      tile::bind(tile::parse_program(p), {{"X", in.at("X").type()}, {"S", in.at("S").type()}}), in);
  expect_near(values(y.at("Y")), {1, 2});
}

TEST(Gradient, BinaryCrossentropyDividesByItsThirdArgumentAndIgnoresTheSeed) {
  // PlaidML's derivative is that of sum(Y) / X3 whatever flows into Y.
  const char *p = "function (P[N], T[N]) -> (Y) { Y = builtin_binary_crossentropy(P, T, 4); }";
  auto r =
      grad(p, "Y", {"P", "T"},
           {{"P", f64({2}, {0.25, 0.5})}, {"T", f64({2}, {1, 0.5})}, {"d_Y", f64({2}, {7, -3})}});
  expect_near(values(r.at("d_P")), {(-1 / 0.25) / 4, (-0.5 / 0.5 + 0.5 / 0.5) / 4});
  expect_near(values(r.at("d_T")), {(std::log(0.75) - std::log(0.25)) / 4, 0});
}

TEST(Gradient, SoftmaxUsesItsOwnRuleNotTheExpansions) {
  // dX = Y dY - Y rowsum(Y dY): no gradient through the row maximum (which would be a `==`
  // ternary).
  const char *p = "function (X[N, C]) -> (Y) { Y = builtin_softmax(X, N, C); }";
  std::string text = tile::print_program(autodiff::gradient(tile::parse_program(p), "Y", {"X"}));
  EXPECT_NE(text.find("Y = builtin_softmax(X, N, C);"), std::string::npos) << text;
  EXPECT_EQ(text.find("=="), std::string::npos) << text;
  // Softmax of a row of equal values is uniform; its Jacobian is (I - 1/n) / n.
  auto r = grad(p, "Y", {"X"}, {{"X", f64({1, 2}, {3, 3})}, {"d_Y", f64({1, 2}, {1, 0})}});
  expect_near(values(r.at("d_X")), {0.25, -0.25});
  auto l = grad("function (X[N, C]) -> (Y) { Y = builtin_logsoftmax(X, N, C); }", "Y", {"X"},
                {{"X", f64({1, 2}, {3, 3})}, {"d_Y", f64({1, 2}, {1, 0})}});
  expect_near(values(l.at("d_X")), {0.5, -0.5});
}

TEST(Gradient, UnrelatedWrtGetsZeros) {
  auto r = grad("function (A[N], B[N]) -> (Y) { Y = exp(A); }", "Y", {"B"},
                {{"A", f64({2}, {1, 2})}, {"B", f64({2}, {5, 6})}, {"d_Y", f64({2}, {1, 1})}});
  expect_near(values(r.at("d_B")), {0, 0});
}

TEST(GradientErrors, UnknownNames) {
  EXPECT_EQ(error_of("function (A[N]) -> (Y) { Y = exp(A); }", "Z", {"A"}),
            "error: --of: unknown name 'Z'");
  EXPECT_EQ(error_of("function (A[N]) -> (Y) { Y = exp(A); }", "Y", {"Q"}),
            "error: --wrt: unknown name 'Q'");
}

TEST(GradientErrors, WrtTheDifferentiatedOutputItself) {
  // Used to emit `d_Y = d_Y;`, redefining the seed input; its gradient is the seed itself.
  EXPECT_EQ(error_of("function (A[N]) -> (Y) { Y = exp(A); }", "Y", {"A", "Y"}),
            "error: --wrt 'Y' is the --of tensor: its gradient is the seed d_Y");
}

TEST(GradientErrors, NotATensor) {
  EXPECT_EQ(error_of("function (A[N]) -> (Y) { Y = exp(A); }", "N", {"A"}),
            "error: --of 'N' is a dimension, not a tensor");
}

TEST(GradientErrors, NonDifferentiableOutputIsLocated) {
  std::string e = error_of("function (A[N]) -> (Y) {\n  Y = A < 1;\n}", "Y", {"A"});
  EXPECT_NE(e.find("t.tile:2:3: error: cannot differentiate 'Y': it is bool tensor"),
            std::string::npos)
      << e;
  e = error_of("function (A[N]) -> (Y) {\n  Y = index(A, 0);\n}", "Y", {"A"});
  EXPECT_NE(e.find("t.tile:2:3: error: cannot differentiate 'Y': it is an integer tensor"),
            std::string::npos)
      << e;
}

TEST(GradientErrors, IntegerWrtIsLocated) {
  std::string e =
      error_of("function (A[N], I[N]) -> (Y) { Y = A * I; }", "Y", {"I"}, {{"I", DType::Int32}});
  EXPECT_NE(
      e.find(
          "t.tile:1:17: error: cannot differentiate with respect to 'I': it is an integer tensor"),
      std::string::npos)
      << e;
  e = error_of("function (A[N]) -> (Y) {\n  J = index(A, 0);\n  Y = A * J;\n}", "Y", {"J"});
  EXPECT_NE(e.find("t.tile:2:3: error: cannot differentiate with respect to 'J'"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace tessera
