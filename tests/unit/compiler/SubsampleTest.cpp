// Computing only what is read (compiler/Subsample.h): which statements shrink, to what, and that
// the program computes what the original does (interp against interp, every device against
// interp on the original).
#include <gtest/gtest.h>

#include "autodiff/Gradient.h"
#include "backends/Registry.h"
#include "compiler/Subsample.h"
#include "runtime/interp/Interpret.h"
#include "tests/unit/compiler/RandomInputs.h"
#include "tile/Parser.h"

namespace tessera {
namespace {

using tile::DType;
using tile::TensorType;

TensorType f32(std::vector<int64_t> shape) { return {DType::Float32, std::move(shape)}; }

tile::BoundProgram bound(const std::string &source,
                         const std::map<std::string, TensorType> &types) {
  return tile::bind(tile::parse_program(source), types);
}

std::map<std::string, std::vector<int64_t>> shapes(const tile::BoundProgram &p) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto &s : p.statements) out[s.output] = s.type.shape;
  return out;
}

void expect_shapes(const tile::BoundProgram &p,
                   const std::map<std::string, std::vector<int64_t>> &want) {
  auto got = shapes(p);
  for (const auto &[name, shape] : want) EXPECT_EQ(got[name], shape) << name;
}

bool any_of_shape(const tile::BoundProgram &p, const std::vector<int64_t> &shape) {
  for (const auto &s : p.statements)
    if (s.type.shape == shape) return true;
  return false;
}

std::vector<std::string> order(const tile::BoundProgram &p) {
  std::vector<std::string> out;
  for (const auto &s : p.statements) out.push_back(s.output);
  return out;
}

void expect_same_outputs(const tile::BoundProgram &original, const tile::BoundProgram &changed,
                         unsigned seed = 1) {
  const TensorMap in = test::random_inputs(original, seed);
  const TensorMap want = interpret(original, in), got = interpret(changed, in);
  for (const auto &[name, type] : original.outputs) {
    const HostTensor &a = want.at(name), &b = got.at(name);
    ASSERT_EQ(a.type(), b.type()) << name;
    for (int64_t i = 0; i < a.elements(); ++i)
      ASSERT_NEAR(b.get_double(i), a.get_double(i), 1e-5 * (1 + std::abs(a.get_double(i))))
          << name << " at " << i;
  }
}

// The end of a ResNet stage as Keras writes it: the last block's output T is read only by the
// next stage's stride-2 1x1 convolutions (the shortcut Y and the main path Z).
const char *const kStageBody = R"(
  V = relu(X);
  A[n, i, j, c : N, H, W, C] = +(V[n, i + k - 1, j + l - 1, ci] * K3[k, l, ci, c]);
  P[n, i, j, c : N, H, W, C] = +(A[n, i + k, j + l, ci] * K1[k, l, ci, c]);
  Q = add(P, B);
  T = relu(add(Q, V));
  Y[n, i, j, e : N, 4, 4, E] = +(T[n, 2*i + k, 2*j + l, c] * S[k, l, c, e]);
  Z[n, i, j, f : N, 4, 4, F] = +(T[n, 2*i + k, 2*j + l, c] * S2[k, l, c, f]);
)";

// The stage with `outputs`, and `more` statements after it.
std::string stage(const std::string &outputs, const std::string &more = "") {
  return "function (X[N, H, W, C], K3[3, 3, C, C], K1[1, 1, C, C], B[C], S[1, 1, C, E], "
         "S2[1, 1, C, F]) -> (" +
         outputs + ") {" + kStageBody + more + "}";
}

const std::map<std::string, TensorType> kStageTypes = {
    {"X", f32({2, 7, 7, 5})}, {"K3", f32({3, 3, 5, 5})}, {"K1", f32({1, 1, 5, 5})},
    {"B", f32({5})},          {"S", f32({1, 1, 5, 3})},  {"S2", f32({1, 1, 5, 4})}};

TEST(Subsample, StageEndComputesOnlyTheEvenPixels) {
  const auto p = bound(stage("Y, Z"), kStageTypes);
  const auto q = compiler::subsample_strided_reads(p);
  auto s = shapes(q);
  // The 3x3 convolution, the 1x1 after it, the bias, the add and relu: pixels 0, 2, 4, 6 of 7.
  for (const char *name : {"A", "P", "Q", "T"})
    EXPECT_EQ(s[name], (std::vector<int64_t>{2, 4, 4, 5})) << name;
  // V is also read whole (by A), so the add reads a strided copy of it, made right after V.
  EXPECT_EQ(s["V"], (std::vector<int64_t>{2, 7, 7, 5}));
  EXPECT_EQ(s["V_strided"], (std::vector<int64_t>{2, 4, 4, 5}));
  const auto names = order(q);
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "V");
  EXPECT_EQ(names[1], "V_strided");
  // A is now a stride-2 convolution: its input index is 2*i + k - 1.
  for (const auto &st : q.statements)
    if (st.output == "A") {
      EXPECT_EQ(st.contraction().inputs[0].dims[1].str(st.contraction().indices), "2*i + k - 1");
    }
  expect_same_outputs(p, q);
}

// Every device runs `p` (subsampling it) as interp runs `p` as written.
void expect_devices_match_interp(const tile::BoundProgram &p, unsigned seed) {
  const TensorMap in = test::random_inputs(p, seed);
  const TensorMap want = interpret(p, in);
  DeviceRegistry registry = builtin_devices();
  for (const auto &device : registry.names()) {
    CompileOptions options;
    options.policy = TunePolicy::Off;
    const TensorMap got = registry.create(device)->compile(p, options)->run(in);
    for (const auto &[name, type] : p.outputs) {
      const HostTensor &a = want.at(name), &b = got.at(name);
      ASSERT_EQ(a.type(), b.type()) << device << " " << name;
      for (int64_t i = 0; i < a.elements(); ++i)
        ASSERT_NEAR(b.get_double(i), a.get_double(i), 1e-4 * (1 + std::abs(a.get_double(i))))
            << device << " " << name << " at " << i;
    }
  }
}

TEST(Subsample, EveryDeviceRunsItAsInterpRunsTheOriginal) {
  expect_devices_match_interp(bound(stage("Y, Z"), kStageTypes), 5);
}

TEST(Subsample, TrainingStepsMatchInterpOnEveryDevice) {
  // The stage end's gradient: the backward pass reads T's inputs whole (relu's derivative), so
  // the forward pass subsamples through strided copies; every device against interp.
  const auto loss = tile::parse_program(stage("L", "  L[] = +(Y[n, i, j, e] * Y[n, i, j, e]);\n"));
  auto types = kStageTypes;
  types["d_L"] = f32({});
  const auto p =
      tile::bind(autodiff::gradient(loss, "L", {"X", "K3", "K1", "B", "S", "S2"}), types);
  ASSERT_TRUE(any_of_shape(compiler::subsample_strided_reads(p), {2, 4, 4, 5}));
  expect_devices_match_interp(p, 9);
}

TEST(Subsample, OddPositionsAndCoarserSteps) {
  // Read at 2*i + 1 only: positions 1, 3, 5 of 7 (T, and Z, with the contraction W and a copy
  // of M, which O4 reads whole). Read at 4*i and 2*i: every even one.
  const auto p = bound(R"(function (X[N, C]) -> (O1, O2, O3, O4) {
    T = exp(X);
    O1[i, c : 3, C] = +(T[2*i + 1, c]);
    U = X * 2.0;
    O2[i, c : 2, C] = +(U[4*i, c] + U[2*i, c]);
    W[i, c : 7, C] = +(X[i, c] * X[i, c]);
    M = relu(X);
    Z = W - M;
    O3[i, c : 3, C] = +(Z[2*i + 1, c]);
    O4[i, c : 7, C] = +(M[i, c]);
  })",
                       {{"X", f32({7, 3})}});
  const auto q = compiler::subsample_strided_reads(p);
  expect_shapes(q, {{"T", {3, 3}},
                    {"U", {4, 3}},
                    {"W", {3, 3}},
                    {"Z", {3, 3}},
                    {"M", {7, 3}},
                    {"M_strided", {3, 3}}});
  expect_same_outputs(p, q);
}

TEST(Subsample, KeepsWhatMustStayWhole) {
  // T: read at even and odd positions. O: a program output. R: read by a reshape. I: elementwise
  // over its own coordinates (index). G: written at 2*i (no plain output index to subsample).
  const auto p = bound(R"(function (X[N, C]) -> (A, O, B, D, E, H) {
    T = exp(X);
    A[i, c : 3, C] = +(T[2*i, c] + T[2*i + 1, c]);
    O = X + 1.0;
    B[i, c : 3, C] = +(O[2*i, c]);
    R = X * 3.0;
    F = reshape(R, 21);
    D[i : 10] = +(F[2*i]);
    I = index(X, 0);
    E[i, c : 3, C] = +(I[2*i, c]);
    G[2*i, c : 8, C] = +(X[i, c]);
    H[i, c : 4, C] = +(G[2*i, c]);
  })",
                       {{"X", f32({7, 3})}});
  const auto q = compiler::subsample_strided_reads(p);
  expect_shapes(q, {{"T", {7, 3}}, {"O", {7, 3}}, {"R", {7, 3}}, {"I", {7, 3}}, {"G", {8, 3}}});
  EXPECT_EQ(q.statements.size(), p.statements.size());
  expect_same_outputs(p, q);
}

}  // namespace
}  // namespace tessera
