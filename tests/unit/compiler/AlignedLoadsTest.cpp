// AlignedLoads: which indices split into an aligned group of four and a component, and which
// innermost loops unroll by 4 to align their loads (register updates by 8 where the extent allows,
// interleaved per accumulator).
#include <gtest/gtest.h>

#include "compiler/AlignedLoads.h"
#include "compiler/IRPrinter.h"

namespace tessera::compiler {
namespace {

using Op = Binary::Op;

Expr i32(int64_t v) { return IntImm::make(Type::i32(), v); }
Expr var(const std::string &n) { return Var::make(Type::i32(), n); }
Expr add(Expr a, Expr b) { return Binary::make(Op::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return Binary::make(Op::Mul, std::move(a), std::move(b)); }
Expr load(const std::string &buffer, Expr index) {
  return Load::make({tile::DType::Float32, 1}, buffer, std::move(index));
}

TEST(AlignedLoads, IndexSplitsIntoGroupAndComponent) {
  // (x*8 + 1)*1024 + (k*4 + c): the four components share one printed group.
  std::string first;
  for (int c = 0; c < 4; ++c) {
    auto a = aligned_index(add(mul(add(mul(var("x"), i32(8)), i32(1)), i32(1024)),
                               add(mul(var("k"), i32(4)), i32(c))));
    ASSERT_TRUE(a);
    EXPECT_EQ(a->component, c);
    if (c == 0) first = print_expr(a->first);
    EXPECT_EQ(print_expr(a->first), first);
  }
  auto six = aligned_index(add(mul(var("k"), i32(4)), i32(6)));  // 4k + 6 = (4k + 4) + 2
  ASSERT_TRUE(six);
  EXPECT_EQ(six->component, 2);
  EXPECT_EQ(print_expr(six->first), print_expr(add(mul(var("k"), i32(4)), i32(4))));
}

TEST(AlignedLoads, UnknownResidueIsNotAligned) {
  EXPECT_FALSE(aligned_index(add(var("x"), i32(1))));
  EXPECT_FALSE(aligned_index(mul(var("x"), i32(6))));
}

// acc[0..1] += A[8x + k] * B[k*16 + j], k < extent: k unrolled by 4 aligns the A loads.
Stmt update_loop(Expr a_index, int64_t extent = 8) {
  std::vector<Stmt> updates;
  for (int r = 0; r < 2; ++r) {
    Expr acc = load("acc", i32(r));
    Expr b = load("B", add(mul(var("k"), i32(16)), i32(r)));
    updates.push_back(Store::make("acc", i32(r), add(acc, mul(load("A", a_index), b))));
  }
  return For::make("k", i32(0), i32(extent), ForKind::Serial, Block::make(updates));
}

// The unrolled loop's variable, trip count, and the accumulator each statement of its body stores.
void expect_unrolled(const Stmt &s, const std::string &var, int64_t trips,
                     const std::vector<int64_t> &stores) {
  auto *f = as<For>(s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->var, var);
  EXPECT_EQ(as<IntImm>(f->extent)->value, trips);
  auto *body = as<Block>(f->body);
  ASSERT_TRUE(body);
  ASSERT_EQ(body->stmts.size(), stores.size());
  for (size_t i = 0; i < stores.size(); ++i)
    EXPECT_EQ(as<IntImm>(as<Store>(body->stmts[i])->index)->value, stores[i]) << i;
}

TEST(AlignedLoads, UnrollsByFourWhereThatAlignsLoads) {
  auto grouped = [](const std::string &b) { return b == "A" || b == "B"; };
  // Twelve steps: by 4, each accumulator taking its four updates in a row.
  expect_unrolled(
      unroll_for_aligned_loads(update_loop(add(mul(var("x"), i32(8)), var("k")), 12), grouped),
      "k#4", 3, {0, 0, 0, 0, 1, 1, 1, 1});
}

TEST(AlignedLoads, RegisterUpdatesUnrollByEightWhereTheExtentAllows) {
  auto grouped = [](const std::string &b) { return b == "A" || b == "B"; };
  expect_unrolled(
      unroll_for_aligned_loads(update_loop(add(mul(var("x"), i32(8)), var("k")), 16), grouped),
      "k#8", 2, {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1});
}

// A loop shorter than a group (an image's 3 colour channels in rows widened to 4) unrolls whole:
// A[8x + k] for k < 3 then reads components 0 to 2 of one group.
TEST(AlignedLoads, ShortLoopsUnrollWholeWhereThatAlignsLoads) {
  auto grouped = [](const std::string &b) { return b == "A" || b == "B"; };
  Stmt three = update_loop(add(mul(var("x"), i32(8)), var("k")), 3);
  Stmt unrolled = unroll_for_aligned_loads(three, grouped);
  auto *block = as<Block>(unrolled);
  ASSERT_TRUE(block);
  ASSERT_EQ(block->stmts.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    auto *st = as<Store>(block->stmts[i]);
    ASSERT_TRUE(st);
    EXPECT_EQ(as<IntImm>(st->index)->value, static_cast<int64_t>(i / 3)) << i;
  }
  Stmt two = update_loop(add(mul(var("x"), i32(7)), var("k")), 2);  // nothing aligns
  EXPECT_EQ(unroll_for_aligned_loads(two, grouped), two);
}

TEST(AlignedLoads, LoopIsKeptWhereNothingMoreAligns) {
  auto grouped = [](const std::string &b) { return b == "A" || b == "B"; };
  Stmt odd = update_loop(add(mul(var("x"), i32(7)), var("k")));  // A[7x + k]: no residue known
  EXPECT_EQ(unroll_for_aligned_loads(odd, grouped), odd);
  Stmt other = update_loop(add(mul(var("x"), i32(8)), var("k")));
  EXPECT_EQ(unroll_for_aligned_loads(other, [](const std::string &) { return false; }), other);
}

}  // namespace
}  // namespace tessera::compiler
