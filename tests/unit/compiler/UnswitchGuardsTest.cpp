// UnswitchGuards: an innermost loop whose updates carry guards that do not change in it splits
// into an unguarded copy under their conjunction and the original loop; across nests, a nest of
// short loops whose guards are affine in its variables splits under the guards at their tightest
// corner.
#include <functional>

#include <gtest/gtest.h>

#include "compiler/IRBuild.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/UnswitchGuards.h"
#include "tests/unit/compiler/LoopEval.h"

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

// for k in [0, 3) { for l in [0, taps) { if (0 <= 2*x + r + l - 1 < 12) acc[r] += A[k*3 + l] } }
// for rows r = 0, 1: a padded convolution's taps along a row tile, with `guard` in place of the
// padding's where given.
Stmt guarded_nest(int64_t taps, const std::function<Expr(int)> &guard = nullptr) {
  std::vector<Stmt> updates;
  for (int r = 0; r < 2; ++r) {
    Expr at = bin(Op::Add, bin(Op::Add, bin(Op::Mul, var("x"), imm(2)), imm(r - 1)), var("l"));
    Expr inside = guard ? guard(r)
                        : bin(Op::And, bin(Op::GE, at, imm(0)),
                              bin(Op::GE, bin(Op::Sub, imm(11), at), imm(0)));
    Expr a = f32_load("A", bin(Op::Add, bin(Op::Mul, var("k"), imm(3)), var("l")));
    updates.push_back(IfThenElse::make(
        inside, Store::make("acc", imm(r), bin(Op::Add, f32_load("acc", imm(r)), a))));
  }
  return For::make("k", imm(0), imm(3), ForKind::Serial,
                   For::make("l", imm(0), imm(taps), ForKind::Serial, Block::make(updates)));
}

bool has_guard(const Stmt &s) {
  class Guards : public IRVisitor {
   public:
    bool found = false;
    using IRVisitor::visit;
    void visit(const IfThenElse *) override { found = true; }
  } guards;
  guards.visit_stmt(s);
  return guards.found;
}

TEST(UnswitchGuards, AffineGuardsOfANestOfShortLoopsMoveOutOfTheNest) {
  Stmt nest = guarded_nest(3);
  EXPECT_EQ(unswitch_invariant_guards(nest), nest);  // only across nests
  Stmt out = unswitch_invariant_guards(nest, /*across_nests=*/true);
  auto *split = as<IfThenElse>(out);
  ASSERT_TRUE(split) << print_stmt(out);
  EXPECT_EQ(split->else_case, nest);
  EXPECT_FALSE(has_guard(split->then_case)) << print_stmt(out);
  // The condition holds for exactly the x whose every tap of both rows lies inside [0, 12).
  for (int64_t x = -1; x <= 7; ++x) {
    test::LoopEval eval;
    eval.vars["x"] = x;
    bool inside = true;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t l = 0; l < 3; ++l) inside &= 2 * x + r - 1 + l >= 0 && 2 * x + r - 1 + l < 12;
    EXPECT_EQ(eval.eval(split->cond)[0] != 0, inside) << "x = " << x;
  }
}

TEST(UnswitchGuards, NestsOfALongInnerLoopOrOfGuardsNotAffineOrReadingStayAsTheyWere) {
  // A long innermost loop gets the split of its own (its guards do not change in it).
  Stmt long_nest = guarded_nest(32, row_guard);
  Stmt out = unswitch_invariant_guards(long_nest, true);
  auto *outer = as<For>(out);
  ASSERT_TRUE(outer) << print_stmt(out);
  EXPECT_TRUE(as<IfThenElse>(outer->body)) << print_stmt(out);
  auto squared = [](int r) {
    return bin(Op::LT, bin(Op::Add, bin(Op::Mul, var("l"), var("l")), imm(r)), imm(5));
  };
  Stmt not_affine = guarded_nest(3, squared);
  EXPECT_EQ(unswitch_invariant_guards(not_affine, true), not_affine);
  auto reads = [](int) {  // the nest might write what the guard reads
    return bin(Op::LT, f32_load("B", imm(0)), FloatImm::make({tile::DType::Float32, 1}, 1.0));
  };
  Stmt reading = guarded_nest(3, reads);
  EXPECT_EQ(unswitch_invariant_guards(reading, true), reading);
}

}  // namespace
}  // namespace tessera::compiler
