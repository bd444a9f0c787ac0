// EDSL gradients (tessera/gradient.h) against hand-computed values, and import_program
// (tessera/import.h) against running the original Tile program on the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "backends/Registry.h"
#include "tessera/gradient.h"
#include "tessera/import.h"
#include "tile/Bind.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

Tensor matmul(const Tensor &A, const Tensor &B) {
  TensorDim M, K, N;
  TensorIndex m("m"), k("k"), n("n");
  A.bind_dims(M, K);
  B.bind_dims(K, N);
  Tensor C = TensorOutput(M, N);
  C(m, n) += A(m, k) * B(k, n);
  return C;
}

HostTensor make(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t(tile::TensorType{dtype, std::move(shape)});
  EXPECT_EQ(t.elements(), static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) t.set_double(static_cast<int64_t>(i), values[i]);
  return t;
}

std::vector<double> values(const HostTensor &t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.elements(); ++i) v.push_back(t.get_double(i));
  return v;
}

TensorMap run(const std::vector<std::pair<std::string, Tensor>> &outputs,
              const std::vector<Tensor> &inputs, const TensorMap &values) {
  return compile(build(outputs, inputs), "interp")->run(values);
}

void expect_near(const std::vector<double> &got, const std::vector<double> &want,
                 double tol = 1e-12) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// ---- gradient ---------------------------------------------------------------------------------

TEST(EdslGradient, MatmulWithOnesSeed) {
  Tensor A = Placeholder(DType::Float64, {2, 3}, "A");
  Tensor B = Placeholder(DType::Float64, {3, 2}, "B");
  auto g = gradient(matmul(A, B), {A, B});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].shape(), A.shape());
  EXPECT_EQ(g[1].shape(), B.shape());
  TensorMap out = run({{"dA", g[0]}, {"dB", g[1]}}, {A, B},
                      {{"A", make(DType::Float64, {2, 3}, {1, 2, 3, 4, 5, 6})},
                       {"B", make(DType::Float64, {3, 2}, {7, 8, 9, 10, 11, 12})}});
  // d(sum(A B))/dA[i, k] = sum_j B[k, j]; d/dB[k, j] = sum_i A[i, k].
  expect_near(values(out.at("dA")), {15, 19, 23, 15, 19, 23});
  expect_near(values(out.at("dB")), {5, 5, 7, 7, 9, 9});
}

TEST(EdslGradient, MatmulWithExplicitSeed) {
  Tensor A = Placeholder(DType::Float32, {1, 2}, "A");
  Tensor B = Placeholder(DType::Float32, {2, 2}, "B");
  Tensor S = Placeholder(DType::Float32, {1, 2}, "S");
  auto g = gradient(matmul(A, B), {A}, S);
  TensorMap out = run({{"dA", g[0]}}, {A, B, S},
                      {{"A", make(DType::Float32, {1, 2}, {1, 2})},
                       {"B", make(DType::Float32, {2, 2}, {1, 2, 3, 4})},
                       {"S", make(DType::Float32, {1, 2}, {10, 100})}});
  // dA = S B^T = [10*1 + 100*2, 10*3 + 100*4].
  expect_near(values(out.at("dA")), {210, 430});
}

TEST(EdslGradient, StridedPaddedConv1d) {
  // O[x] = sum_k I[2x + k - 1] * K[k], x < 3, k < 3, over I of 6 (one element of padding each
  // side).
  Tensor I = Placeholder(DType::Float64, {6}, "I");
  Tensor K = Placeholder(DType::Float64, {3}, "K");
  Tensor S = Placeholder(DType::Float64, {3}, "S");
  TensorIndex x("x"), k("k");
  Tensor O = TensorOutput(3);
  O(x) += I(2 * x + k - 1) * K(k);
  auto g = gradient(O, {I, K}, S);
  std::vector<double> iv{1, -2, 3, 0.5, 4, -1}, kv{2, -1, 3}, sv{1, 10, 100};
  TensorMap out = run({{"dI", g[0]}, {"dK", g[1]}}, {I, K, S},
                      {{"I", make(DType::Float64, {6}, iv)},
                       {"K", make(DType::Float64, {3}, kv)},
                       {"S", make(DType::Float64, {3}, sv)}});
  // By hand: x = 0 reads I[-1..1] (I[-1] is padding), x = 1 reads I[1..3], x = 2 reads I[3..5].
  //   dI[i] = sum over (x, k) with 2x + k - 1 = i of S[x] * K[k]:
  //   dI[0] = S0*K1 = -1; dI[1] = S0*K2 + S1*K0 = 3 + 20 = 23; dI[2] = S1*K1 = -10;
  //   dI[3] = S1*K2 + S2*K0 = 30 + 200 = 230; dI[4] = S2*K1 = -100; dI[5] = S2*K2 = 300.
  //   dK[k] = sum_x S[x] * I[2x + k - 1]: dK0 = 1*0 + 10*(-2) + 100*0.5 = 30;
  //   dK1 = 1*1 + 10*3 + 100*4 = 431; dK2 = 1*(-2) + 10*0.5 + 100*(-1) = -97.
  expect_near(values(out.at("dI")), {-1, 23, -10, 230, -100, 300});
  expect_near(values(out.at("dK")), {30, 431, -97});
}

TEST(EdslGradient, MaxPassesTheGradientToEveryTiedMaximum) {
  Tensor X = Placeholder(DType::Float64, {2, 3}, "X");
  TensorIndex i("i"), j("j");
  Tensor M = TensorOutput(2);
  M(i) >= X(i, j);
  Tensor S = Placeholder(DType::Float64, {2}, "S");
  auto g = gradient(M, {X}, S);
  TensorMap out = run({{"dX", g[0]}}, {X, S},
                      {{"X", make(DType::Float64, {2, 3}, {1, 5, 2, 7, 3, 7})},
                       {"S", make(DType::Float64, {2}, {2, 3})}});
  expect_near(values(out.at("dX")), {0, 2, 0, 3, 0, 3});
}

TEST(EdslGradient, ElementwiseChainToAScalarLoss) {
  // L = sum(exp(X) * X); dL/dX = exp(X) * (X + 1).
  Tensor X = Placeholder(DType::Float64, {3}, "X");
  Tensor Y = exp(X) * X;
  TensorIndex i;
  Tensor L = TensorOutput();
  L() += Y(i);
  auto g = gradient(L, {X});
  std::vector<double> xv{-1, 0.5, 2};
  TensorMap out = run({{"dX", g[0]}}, {X}, {{"X", make(DType::Float64, {3}, xv)}});
  std::vector<double> want;
  for (double v : xv) want.push_back(std::exp(v) * (v + 1));
  expect_near(values(out.at("dX")), want);
}

TEST(EdslGradient, WithRespectToAnIntermediateTensor) {
  // H = 3 X; L = H * H (elementwise, ones seed): dL/dH = 2 H, and dL/dX = 6 H at the same time.
  Tensor X = Placeholder(DType::Float64, {2}, "X");
  Tensor H = X * 3.0;
  auto g = gradient(H * H, {H, X});
  TensorMap out =
      run({{"dH", g[0]}, {"dX", g[1]}}, {X}, {{"X", make(DType::Float64, {2}, {1, -2})}});
  expect_near(values(out.at("dH")), {6, -12});
  expect_near(values(out.at("dX")), {18, -36});
}

TEST(EdslGradient, TheGradientOfTheLossWithRespectToItselfIsTheSeed) {
  Tensor X = Placeholder(DType::Float64, {2}, "X");
  Tensor S = Placeholder(DType::Float64, {2}, "S");
  Tensor H = exp(X);
  auto g = gradient(H, {H, X}, S);
  TensorMap out =
      run({{"dH", g[0]}, {"dX", g[1]}}, {X, S},
          {{"X", make(DType::Float64, {2}, {0, 1})}, {"S", make(DType::Float64, {2}, {2, 3})}});
  expect_near(values(out.at("dH")), {2, 3});
  expect_near(values(out.at("dX")), {2, 3 * std::exp(1.0)});
}

TEST(EdslGradient, ALossThatDoesNotDependOnXGivesZeros) {
  Tensor X = Placeholder(DType::Float32, {2, 2}, "X");
  Tensor Y = Placeholder(DType::Float32, {2}, "Y");
  auto g = gradient(Y * 2.0, {X, Y});
  EXPECT_EQ(g[0].shape(), X.shape());
  TensorMap out = run({{"dX", g[0]}, {"dY", g[1]}}, {X, Y},
                      {{"X", make(DType::Float32, {2, 2}, {1, 2, 3, 4})},
                       {"Y", make(DType::Float32, {2}, {5, 6})}});
  expect_near(values(out.at("dX")), {0, 0, 0, 0});
  expect_near(values(out.at("dY")), {2, 2});
}

TEST(EdslGradient, GradientsComposeWithFurtherExpressions) {
  // A gradient is an ordinary Tensor: a second-order derivative of sum(X^3) is 6 X.
  Tensor X = Placeholder(DType::Float64, {2}, "X");
  Tensor d = gradient(X * X * X, {X})[0];  // 3 X^2
  Tensor dd = gradient(d, {X})[0];         // 6 X
  TensorMap out = run({{"dd", dd}}, {X}, {{"X", make(DType::Float64, {2}, {2, -1})}});
  expect_near(values(out.at("dd")), {12, -6});
}

TEST(EdslGradient, PlaceholderNamesDoNotClashWithTheLossOrItsSeed) {
  // Unnamed, duplicate and reserved-looking names: the program renames; the results keep order.
  Tensor L = Placeholder(DType::Float64, {2}, "L");
  Tensor dL = Placeholder(DType::Float64, {2}, "d_L");
  Tensor U = Placeholder(DType::Float64, {2});
  Tensor V = Placeholder(DType::Float64, {2}, "L");
  auto g = gradient(L * dL + U * 3.0 - V * V, {V, U, L, dL});
  Function fn = build({{"gV", g[0]}, {"gU", g[1]}, {"gL", g[2]}, {"gdL", g[3]}}, {L, dL, U, V});
  std::vector<std::vector<double>> in{{1, 2}, {3, 4}, {5, 6}, {7, 8}};
  TensorMap args;
  for (size_t i = 0; i < in.size(); ++i)
    args.emplace(fn.program.inputs[i].name, make(DType::Float64, {2}, in[i]));
  TensorMap out = compile(fn, "interp")->run(args);
  expect_near(values(out.at("gV")), {-14, -16});
  expect_near(values(out.at("gU")), {3, 3});
  expect_near(values(out.at("gL")), {3, 4});
  expect_near(values(out.at("gdL")), {1, 2});
}

std::string error_of(const std::function<void()> &f) {
  try {
    f();
  } catch (const EdslError &e) {
    return e.what();
  }
  return "(no error)";
}

TEST(EdslGradient, BadRequestsThrowWithAReason) {
  Tensor X = Placeholder(DType::Float32, {2}, "X");
  Tensor N = Placeholder(DType::Int32, {2}, "N");
  Tensor L = X * cast(N, DType::Float32);
  std::string e = error_of([&] { gradient(L, {N}); });
  EXPECT_NE(e.find("gradient: cannot differentiate with respect to wrt 0 ('N'): it is int32"),
            std::string::npos)
      << e;
  e = error_of([&] { gradient(N * 2, {X}); });
  EXPECT_NE(e.find("gradient: the loss is int32, not a float tensor"), std::string::npos) << e;
  e = error_of([&] { gradient(X, {X > 0.0}); });
  EXPECT_NE(e.find("wrt 0: it is bool"), std::string::npos) << e;
  e = error_of([&] { gradient(X, {X}, Placeholder(DType::Float32, {3})); });
  EXPECT_NE(e.find("the seed has shape [3] but the loss has [2]"), std::string::npos) << e;
  e = error_of([&] { gradient(X, {X}, N); });
  EXPECT_NE(e.find("gradient: the seed is int32, not a float tensor"), std::string::npos) << e;
  e = error_of([&] { gradient(X, {Tensor(2.0)}); });
  EXPECT_NE(e.find("wrt 0 is a literal"), std::string::npos) << e;
  e = error_of([&] { gradient(Tensor(), {X}); });
  EXPECT_NE(e.find("undefined"), std::string::npos) << e;
}

// ---- import_program ---------------------------------------------------------------------------

TEST(EdslImport, ATileProgramIsAnOpOnTensors) {
  tile::Program p = tile::parse_program("function (A[M, K], B[K, N]) -> (C) {\n"
                                        "  P[m, n : M, N] = +(A[m, k] * B[k, n]);\n"
                                        "  C = relu(P) + 1;\n"
                                        "}\n");
  Tensor X = Placeholder(DType::Float32, {2, 2}, "X");
  Tensor W = Placeholder(DType::Float32, {2, 1}, "W");
  Tensor C = import_program(p, {{"A", X * 2.0}, {"B", W}}).at("C");
  EXPECT_EQ(C.shape(), (std::vector<int64_t>{2, 1}));
  TensorMap out = run({{"C", C}}, {X, W},
                      {{"X", make(DType::Float32, {2, 2}, {1, 2, -3, -4})},
                       {"W", make(DType::Float32, {2, 1}, {1, 1})}});
  expect_near(values(out.at("C")), {7, 1});  // relu(2*3) + 1, relu(2*-7) + 1
}

TEST(EdslImport, BadInputsThrow) {
  tile::Program p = tile::parse_program("function (A[N]) -> (B) { B = A * 2; }");
  Tensor X = Placeholder(DType::Float32, {2, 2});
  std::string e = error_of([&] { import_program(p, {}); });
  EXPECT_NE(e.find("import_program: no Tensor for input 'A'"), std::string::npos) << e;
  e = error_of([&] { import_program(p, {{"A", X}}); });  // rank 2 for A[N]
  EXPECT_NE(e.find("import_program:"), std::string::npos) << e;
  e = error_of([&] { import_program(p, {{"A", Placeholder(DType::Float32, {2})}, {"Z", X}}); });
  EXPECT_NE(e.find("the program has no input 'Z'"), std::string::npos) << e;
}

// Every corpus program, imported over placeholders of its spec's types, rebuilt and run on interp,
// gives exactly the outputs of the original program on the same inputs.
HostTensor random_input(const tile::TensorType &type, std::mt19937 &rng) {
  HostTensor t(type);
  for (int64_t i = 0; i < t.elements(); ++i) {
    if (tile::is_float(type.dtype)) {
      t.set_double(i, std::uniform_real_distribution<double>(-2.0, 2.0)(rng));
    } else if (type.dtype == DType::Bool) {
      t.set_int(i, std::uniform_int_distribution<int>(0, 1)(rng));
    } else {  // small integers: valid gather/scatter indices, some zero divisors
      t.set_int(
          i, std::uniform_int_distribution<int>(tile::is_signed_int(type.dtype) ? -3 : 0, 6)(rng));
    }
  }
  return t;
}

bool same_element(const HostTensor &a, const HostTensor &b, int64_t i) {
  if (tile::is_float(a.dtype())) {
    double x = a.get_double(i), y = b.get_double(i);
    return x == y || (std::isnan(x) && std::isnan(y));
  }
  if (tile::is_signed_int(a.dtype()) || a.dtype() == DType::Bool)
    return a.get_int(i) == b.get_int(i);
  return a.get_uint(i) == b.get_uint(i);
}

std::map<std::string, tile::TensorType> read_types(const std::filesystem::path &json_path) {
  std::ifstream in(json_path);
  nlohmann::json j = nlohmann::json::parse(in);
  std::map<std::string, tile::TensorType> types;
  for (auto &[name, spec] : j.at("inputs").items()) {
    auto dtype = tile::parse_dtype(spec.at("dtype").get<std::string>());
    if (!dtype) ADD_FAILURE() << json_path << ": dtype " << spec.at("dtype");
    types[name] = tile::TensorType{dtype.value_or(DType::Float32),
                                   spec.at("shape").get<std::vector<int64_t>>()};
  }
  return types;
}

TEST(EdslImport, EveryCorpusProgramReproducesTheInterpreter) {
  std::filesystem::path dir = std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "programs";
  std::vector<std::filesystem::path> files;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".tile") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 45u);
  for (const auto &file : files) {
    SCOPED_TRACE(file.filename().string());
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    tile::Program p = tile::parse_program(text, file.string());
    std::map<std::string, tile::TensorType> types =
        read_types(std::filesystem::path(file).replace_extension(".json"));
    std::mt19937 rng(7);
    TensorMap values;
    std::map<std::string, Tensor> inputs;
    std::vector<Tensor> placeholders;
    for (const auto &i : p.inputs) {
      ASSERT_TRUE(types.count(i.name)) << i.name;
      values.emplace(i.name, random_input(types.at(i.name), rng));
      placeholders.push_back(Placeholder(types.at(i.name).dtype, types.at(i.name).shape, i.name));
      inputs[i.name] = placeholders.back();
    }
    auto dev = builtin_devices().create("interp");
    TensorMap want = dev->compile(tile::bind(p, types))->run(values);

    std::map<std::string, Tensor> imported = import_program(p, inputs);
    std::vector<std::pair<std::string, Tensor>> outputs;
    for (const auto &o : p.outputs) outputs.emplace_back(o.name, imported.at(o.name));
    TensorMap got = run(outputs, placeholders, values);
    for (const auto &o : p.outputs) {
      const HostTensor &g = got.at(o.name), &w = want.at(o.name);
      ASSERT_EQ(g.type(), w.type()) << o.name;
      int64_t bad = 0;
      for (int64_t i = 0; i < g.elements(); ++i) bad += !same_element(g, w, i);
      EXPECT_EQ(bad, 0) << o.name << ": " << bad << " of " << g.elements() << " elements differ";
    }
  }
}

}  // namespace
}  // namespace tessera
