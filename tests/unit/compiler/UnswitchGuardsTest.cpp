// UnswitchGuards: an innermost loop whose updates carry guards that do not change in it splits
// into an unguarded copy under their conjunction and the original loop.
#include <functional>

#include <gtest/gtest.h>

#include "compiler/IRBuild.h"
#include "compiler/IRPrinter.h"
#include "compiler/UnswitchGuards.h"

namespace tessera::compiler {
namespace {

using namespace ir_build;

Expr f32_load(const std::string &buffer, Expr index) {
  return Load::make({tile::DType::Float32, 1}, buffer, std::move(index));
}

// for k in [0, extent) { if (guard(r)) acc[r] = acc[r] + A[k] } for r = 0, 1
Stmt guarded_loop(const std::function<Expr(int)> &guard, int64_t extent = 32) {
  std::vector<Stmt> updates;
  for (int r = 0; r < 2; ++r) {
    Stmt update =
        Store::make("acc", imm(r), bin(Op::Add, f32_load("acc", imm(r)), f32_load("A", var("k"))));
    updates.push_back(IfThenElse::make(guard(r), update));
  }
  return For::make("k", imm(0), imm(extent), ForKind::Serial, Block::make(updates));
}

// x*13 + r < 37: a partial row tile's guard, the same in every iteration of k.
Expr row_guard(int r) {
  return bin(Op::LT, bin(Op::Add, bin(Op::Mul, var("x"), imm(13)), imm(r)), imm(37));
}

TEST(UnswitchGuards, InvariantGuardsMoveOutOfTheLoop) {
  Stmt loop = guarded_loop(row_guard);
  Stmt out = unswitch_invariant_guards(loop);
  auto *split = as<IfThenElse>(out);
  ASSERT_TRUE(split);
  EXPECT_EQ(print_expr(split->cond), print_expr(bin(Op::And, row_guard(0), row_guard(1))));
  EXPECT_EQ(split->else_case, loop);  // tiles that cross the extent keep their guards
  auto *fast = as<For>(split->then_case);
  ASSERT_TRUE(fast);
  auto *body = as<Block>(fast->body);
  ASSERT_TRUE(body);
  ASSERT_EQ(body->stmts.size(), 2u);
  for (const auto &s : body->stmts) EXPECT_TRUE(as<Store>(s));
}

TEST(UnswitchGuards, GuardsThatVaryShortLoopsAndLoadsStay) {
  auto on_k = [](int r) { return bin(Op::LT, bin(Op::Add, var("k"), imm(r)), imm(30)); };
  auto reads = [](int) {
    return bin(Op::LT, f32_load("B", imm(0)), FloatImm::make({tile::DType::Float32, 1}, 1.0));
  };
  for (const Stmt &loop : {guarded_loop(on_k), guarded_loop(reads), guarded_loop(row_guard, 3)})
    EXPECT_EQ(unswitch_invariant_guards(loop), loop) << print_stmt(loop);
}

}  // namespace
}  // namespace tessera::compiler
