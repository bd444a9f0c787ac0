// Constants compiled in (runtime/Constants.h): what is folded, that the folded program computes
// what the original does (interp against interp, and every device against interp), and errors.
#include <gtest/gtest.h>

#include <random>

#include "backends/Registry.h"
#include "runtime/Constants.h"
#include "runtime/interp/Interpret.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using tile::DType;
using tile::TensorType;

TensorType f32(std::vector<int64_t> shape) { return {DType::Float32, std::move(shape)}; }

HostTensor random_tensor(const TensorType &type, std::mt19937 &rng, double lo = -1, double hi = 1) {
  std::uniform_real_distribution<double> u(lo, hi);
  HostTensor t(type);
  for (int64_t i = 0; i < t.elements(); ++i) t.set_double(i, u(rng));
  return t;
}

// A convolution with bias, batch norm (as Keras writes it: reshapes, sqrt, div) and relu, then a
// second convolution that reads the first's output (a chain that is not folded past relu).
const char *const kConvBn = R"(function (I[N, H, W, CI], K[KH, KW, CI, CO], B[CO], M[CO], V[CO],
                                         G[CO], BETA[CO], K2[CO, F]) -> (R) {
  O[n, x, y, co : N, H, W, CO] = +(I[n, x + kx - 1, y + ky - 1, ci] * K[kx, ky, ci, co]);
  OB = add(O, B);
  M4 = reshape(M, 1, 1, 1, CO);
  C = sub(OB, M4);
  V4 = reshape(V, 1, 1, 1, CO);
  E = add(V4, 0.001);
  S = sqrt(E);
  D = div(C, S);
  G4 = reshape(G, 1, 1, 1, CO);
  Y = mul(D, G4);
  Z = add(Y, BETA);
  P = cmp_gt(Z, 0.0);
  A = cond(P, Z, 0);
  R[n, x, y, f : N, H, W, F] = +(A[n, x, y, c] * K2[c, f]);
})";

struct ConvBn {
  tile::BoundProgram program;
  TensorMap weights, image;
};

ConvBn conv_bn() {
  std::map<std::string, TensorType> types = {
      {"I", f32({1, 5, 6, 3})}, {"K", f32({3, 3, 3, 8})}, {"B", f32({8})},    {"M", f32({8})},
      {"V", f32({8})},          {"G", f32({8})},          {"BETA", f32({8})}, {"K2", f32({8, 4})}};
  ConvBn c{tile::bind(tile::parse_program(kConvBn), types), {}, {}};
  std::mt19937 rng(7);
  for (const auto &[name, type] : types) {
    if (name == "I") {
      c.image[name] = random_tensor(type, rng);
    } else {
      c.weights[name] = name == "V" ? random_tensor(type, rng, 0.5, 2) : random_tensor(type, rng);
    }
  }
  return c;
}

void expect_near(const HostTensor &ref, const HostTensor &got, const std::string &what) {
  ASSERT_EQ(ref.type(), got.type()) << what;
  for (int64_t i = 0; i < ref.elements(); ++i)
    ASSERT_NEAR(got.get_double(i), ref.get_double(i), 1e-5 * (1 + std::abs(ref.get_double(i))))
        << what << " at " << i;
}

TEST(Constants, BatchNormFoldsIntoTheConvolutionsWeights) {
  ConvBn c = conv_bn();
  FoldedProgram f = fold_constants(c.program, c.weights);
  // Reshapes, eps and sqrt are evaluated; bias, mean, sqrt, gamma and beta fold into K and one
  // shift; relu stays, and the second convolution's weights are left alone (nothing to fold).
  EXPECT_EQ(f.folded_statements, 5);
  EXPECT_EQ(f.folded_epilogues, 1);
  std::vector<std::string> statements;
  for (const auto &s : f.program.statements) statements.push_back(s.output);
  EXPECT_EQ(statements, (std::vector<std::string>{"O", "Z", "P", "A", "R"}));
  std::vector<std::string> inputs;
  for (const auto &[name, type] : f.program.inputs) inputs.push_back(name);
  EXPECT_EQ(inputs, (std::vector<std::string>{"I", "K2", "O_shift", "O_weights"}));
  EXPECT_EQ(f.constants.size(), 3u);
  // The folded program, with its constants, computes what the original computes.
  TensorMap folded_in = f.constants, original_in = c.weights;
  folded_in["I"] = original_in["I"] = c.image.at("I");
  expect_near(interpret(c.program, original_in).at("R"), interpret(f.program, folded_in).at("R"),
              "interp");
}

TEST(Constants, EveryDeviceRunsTheFoldedProgramAsInterpRunsTheOriginal) {
  ConvBn c = conv_bn();
  TensorMap all = c.weights;
  all["I"] = c.image.at("I");
  HostTensor ref = interpret(c.program, all).at("R");
  DeviceRegistry registry = builtin_devices();
  for (const auto &name : registry.names()) {
    CompileOptions options;
    options.constants = c.weights;
    options.policy = TunePolicy::Off;
    auto exe = registry.create(name)->compile(c.program, options);
    EXPECT_EQ(exe->report().epilogues_folded, 1) << name;
    expect_near(ref, exe->run(c.image).at("R"), name);
    expect_near(ref, exe->run(c.image).at("R"), name + ", second run");
  }
}

TEST(Constants, CpuReadsConstantWeightsFromPanelsFilledOnce) {
  // Four vector tiles of B's columns on `cpu`: B is laid out tile by tile while compiling (one
  // filled panel), and every device, that one too, computes what interp computes, run after run.
  auto program = tile::bind(
      tile::parse_program(
          "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }"),
      {{"A", f32({37, 40})}, {"B", f32({40, 128})}});
  std::mt19937 rng(3);
  TensorMap weights = {{"B", random_tensor(f32({40, 128}), rng)}};
  TensorMap image = {{"A", random_tensor(f32({37, 40}), rng)}};
  TensorMap all = weights;
  all["A"] = image["A"];
  HostTensor ref = interpret(program, all).at("C");
  DeviceRegistry registry = builtin_devices();
  for (const auto &name : registry.names()) {
    CompileOptions options;
    options.constants = weights;
    options.policy = TunePolicy::Off;
    auto exe = registry.create(name)->compile(program, options);
    if (name == "cpu") {
      EXPECT_EQ(exe->report().constant_panels, 1);
    }
    expect_near(ref, exe->run(image).at("C"), name);
    expect_near(ref, exe->run(image).at("C"), name + ", second run");
  }
}

TEST(Constants, FoldsOnlyWhatDependsOnConstantsAlone) {
  // A is a run's input: nothing reading it folds; a broadcast much larger than its constant
  // operand stays a kernel; an output computed from constants alone is still computed.
  auto p = tile::bind(tile::parse_program("function (A[N], C[M]) -> (O, Q) { "
                                          "T = C * 2.0; U[i, j : 100, M] = =(T[j]); "
                                          "O = A + T; Q = T + 1.0; }"),
                      {{"A", f32({3})}, {"C", f32({3})}});
  TensorMap constants = {{"C", HostTensor(f32({3}))}};
  FoldedProgram f = fold_constants(p, constants);
  EXPECT_EQ(f.folded_statements, 1);  // T
  std::vector<std::string> statements;
  for (const auto &s : f.program.statements) statements.push_back(s.output);
  EXPECT_EQ(statements, (std::vector<std::string>{"U", "O", "Q"}));
}

// The message of the tile::Error `f` throws ("" when it throws none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const tile::Error &e) {
    return e.what();
  }
  return "";
}

TEST(Constants, ErrorsNameTheInput) {
  ConvBn c = conv_bn();
  EXPECT_NE(error_of([&] {
              fold_constants(c.program, {{"Nope", HostTensor(f32({8}))}});
            })
                .find("constant 'Nope' is not an input of the program (its inputs: I, K, B, M, "
                      "V, G, BETA, K2)"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              fold_constants(c.program, {{"B", HostTensor(f32({9}))}});
            }).find("constant 'B' is float32[9] but the program declares float32[8]"),
            std::string::npos);
  // A run that gives a constant a value is refused; one that omits a run input too.
  CompileOptions options;
  options.constants = c.weights;
  options.policy = TunePolicy::Off;
  auto exe = builtin_devices().create("cpu")->compile(c.program, options);
  TensorMap with_weight = c.image;
  with_weight["K"] = c.weights.at("K");
  EXPECT_NE(error_of([&] {
              exe->run(with_weight);
            }).find("input 'K' was compiled as a constant; a run cannot give it another value"),
            std::string::npos);
  EXPECT_NE(error_of([&] { exe->run({}); }).find("no value for input 'I'"), std::string::npos);
}

}  // namespace
}  // namespace tessera
