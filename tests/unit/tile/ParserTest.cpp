// Parses every Tile program the project keeps (DESIGN.md's examples, tests/programs, PlaidML's own
// corpus) and checks that printing and parsing again gives the same program.
#include <gtest/gtest.h>

#include <filesystem>

#include "tile/Diagnostics.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace tessera::tile {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> tile_files(const fs::path &dir) {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".tile") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void expect_round_trip(const Program &p) {
  std::string text = print_program(p);
  Program q = parse_program(text, "printed");
  EXPECT_TRUE(structurally_equal(p, q)) << text;
  EXPECT_EQ(print_program(q), text) << "printing is not a fixed point";
}

TEST(Parser, DesignExample) {
  Program p = parse_program(R"(function (I[N, H, W, CI], K[KH, KW, CI, CO]) -> (O) {
  // 'same' padding, stride 1: out-of-range taps are simply not valid index points
  O[n, x, y, co : N, H, W, CO] = +(I[n, x + kx - (KH - 1) / 2, y + ky - (KW - 1) / 2, ci] * K[kx, ky, ci, co]);
})");
  ASSERT_EQ(p.inputs.size(), 2u);
  EXPECT_EQ(p.inputs[1].dims[3].name, "CO");
  ASSERT_EQ(p.statements.size(), 1u);
  const Contraction &c = p.statements[0].contraction();
  EXPECT_EQ(c.agg, AggOp::Sum);
  EXPECT_EQ(c.comb, CombOp::Mul);
  EXPECT_EQ(print_poly(c.inputs[0].indices[1]), "x + kx - (KH - 1)/2");
  EXPECT_EQ(print_expr(c.sizes[3]), "CO");
  expect_round_trip(p);
}

TEST(Parser, PrecedenceFollowsPlaidML) {
  // `^` binds looser than `|` and `&` in PlaidML's grammar; `?:` is loosest.
  Program p =
      parse_program("function (A[N], B[N]) -> (C) { C = A < B ? A + B * 2 : A ^ B | A & B << 1; }");
  EXPECT_EQ(
      print_expr(p.statements[0].expr()),
      "cond(cmp_lt(A, B), add(A, mul(B, 2)), bit_xor(A, bit_or(B, bit_and(A, bit_left(B, 1)))))");
}

TEST(Parser, NegativeLiteralsFold) {
  Program p = parse_program("function (A[N]) -> (C) { X = -0.25; C[i : N] = +(A[-1 + i]); }");
  EXPECT_EQ(p.statements[0].expr()->kind, Expr::Kind::Float);
  EXPECT_EQ(p.statements[0].expr()->float_value, -0.25);
  EXPECT_EQ(p.statements[1].contraction().inputs[0].indices[0]->lhs->value, -1);
  expect_round_trip(p);
}

TEST(Parser, JuxtaposedCoefficientAndRationalIndex) {
  Program p = parse_program("function (A[N]) -> (C) { C[i : 2*N] = =(A[i/2 + 2j]), j < 1; }");
  EXPECT_EQ(print_poly(p.statements[0].contraction().inputs[0].indices[0]), "i/2 + 2*j");
  expect_round_trip(p);
}

TEST(Parser, EscapesKeywordsAttributesAndComments) {
  Program p = parse_program(R"(// leading comment
function (#lower[N], B[]) -> (#out) {
  [[pid(conv1, x_2)]] [[hint]] #out[$I, i : $N, 1] = >(#lower[$I] == #lower[$I] ? #lower[i]) default B no_defract; // trailing
})",
                            "escapes.tile");
  EXPECT_EQ(p.inputs[0].name, "lower");
  EXPECT_EQ(p.outputs[0].name, "out");
  const Statement &s = p.statements[0];
  ASSERT_EQ(s.attributes.size(), 2u);
  EXPECT_EQ(s.attributes[0].params, (std::vector<std::string>{"conv1", "x_2"}));
  EXPECT_EQ(s.contraction().comb, CombOp::Cond);
  EXPECT_TRUE(s.contraction().no_defract);
  EXPECT_EQ(s.contraction().output.indices[0]->kind, Poly::Kind::Index);
  expect_round_trip(p);
}

TEST(Parser, NestedSpecialsAreHoisted) {
  Program p = parse_program("function (A[N]) -> (C) { C = reshape(A * 2, N) + shape(A); }");
  ASSERT_EQ(p.statements.size(), 4u);
  EXPECT_EQ(print_expr(p.statements[0].expr()), "mul(A, 2)");
  EXPECT_EQ(print_expr(p.statements[1].expr()), "reshape(C_1, N)");
  EXPECT_EQ(print_expr(p.statements[2].expr()), "shape(A)");
  EXPECT_EQ(print_expr(p.statements[3].expr()), "add(C_2, C_3)");
  expect_round_trip(p);
  // A name may end in a prime, but nothing may follow it.
  Program q = parse_program(
      "function (A[N]) -> (C') { C' = 2 * shape(A) + builtin_softmax(A * 2, 1, N); }");
  EXPECT_EQ(q.statements[0].output, "C_1");
  expect_round_trip(q);
}

TEST(Parser, BuiltinCallsAreStatementsOfTheirOwn) {
  // As PlaidML's Keras backend writes them; nested calls and expression arguments are hoisted.
  Program p = parse_program(R"(function (X[N, C], T[N, C], S[]) -> (A, B, L, R) {
  A = builtin_softmax(X, N, C);
  B = 2 * builtin_logsoftmax(X * 3, N, C);
  L = builtin_binary_crossentropy(A, T, N * C);
  R = reverse_grad(X, S);
})");
  ASSERT_EQ(p.statements.size(), 6u);
  const BuiltinCall &a = p.statements[0].builtin();
  EXPECT_EQ(a.fn, Builtin::Softmax);
  ASSERT_EQ(a.args.size(), 3u);
  EXPECT_EQ(print_expr(a.args[0]), "X");
  EXPECT_EQ(print_expr(p.statements[1].expr()), "mul(X, 3)");
  EXPECT_EQ(p.statements[2].output, "B_2");
  EXPECT_EQ(print_expr(p.statements[2].builtin().args[0]), "B_1");
  EXPECT_EQ(print_expr(p.statements[3].expr()), "mul(2, B_2)");
  EXPECT_EQ(print_expr(p.statements[4].builtin().args[2]), "mul(N, C)");
  EXPECT_EQ(p.statements[5].builtin().fn, Builtin::ReverseGrad);
  EXPECT_NE(print_program(p).find("  B_2 = builtin_logsoftmax(B_1, N, C);\n"), std::string::npos);
  expect_round_trip(p);
}

TEST(Parser, EveryProgramOfTheTestSuiteRoundTrips) {
  auto files = tile_files(fs::path(TESSERA_SOURCE_DIR) / "tests" / "programs");
  EXPECT_GE(files.size(), 40u);
  for (const auto &f : files) {
    SCOPED_TRACE(f.string());
    Program p;
    ASSERT_NO_THROW(p = parse_program(read_source_file(f.string())));
    expect_round_trip(p);
  }
}

TEST(Parser, PlaidMLCorpusRoundTrips) {
  auto files = tile_files(fs::path(TESSERA_SHARED_DIR) / "corpus" / "plaidml");
  ASSERT_EQ(files.size(), 3u);
  for (const auto &f : files) {
    SCOPED_TRACE(f.string());
    Program p = parse_program(read_source_file(f.string()));
    expect_round_trip(p);
    if (f.stem() == "xception") {
      EXPECT_EQ(p.inputs.size(), 240u);
      EXPECT_EQ(p.statements.size(), 499u);
      EXPECT_TRUE(p.find_statement("X_T97")->contraction().no_defract);
    }
  }
}

}  // namespace
}  // namespace tessera::tile
