// Vector math: which libmvec function a vector of each width calls, and that kernels calling them
// (whole registers, chunks of a wider vector, half through float) compute what libm computes.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/llvm/Jit.h"
#include "backends/llvm/VectorMath.h"
#include "compiler/IR.h"

namespace tessera::llvm_backend {
namespace {

using namespace compiler;  // NOLINT: test brevity
using tile::DType;
using tile::Intrinsic;

std::string symbol(const std::string &name, DType dt, int arity, int lanes, VectorIsa isa) {
  auto f = vector_function(name, dt, arity, lanes, isa);
  return f ? f->symbol + "/" + std::to_string(f->lanes) : "none";
}

TEST(VectorMath, TheWidestVariantWhoseLanesDivideTheVector) {
  EXPECT_EQ(symbol("erf", DType::Float32, 1, 16, VectorIsa::Avx512), "_ZGVeN16v_erff/16");
  EXPECT_EQ(symbol("erf", DType::Float32, 1, 8, VectorIsa::Avx512), "_ZGVdN8v_erff/8");
  EXPECT_EQ(symbol("exp", DType::Float32, 1, 16, VectorIsa::Avx2), "_ZGVdN8v_expf/8");
  EXPECT_EQ(symbol("exp", DType::Float32, 1, 8, VectorIsa::Avx), "_ZGVcN8v_expf/8");
  EXPECT_EQ(symbol("tanh", DType::Float32, 1, 12, VectorIsa::Avx2), "_ZGVbN4v_tanhf/4");
  EXPECT_EQ(symbol("pow", DType::Float64, 2, 8, VectorIsa::Avx2), "_ZGVdN4vv_pow/4");
  EXPECT_EQ(symbol("log", DType::Float64, 1, 2, VectorIsa::Sse), "_ZGVbN2v_log/2");
}

TEST(VectorMath, NoneWhereLibmvecHasNoVariant) {
  EXPECT_EQ(symbol("erf", DType::Float32, 1, 2, VectorIsa::Avx512), "none");  // under 128 bits
  EXPECT_EQ(symbol("erf", DType::Float32, 1, 1, VectorIsa::Avx2), "none");
  EXPECT_EQ(symbol("sqrt", DType::Float32, 1, 8, VectorIsa::Avx2), "none");  // an instruction
  EXPECT_EQ(symbol("erf", DType::Float16, 1, 8, VectorIsa::Avx2), "none");   // callers widen half
  EXPECT_EQ(symbol("exp", DType::Int32, 1, 8, VectorIsa::Avx2), "none");
}

// Debian 12's glibc (2.36) has libmvec with erf and tanh: where it stops loading, every kernel
// with exp or erf silently runs lane by lane again, ten times slower.
TEST(VectorMath, TheHostHasLibmvec) {
  ASSERT_TRUE(host_vector_math().has_value());
  EXPECT_EQ(host_vector_math_name().rfind("libmvec ", 0), 0u) << host_vector_math_name();
}

constexpr int kN = 96;  // a multiple of every width below

// out[i..i+lanes) = op(a[...], b[...]) in `dt`, a vector of `lanes` at a time.
Kernel vector_kernel(const std::string &name, Intrinsic op, int arity, DType dt, int lanes) {
  Expr i = Var::make(Type::i32(), "i");
  Expr at = Ramp::make(Binary::make(Binary::Op::Mul, i, IntImm::make(Type::i32(), lanes)),
                       IntImm::make(Type::i32(), 1), lanes);
  std::vector<Expr> args = {Load::make({dt, lanes}, "a", at)};
  if (arity == 2) args.push_back(Load::make({dt, lanes}, "b", at));
  Stmt body = For::make("i", IntImm::make(Type::i32(), 0), IntImm::make(Type::i32(), kN / lanes),
                        ForKind::Serial, Store::make("out", at, Call::make({dt, lanes}, op, args)));
  return {name, {{"out", dt, kN, true}, {"a", dt, kN, false}, {"b", dt, kN, false}}, body};
}

struct Case {
  Intrinsic op;
  int arity;
  double (*ref)(double, double);
};

const std::vector<Case> &cases() {
  static const std::vector<Case> c = {
      {Intrinsic::Erf, 1, [](double x, double) { return std::erf(x); }},
      {Intrinsic::Exp, 1, [](double x, double) { return std::exp(x); }},
      {Intrinsic::Tanh, 1, [](double x, double) { return std::tanh(x); }},
      {Intrinsic::Log, 1, [](double x, double) { return std::log(x); }},
      {Intrinsic::Pow, 2, [](double x, double y) { return std::pow(x, y); }},
  };
  return c;
}

// Every case at 4, 8, 16 and 32 lanes (one register, chunks, or libm lane by lane where the host
// has no libmvec) within a few float ulp of the double result, NaN for NaN.
TEST(VectorMath, KernelsMatchLibm) {
  std::vector<Kernel> ks;
  for (const auto &c : cases())
    for (int lanes : {4, 8, 16, 32})
      ks.push_back(vector_kernel(std::string(tile::intrinsic_name(c.op)) + std::to_string(lanes),
                                 c.op, c.arity, DType::Float32, lanes));
  std::vector<const Kernel *> ptrs;
  for (const auto &k : ks) ptrs.push_back(&k);
  auto jit = JitModule::compile(ptrs);
  std::vector<float> a(kN), b(kN);
  for (int i = 0; i < kN; ++i) {
    a[i] = 0.05f + 0.0625f * static_cast<float>(i % 48);  // positive: log and pow are defined
    b[i] = -1.5f + 0.125f * static_cast<float>(i % 24);
  }
  a[kN - 1] = NAN;
  size_t k = 0;
  for (const auto &c : cases())
    for (int lanes : {4, 8, 16, 32}) {
      std::vector<float> out(kN, -7);
      void *args[] = {out.data(), a.data(), b.data()};
      jit->lookup(ks[k].name)(args);
      for (int i = 0; i < kN; ++i) {
        double want = c.ref(a[i], b[i]);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(out[i])) << ks[k].name << " at " << i;
          continue;
        }
        EXPECT_NEAR(out[i], want, 4e-7 * std::max(1.0, std::fabs(want)))
            << ks[k].name << " at " << i << " of " << lanes << " lanes";
      }
      ++k;
    }
}

// Double and half vectors: double through libmvec's double functions, half widened to float.
TEST(VectorMath, DoubleAndHalf) {
  Kernel d = vector_kernel("erf_f64", Intrinsic::Erf, 1, DType::Float64, 8);
  Kernel h = vector_kernel("exp_f16", Intrinsic::Exp, 1, DType::Float16, 16);
  auto jit = JitModule::compile({&d, &h});
  std::vector<double> a(kN), out(kN);
  for (int i = 0; i < kN; ++i) a[i] = -3 + 0.0625 * i;
  void *args[] = {out.data(), a.data(), a.data()};
  jit->lookup("erf_f64")(args);
  for (int i = 0; i < kN; ++i) EXPECT_NEAR(out[i], std::erf(a[i]), 1e-15) << i;
  std::vector<_Float16> ha(kN), hout(kN);
  for (int i = 0; i < kN; ++i) ha[i] = static_cast<_Float16>(-2 + 0.03125 * i);
  void *hargs[] = {hout.data(), ha.data(), ha.data()};
  jit->lookup("exp_f16")(hargs);
  for (int i = 0; i < kN; ++i) {
    double want = std::exp(static_cast<double>(ha[i]));
    EXPECT_NEAR(static_cast<double>(hout[i]), want, want * 1e-3) << i;
  }
}

}  // namespace
}  // namespace tessera::llvm_backend
