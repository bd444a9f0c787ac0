// NarrowIndices: which int64 index arithmetic becomes int32 (only what provably fits), int64 data
// kept, and the narrowed kernels of lowered programs still computing what the interpreter does.
#include <gtest/gtest.h>

#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/Lower.h"
#include "compiler/NarrowIndices.h"
#include "tests/unit/compiler/MatchInterp.h"
#include "tile/Parser.h"

namespace tessera::compiler {
namespace {

using tile::DType;

Expr i64(int64_t v) { return IntImm::make(Type::i64(), v); }
Expr var64(const std::string &n) { return Var::make(Type::i64(), n); }
Expr add(Expr a, Expr b) { return Binary::make(Binary::Op::Add, std::move(a), std::move(b)); }
Expr mul(Expr a, Expr b) { return Binary::make(Binary::Op::Mul, std::move(a), std::move(b)); }

// The dtype of every Load index and of each For's bounds, in visiting order.
class IndexTypes : public IRVisitor {
 public:
  std::vector<DType> loads, stores, fors;
  using IRVisitor::visit;
  void visit(const Load *op) override {
    loads.push_back(op->index->type.dtype);
    IRVisitor::visit(op);
  }
  void visit(const Store *op) override {
    stores.push_back(op->index->type.dtype);
    IRVisitor::visit(op);
  }
  void visit(const For *op) override {
    fors.push_back(op->min->type.dtype);
    IRVisitor::visit(op);
  }
};

Kernel kernel_of(Stmt body, int64_t elements, DType data = DType::Float32) {
  return Kernel{"k", {{"A", data, elements, false}, {"C", data, elements, true}}, std::move(body)};
}

TEST(NarrowIndices, SmallLoopsAndIndicesBecomeInt32) {
  // for i in [0, 100): for j in [0, 50): C[i * 50 + j] = A[i * 50 + j]
  Expr idx = add(mul(var64("i"), i64(50)), var64("j"));
  Stmt body =
      For::make("i", i64(0), i64(100), ForKind::Serial,
                For::make("j", i64(0), i64(50), ForKind::Serial,
                          Store::make("C", idx, Load::make({DType::Float32, 1}, "A", idx))));
  Kernel k = narrow_indices(kernel_of(body, 5000));
  IndexTypes t;
  t.visit_stmt(k.body);
  EXPECT_EQ(t.fors, (std::vector<DType>{DType::Int32, DType::Int32}));
  EXPECT_EQ(t.loads, std::vector<DType>{DType::Int32});
  EXPECT_EQ(t.stores, std::vector<DType>{DType::Int32});
}

TEST(NarrowIndices, IndicesThatMayExceedInt32StayInt64) {
  // i < 100000, j < 100000: i * 100000 + j reaches 10^10 (the loops fit, the index does not).
  Expr idx = add(mul(var64("i"), i64(100000)), var64("j"));
  Stmt body =
      For::make("i", i64(0), i64(100000), ForKind::Serial,
                For::make("j", i64(0), i64(100000), ForKind::Serial,
                          Store::make("C", idx, Load::make({DType::Float32, 1}, "A", idx))));
  Kernel k = narrow_indices(kernel_of(body, 10000000000));
  IndexTypes t;
  t.visit_stmt(k.body);
  EXPECT_EQ(t.loads, std::vector<DType>{DType::Int64});
  EXPECT_EQ(t.stores, std::vector<DType>{DType::Int64});
  // A loop whose end (min + extent) passes 2^31 - 1 keeps a 64-bit variable.
  Stmt big = For::make("i", i64(2147483000), i64(1000), ForKind::Serial,
                       Store::make("C", i64(0), Cast::make({DType::Float32, 1}, var64("i"))));
  IndexTypes b;
  b.visit_stmt(narrow_indices(kernel_of(big, 1)).body);
  EXPECT_EQ(b.fors, std::vector<DType>{DType::Int64});
}

TEST(NarrowIndices, Int64DataStaysInt64AndIndexValuesKeepTheirMeaning) {
  // C[i] = A[i] + i over int64 data: the load and the sum stay int64; i is widened back.
  Expr i = var64("i");
  Stmt body = For::make("i", i64(0), i64(8), ForKind::Serial,
                        Store::make("C", i, add(Load::make(Type::i64(), "A", i), i)));
  Kernel k = narrow_indices(kernel_of(body, 8, DType::Int64));
  std::string text = print_stmt(k.body);
  auto *f = as<For>(k.body);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->min->type.dtype, DType::Int32);
  auto *st = as<Store>(f->body);
  ASSERT_TRUE(st) << text;
  EXPECT_EQ(st->index->type.dtype, DType::Int32) << text;
  EXPECT_EQ(st->value->type.dtype, DType::Int64) << text;
  auto *sum = as<Binary>(st->value);
  ASSERT_TRUE(sum) << text;
  auto *load = as<Load>(sum->a);
  ASSERT_TRUE(load) << text;
  EXPECT_EQ(load->type.dtype, DType::Int64);
  auto *widened = as<Cast>(sum->b);
  ASSERT_TRUE(widened) << text;
  EXPECT_EQ(widened->value->type.dtype, DType::Int32) << text;

  test::LoopEval eval;
  eval.buffers["A"] = {10, 20, 30, 40, 50, 60, 70, 80};
  eval.buffers["C"].assign(8, 0);
  eval.run(k.body);
  EXPECT_EQ(eval.buffers["C"], (std::vector<double>{10, 21, 32, 43, 54, 65, 76, 87}));
}

TEST(NarrowIndices, IndexLoadedFromDataIsNotTrusted) {
  // C[B[i] * 4] with B int32 data: B[i] could be anything, so B[i] * 4 may overflow int32.
  Kernel k{"k",
           {{"A", DType::Float32, 64, false},
            {"B", DType::Int32, 4, false},
            {"C", DType::Float32, 64, true}},
           nullptr};
  Expr idx = mul(Cast::make(Type::i64(), Load::make(Type::i32(), "B", var64("i"))), i64(4));
  k.body = For::make("i", i64(0), i64(4), ForKind::Serial,
                     Store::make("C", idx, Load::make({DType::Float32, 1}, "A", idx)));
  IndexTypes t;
  t.visit_stmt(narrow_indices(k).body);
  EXPECT_EQ(t.stores, std::vector<DType>{DType::Int64});
  // B[i] in the store's index, then A[...] and the B[i] inside it.
  EXPECT_EQ(t.loads, (std::vector<DType>{DType::Int32, DType::Int64, DType::Int32}));
}

// Lowered programs (GPU schedules, guards, floor division in convolution borders) still match the
// interpreter after narrowing.
TEST(NarrowIndices, LoweredKernelsStillMatchTheInterpreter) {
  Target gpu;
  gpu.backend = "vulkan";
  gpu.cores = 2;
  gpu.vector_bits = 32;
  gpu.local_memory_bytes = 32 << 10;
  gpu.max_workgroup_size = 1024;
  struct Case {
    const char *text;
    std::map<std::string, tile::TensorType> types;
  } cases[] = {
      {"function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }",
       {{"A", {DType::Float32, {19, 7}}}, {"B", {DType::Float32, {7, 13}}}}},
      {"function (I[N, X, CI], K[KX, CI, CO]) -> (O) { O[n, x, co : N, X, CO] = +(I[n, x + kx - 1, "
       "ci] * K[kx, ci, co]); }",
       {{"I", {DType::Float32, {2, 9, 3}}}, {"K", {DType::Float32, {3, 3, 5}}}}},
      {"function (A[N]) -> (B) { B[i / 3 : (N + 2) / 3] = >(A[i]); }",
       {{"A", {DType::Float32, {20}}}}},
  };
  for (const auto &c : cases) {
    auto bound = tile::bind(tile::parse_program(c.text), c.types);
    for (const Target &t : {gpu, Target{}}) {
      LoweredProgram lowered = lower(bound, t);
      for (auto &step : lowered.steps)
        if (step.kind == Step::Kind::Kernel) step.kernel = narrow_indices(step.kernel);
      test::expect_lowered_matches_interp(bound, lowered, 3, 1e-4, c.text);
    }
  }
}

}  // namespace
}  // namespace tessera::compiler
