// The C++ EDSL: programs it builds, their printed Tile, and running them on the interpreter.
#include <gtest/gtest.h>

#include "tessera/edsl.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace tessera {
namespace {

Tensor matmul(const Tensor &A, const Tensor &B) {
  TensorDim M, K, N;
  TensorIndex m("m"), k("k"), n("n");
  A.bind_dims(M, K);
  B.bind_dims(K, N);
  Tensor C = TensorOutput(M, N);
  C(m, n) += A(m, k) * B(k, n);
  return C;
}

HostTensor make(tile::DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t(tile::TensorType{dtype, std::move(shape)});
  for (size_t i = 0; i < values.size(); ++i) t.set_double(static_cast<int64_t>(i), values[i]);
  return t;
}

TEST(Edsl, MatmulPrintsAsTileAndParsesBack) {
  Tensor A = Placeholder(DType::Float32, {2, 3}, "A");
  Tensor B = Placeholder(DType::Float32, {3, 4}, "B");
  Function fn = build({{"C", matmul(A, B)}});
  EXPECT_EQ(fn.tile_text(), "function (A[2, 3], B[3, 4]) -> (C) {\n"
                            "  C[m, n : 2, 4] = +(A[m, k] * B[k, n]);\n"
                            "}\n");
  tile::Program parsed = tile::parse_program(fn.tile_text());
  EXPECT_TRUE(tile::structurally_equal(parsed, fn.program));
}

TEST(Edsl, RunsOnTheInterpreter) {
  Tensor A = Placeholder(DType::Float32, {2, 2}, "A");
  Tensor B = Placeholder(DType::Float32, {2, 2}, "B");
  Tensor C = matmul(A, B) * 2.0 + 1;
  EXPECT_EQ(C.dtype(), DType::Float32);  // literals are weakly typed
  auto exe = compile(build({{"C", C}}), "interp");
  TensorMap out = exe->run({{"A", make(DType::Float32, {2, 2}, {1, 2, 3, 4})},
                            {"B", make(DType::Float32, {2, 2}, {5, 6, 7, 8})}});
  const HostTensor &c = out.at("C");
  ASSERT_EQ(c.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(c.get_double(0), 2 * 19 + 1);
  EXPECT_EQ(c.get_double(1), 2 * 22 + 1);
  EXPECT_EQ(c.get_double(2), 2 * 43 + 1);
  EXPECT_EQ(c.get_double(3), 2 * 50 + 1);
}

TEST(Edsl, ConstraintsDefaultAndIndexArithmetic) {
  // A 1-D 'valid' convolution with a window of 2 and a max-pool-like reduction.
  Tensor I = Placeholder(DType::Float32, {5}, "I");
  TensorIndex x("x"), k("k");
  Tensor O = TensorOutput(4);
  O(x) >= I(x + k);
  O.add_constraint(k < 2);
  auto exe = compile(build({{"O", O}}), "interp");
  TensorMap out = exe->run({{"I", make(DType::Float32, {5}, {1, 5, 2, 4, 3})}});
  std::vector<double> got;
  for (int i = 0; i < 4; ++i) got.push_back(out.at("O").get_double(i));
  EXPECT_EQ(got, (std::vector<double>{5, 5, 4, 4}));
  EXPECT_NE(build({{"O", O}}).tile_text().find("O[x : 4] = >(I[x + k]), k < 2;"),
            std::string::npos);
}

TEST(Edsl, IndexNamesAreMadeUnique) {
  Tensor A = Placeholder(DType::Float32, {3, 3}, "A");
  TensorIndex i("i"), j("i");  // two indices with one name
  Tensor T = TensorOutput(3, 3);
  T(i, j) = A(j, i);
  EXPECT_NE(build({{"T", T}}).tile_text().find("T[i, j : 3, 3] = =(A[j, i]);"), std::string::npos);
}

TEST(Edsl, BadCallsThrowWithAReason) {
  Tensor A = Placeholder(DType::Float32, {2, 3}, "A");
  Tensor B = Placeholder(DType::Float32, {4, 5}, "B");
  EXPECT_THROW(matmul(A, B), EdslError);  // K bound to 3 and 4
  try {
    (void)(A + B);
    FAIL();
  } catch (const EdslError &e) {
    EXPECT_EQ(std::string(e.what()), "add: cannot broadcast float32[2, 3] with float32[4, 5]");
  }
  TensorIndex i;
  Tensor O = TensorOutput(2);
  EXPECT_THROW(O(i) += A(i), EdslError);  // rank 2 indexed with one index
  EXPECT_THROW((void)(TensorIndex() * TensorIndex()), EdslError);
  EXPECT_THROW(Placeholder(DType::Float32, {-1}), EdslError);
}

TEST(Edsl, OutputThatIsAnInputIsCopied) {
  Tensor A = Placeholder(DType::Int32, {2}, "A");
  Function fn = build({{"Y", A}});
  EXPECT_EQ(fn.tile_text(), "function (A[2]) -> (Y) {\n  Y = ident(A);\n}\n");
}

}  // namespace
}  // namespace tessera
