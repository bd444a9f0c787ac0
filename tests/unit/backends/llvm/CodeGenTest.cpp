// The LLVM code generator and JIT on hand-built loop IR kernels, checked against values computed
// here by plain C++ (or by hand), independently of Tessera.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "backends/llvm/Jit.h"
#include "compiler/IR.h"

namespace tessera::llvm_backend {
namespace {

using namespace compiler;  // NOLINT: test brevity
using tile::DType;
using tile::Intrinsic;
using Op = Binary::Op;

Type f32(int lanes = 1) { return {DType::Float32, lanes}; }
Type i32(int lanes = 1) { return {DType::Int32, lanes}; }
Expr ci(int64_t v) { return IntImm::make(Type::i32(), v); }
Expr var(const std::string &n) { return Var::make(Type::i32(), n); }
Expr bin(Op op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }

KernelFn compile(const Kernel &k, std::unique_ptr<JitModule> &holder) {
  holder = JitModule::compile({&k});
  return holder->lookup(k.name);
}

// out[i] = a[i] + b[i] with a vectorized loop of 16 lanes and a scalar remainder loop.
TEST(LlvmCodeGen, VectorAddWithRemainder) {
  const int n = 37, v = 16, main = n / v * v;
  Expr vi = bin(Op::Mul, var("io"), ci(v));
  Stmt vec =
      For::make("io", ci(0), ci(n / v), ForKind::Serial,
                Store::make("out", Ramp::make(vi, ci(1), v),
                            Binary::make(Op::Add, Load::make(f32(), "a", Ramp::make(vi, ci(1), v)),
                                         Load::make(f32(), "b", Ramp::make(vi, ci(1), v)))));
  Stmt rem = For::make("i", ci(main), ci(n - main), ForKind::Serial,
                       Store::make("out", var("i"),
                                   bin(Op::Add, Load::make(f32(), "a", var("i")),
                                       Load::make(f32(), "b", var("i")))));
  Kernel k{"vadd",
           {{"a", DType::Float32, n, false},
            {"b", DType::Float32, n, false},
            {"out", DType::Float32, n, true}},
           Block::make({vec, rem})};
  std::unique_ptr<JitModule> jit;
  KernelFn fn = compile(k, jit);
  std::vector<float> a(n), b(n), out(n, -1);
  for (int i = 0; i < n; ++i) a[i] = 0.5f * i, b[i] = 100.0f - i;
  void *args[] = {a.data(), b.data(), out.data()};
  fn(args);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(out[i], a[i] + b[i]) << i;  // exact: sums of small binary fractions
}

// C = A x B with the rows parallel across threads and a 16-lane register accumulator
// (Allocate) per row tile, against a naive double-precision loop. Tolerance 1e-4 relative (f32).
TEST(LlvmCodeGen, ParallelMatmulWithAccumulator) {
  const int M = 13, K = 29, N = 32, V = 16;
  Expr jv = bin(Op::Mul, var("jo"), ci(V));
  Stmt init =
      Store::make("acc", Ramp::make(ci(0), ci(1), V), Broadcast::make(FloatImm::make(f32(), 0), V));
  Expr a = Broadcast::make(
      Load::make(f32(), "A", bin(Op::Add, bin(Op::Mul, var("i"), ci(K)), var("k"))), V);
  Expr b =
      Load::make(f32(), "B", Ramp::make(bin(Op::Add, bin(Op::Mul, var("k"), ci(N)), jv), ci(1), V));
  Expr acc = Load::make(f32(), "acc", Ramp::make(ci(0), ci(1), V));
  Stmt update = For::make(
      "k", ci(0), ci(K), ForKind::Serial,
      Store::make("acc", Ramp::make(ci(0), ci(1), V), bin(Op::Add, acc, bin(Op::Mul, a, b))));
  Stmt write =
      Store::make("C", Ramp::make(bin(Op::Add, bin(Op::Mul, var("i"), ci(N)), jv), ci(1), V), acc);
  Stmt body = For::make(
      "i", ci(0), ci(M), ForKind::Parallel,
      For::make("jo", ci(0), ci(N / V), ForKind::Serial,
                Allocate::make("acc", f32(), V, false, Block::make({init, update, write}))));
  Kernel k{"mm",
           {{"A", DType::Float32, M * K, false},
            {"B", DType::Float32, K * N, false},
            {"C", DType::Float32, M * N, true}},
           body};
  std::unique_ptr<JitModule> jit;
  KernelFn fn = compile(k, jit);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(M * K), B(K * N), C(M * N);
  for (auto &x : A) x = u(rng);
  for (auto &x : B) x = u(rng);
  void *args[] = {A.data(), B.data(), C.data()};
  for (int rep = 0; rep < 3; ++rep) {  // the pool is reused
    std::fill(C.begin(), C.end(), 0.f);
    fn(args);
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j) {
        double want = 0;
        for (int kk = 0; kk < K; ++kk) want += double(A[i * K + kk]) * B[kk * N + j];
        EXPECT_NEAR(C[i * N + j], want, 1e-4 * (1 + std::fabs(want))) << i << "," << j;
      }
  }
}

// A register tile of four rows reads each vector of the panel P once per row, as the compiler's
// tiles do; P asks to be prefetched 64 elements ahead (BufferParam::prefetch_ahead). The optimized
// code keeps one prefetch per vector read, not one per row, and computes what it computes without.
TEST(LlvmCodeGen, PrefetchAheadOncePerVectorRead) {
  const int rows = 4, K = 16, V = 16, ahead = 64;
  std::vector<Stmt> updates;
  for (int r = 0; r < rows; ++r) {
    Expr at = Ramp::make(ci(r * V), ci(1), V);
    Expr a = Broadcast::make(Load::make(f32(), "A", bin(Op::Add, ci(r * K), var("k"))), V);
    Expr p = Load::make(f32(), "P", Ramp::make(bin(Op::Mul, var("k"), ci(V)), ci(1), V));
    updates.push_back(
        Store::make("C", at, bin(Op::Add, Load::make(f32(), "C", at), bin(Op::Mul, a, p))));
  }
  Kernel k{"tile",
           {{"C", DType::Float32, rows * V, true},
            {"A", DType::Float32, rows * K, false},
            {"P", DType::Float32, K * V, false}},
           For::make("k", ci(0), ci(K), ForKind::Serial, Block::make(updates))};
  k.params[2].prefetch_ahead = ahead;
  std::string ir = kernels_ir({&k}, true);
  size_t calls = 0;
  for (size_t at = ir.find("call void @llvm.prefetch"); at != std::string::npos;
       at = ir.find("call void @llvm.prefetch", at + 1))
    ++calls;
  EXPECT_EQ(calls, 1u) << ir;
  std::unique_ptr<JitModule> jit;
  KernelFn fn = compile(k, jit);
  std::vector<float> C(rows * V, 0.f), A(rows * K), P(K * V);
  for (int i = 0; i < rows * K; ++i) A[i] = 0.25f * (i % 7);
  for (int i = 0; i < K * V; ++i) P[i] = 0.5f * (i % 5);
  void *args[] = {C.data(), A.data(), P.data()};
  fn(args);
  for (int r = 0; r < rows; ++r)
    for (int l = 0; l < V; ++l) {
      float want = 0;
      for (int kk = 0; kk < K; ++kk) want += A[r * K + kk] * P[kk * V + l];
      EXPECT_EQ(C[r * V + l], want) << r << "," << l;  // exact: small binary fractions
    }
}

// Runs `value(x, y)` elementwise over int32 inputs (scalar loop) and returns the outputs.
template <typename T>
std::vector<T> run_binary(DType dt, const std::vector<T> &x, const std::vector<T> &y, DType out_dt,
                          const std::function<Expr(Expr, Expr)> &value) {
  int n = static_cast<int>(x.size());
  Stmt body = For::make(
      "i", ci(0), ci(n), ForKind::Serial,
      Store::make("o", var("i"),
                  value(Load::make({dt, 1}, "x", var("i")), Load::make({dt, 1}, "y", var("i")))));
  Kernel k{"k", {{"x", dt, n, false}, {"y", dt, n, false}, {"o", out_dt, n, true}}, body};
  std::unique_ptr<JitModule> jit;
  KernelFn fn = compile(k, jit);
  std::vector<T> o(n);
  void *args[] = {const_cast<T *>(x.data()), const_cast<T *>(y.data()), o.data()};
  fn(args);
  return o;
}

TEST(LlvmCodeGen, TileIntegerDivisionTruncatesAndDivByZeroIsZero) {
  std::vector<int32_t> x{7, -7, 7, -7, 5, INT32_MIN, 9}, y{2, 2, -2, -2, 0, -1, 3};
  auto o = run_binary<int32_t>(DType::Int32, x, y, DType::Int32, [](Expr a, Expr b) {
    return Call::make(i32(), Intrinsic::Div, {a, b});
  });
  EXPECT_EQ(o, (std::vector<int32_t>{3, -3, -3, 3, 0, INT32_MIN, 3}));
}

TEST(LlvmCodeGen, IndexDivisionAndModuloFloor) {
  std::vector<int32_t> x{7, -7, 7, -7, 6, -6}, y{2, 2, -2, -2, 3, 3};
  auto q = run_binary<int32_t>(DType::Int32, x, y, DType::Int32,
                               [](Expr a, Expr b) { return bin(Op::Div, a, b); });
  auto r = run_binary<int32_t>(DType::Int32, x, y, DType::Int32,
                               [](Expr a, Expr b) { return bin(Op::Mod, a, b); });
  EXPECT_EQ(q, (std::vector<int32_t>{3, -4, -4, 3, 2, -2}));
  EXPECT_EQ(r, (std::vector<int32_t>{1, 1, -1, -1, 0, 0}));
}

TEST(LlvmCodeGen, ShiftsOutOfRange) {
  std::vector<int8_t> x{1, 1, -128, -128, 64, 3}, y{3, 8, 1, 9, -1, 0};
  auto l = run_binary<int8_t>(DType::Int8, x, y, DType::Int8, [](Expr a, Expr b) {
    return Call::make({DType::Int8, 1}, Intrinsic::BitLeft, {a, b});
  });
  auto r = run_binary<int8_t>(DType::Int8, x, y, DType::Int8, [](Expr a, Expr b) {
    return Call::make({DType::Int8, 1}, Intrinsic::BitRight, {a, b});
  });
  EXPECT_EQ(l, (std::vector<int8_t>{8, 0, 0, 0, 0, 3}));
  EXPECT_EQ(r, (std::vector<int8_t>{0, 0, -64, -1, 0, 3}));
}

TEST(LlvmCodeGen, FloatSemantics) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{2.5f, -2.5f, 0.49999997f, nan, 1.0f, -3.0f}, y{1, nan, 3, 0, nan, -5};
  auto round = run_binary<float>(DType::Float32, x, y, DType::Float32, [](Expr a, Expr) {
    return Call::make(f32(), Intrinsic::Round, {a});
  });
  EXPECT_EQ(round[0], 3.0f);
  EXPECT_EQ(round[1], -3.0f);  // half away from zero, not to even
  EXPECT_EQ(round[2], 0.0f);
  auto mx = run_binary<float>(DType::Float32, x, y, DType::Float32,
                              [](Expr a, Expr b) { return bin(Op::Max, a, b); });
  EXPECT_EQ(mx[0], 2.5f);
  EXPECT_TRUE(std::isnan(mx[1]) && std::isnan(mx[3]) && std::isnan(mx[4]));  // NaN propagates
  EXPECT_EQ(mx[5], -3.0f);
  auto relu = run_binary<float>(DType::Float32, x, y, DType::Float32, [](Expr a, Expr) {
    return Call::make(f32(), Intrinsic::Relu, {a});
  });
  EXPECT_EQ(relu[1], 0.0f);
  EXPECT_TRUE(std::isnan(relu[3]));
  auto th = run_binary<float>(DType::Float32, x, y, DType::Float32,
                              [](Expr a, Expr) { return Call::make(f32(), Intrinsic::Tanh, {a}); });
  EXPECT_NEAR(th[0], std::tanh(2.5), 1e-6);
}

TEST(LlvmCodeGen, SaturatingFloatToIntCasts) {
  std::vector<float> x{1e10f, -1e10f, std::numeric_limits<float>::quiet_NaN(), -2.9f, 300.f}, y(5);
  auto o = run_binary<float>(DType::Float32, x, y, DType::Int32,
                             [](Expr a, Expr) { return Cast::make(i32(), a); });
  // `o` holds int32 bits in float storage of the same size.
  std::vector<int32_t> got(5);
  std::memcpy(got.data(), o.data(), 20);
  EXPECT_EQ(got, (std::vector<int32_t>{INT32_MAX, INT32_MIN, 0, -2, 300}));
}

// A bool mask from a comparison, stored as bytes, and a gather with a stride-2 Ramp.
TEST(LlvmCodeGen, BoolStoresAndStridedGather) {
  const int n = 16;
  Stmt cmp = Store::make("m", Ramp::make(ci(0), ci(1), 8),
                         Binary::make(Op::GT, Load::make(f32(), "x", Ramp::make(ci(0), ci(2), 8)),
                                      Broadcast::make(FloatImm::make(f32(), 0), 8)));
  Kernel k{"g", {{"x", DType::Float32, n, false}, {"m", DType::Bool, 8, true}}, cmp};
  std::unique_ptr<JitModule> jit;
  KernelFn fn = compile(k, jit);
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i % 3 == 0) ? 1.f : -1.f;
  std::vector<uint8_t> m(8, 7);
  void *args[] = {x.data(), m.data()};
  fn(args);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(m[i], (2 * i) % 3 == 0 ? 1 : 0) << i;
}

TEST(LlvmCodeGen, Float16ComputesAndRounds) {
  // 2048 + 1 is not representable in half: rounds to even (2048).
  std::vector<uint16_t> x{0x6800 /*2048*/, 0x3c00 /*1*/}, y{0x3c00, 0x3c00};
  auto o = run_binary<uint16_t>(DType::Float16, x, y, DType::Float16,
                                [](Expr a, Expr b) { return bin(Op::Add, a, b); });
  EXPECT_EQ(o[0], 0x6800);
  EXPECT_EQ(o[1], 0x4000);  // 2
}

}  // namespace
}  // namespace tessera::llvm_backend
