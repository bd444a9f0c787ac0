// `=` contractions where two points may write one element (a run-time error in Tile) are left to
// the host; those where every element is written at most once stay kernels. Expectations are
// worked out by hand from the programs' index sets.
#include <gtest/gtest.h>

#include "compiler/Lower.h"
#include "compiler/LowerContraction.h"
#include "tile/Parser.h"

namespace tessera::compiler {
namespace {

using tile::DType;
using tile::TensorType;

TensorType f32(std::vector<int64_t> shape) { return {DType::Float32, std::move(shape)}; }

// Lowers `text` (inputs A: f32[4]) and says whether statement `name` became a host step.
bool is_host_step(const std::string &text, const std::string &name) {
  auto bound = tile::bind(tile::parse_program(text), {{"A", f32({4})}});
  for (const auto &step : lower(bound, Target{}).steps)
    if (step.kind == Step::Kind::Host && step.host_statement == name) return true;
  return false;
}

bool may_write_twice(const std::string &text, const std::string &name) {
  auto bound = tile::bind(tile::parse_program(text), {{"A", f32({4})}});
  for (const auto &s : bound.statements)
    if (s.output == name) return assign_may_write_twice(bound, s);
  ADD_FAILURE() << "no statement " << name;
  return false;
}

// Regression: the cpu device wrote B[0] three times where interp reports the error.
TEST(AssignOnce, ReductionIndexUnderAssignGoesToTheHost) {
  const char *text = "function (A[N]) -> (C, B) { C = A * 2; B[0 : 1] = =(A[i]); }";
  EXPECT_TRUE(may_write_twice(text, "B"));
  EXPECT_TRUE(is_host_step(text, "B"));
}

TEST(AssignOnce, PlainCopyAndGatherAreKernels) {
  EXPECT_FALSE(may_write_twice("function (A[N]) -> (B) { B[i : N] = =(A[i]); }", "B"));
  EXPECT_FALSE(may_write_twice("function (A[N]) -> (B) { B[i : 2] = =(A[2*i + 1]); }", "B"));
}

// A reduction index with one value (a constraint pins it) writes each element once.
TEST(AssignOnce, SingleValuedReductionIndexIsAKernel) {
  EXPECT_FALSE(may_write_twice("function (A[N]) -> (B) { B[i : N] = =(A[i + j]), j < 1; }", "B"));
}

// P[2*j + r] with r < 2: for each output o, j lies in [(o-1)/2, o/2], one integer at most.
TEST(AssignOnce, UpsamplingIsPinnedByTwoInequalities) {
  EXPECT_FALSE(
      may_write_twice("function (A[N]) -> (P) { P[2*j + r : 2*N] = =(A[j]), r < 2; }", "P"));
  // r < 3 lets two (j, r) pairs reach some outputs: 2*0 + 2 == 2*1 + 0.
  EXPECT_TRUE(
      may_write_twice("function (A[N]) -> (P) { P[2*j + r : 2*N] = =(A[j]), r < 3; }", "P"));
}

// A possibly twice-written contraction is not fused into its elementwise consumer (the host step
// computes only its own statement).
TEST(AssignOnce, HostAssignIsNotFused) {
  const char *text =
      "function (A[N]) -> (R) { B[0 : 1] = =(A[i]), i < 1; C[0 : 1] = =(A[i]); R = C + 1; }";
  auto bound = tile::bind(tile::parse_program(text), {{"A", f32({4})}});
  auto lowered = lower(bound, Target{});
  bool host_c = false, kernel_r = false;
  for (const auto &step : lowered.steps) {
    host_c |= step.kind == Step::Kind::Host && step.host_statement == "C";
    kernel_r |= step.kind == Step::Kind::Kernel && step.kernel.name == "R";
  }
  EXPECT_TRUE(host_c);
  EXPECT_TRUE(kernel_r);
}

}  // namespace
}  // namespace tessera::compiler
