// UnswitchGuards: an innermost loop whose updates carry guards that do not change in it splits
// into an unguarded copy under their conjunction and the original loop.
#include <functional>

#include <gtest/gtest.h>

#include "backends/clike/UnswitchGuards.h"
#include "compiler/IRPrinter.h"

namespace tessera::clike {
namespace {

using namespace compiler;
using Op = Binary::Op;

Expr i32(int64_t v) { return IntImm::make(Type::i32(), v); }
Expr var(const std::string &n) { return Var::make(Type::i32(), n); }
Expr f32_load(const std::string &buffer, Expr index) {
  return Load::make({tile::DType::Float32, 1}, buffer, std::move(index));
}

// for k in [0, extent) { if (guard(r)) acc[r] = acc[r] + A[k] } for r = 0, 1
Stmt guarded_loop(const std::function<Expr(int)> &guard, int64_t extent = 32) {
  std::vector<Stmt> updates;
  for (int r = 0; r < 2; ++r) {
    Stmt update = Store::make("acc", i32(r), Binary::make(Op::Add, f32_load("acc", i32(r)), f32_load("A", var("k"))));
    updates.push_back(IfThenElse::make(guard(r), update));
  }
  return For::make("k", i32(0), i32(extent), ForKind::Serial, Block::make(updates));
}

// x*13 + r < 37: a partial row tile's guard, the same in every iteration of k.
Expr row_guard(int r) {
  return Binary::make(Op::LT, Binary::make(Op::Add, Binary::make(Op::Mul, var("x"), i32(13)), i32(r)), i32(37));
}

TEST(UnswitchGuards, InvariantGuardsMoveOutOfTheLoop) {
  Stmt loop = guarded_loop(row_guard);
  Stmt out = unswitch_invariant_guards(loop);
  auto *split = as<IfThenElse>(out);
  ASSERT_TRUE(split);
  EXPECT_EQ(print_expr(split->cond), print_expr(Binary::make(Op::And, row_guard(0), row_guard(1))));
  EXPECT_EQ(split->else_case, loop);  // tiles that cross the extent keep their guards
  auto *fast = as<For>(split->then_case);
  ASSERT_TRUE(fast);
  auto *body = as<Block>(fast->body);
  ASSERT_TRUE(body);
  ASSERT_EQ(body->stmts.size(), 2u);
  for (const auto &s : body->stmts) EXPECT_TRUE(as<Store>(s));
}

TEST(UnswitchGuards, GuardsThatVaryShortLoopsAndLoadsStay) {
  auto on_k = [](int r) { return Binary::make(Op::LT, Binary::make(Op::Add, var("k"), i32(r)), i32(30)); };
  auto reads = [](int) {
    return Binary::make(Op::LT, f32_load("B", i32(0)), FloatImm::make({tile::DType::Float32, 1}, 1.0));
  };
  for (const Stmt &loop : {guarded_loop(on_k), guarded_loop(reads), guarded_loop(row_guard, 3)})
    EXPECT_EQ(unswitch_invariant_guards(loop), loop) << print_stmt(loop);
}

}  // namespace
}  // namespace tessera::clike
