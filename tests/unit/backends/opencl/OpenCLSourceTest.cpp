// The OpenCL C printer on hand-built loop IR: golden strings for the NDRange mapping, native
// vectors (vload/vstore), lane-by-lane fallbacks and Tile's integer division.
#include <gtest/gtest.h>

#include "backends/opencl/OpenCLSource.h"

namespace tessera::opencl {
namespace {

using namespace compiler;
using tile::DType;

Expr i32(int64_t v) { return IntImm::make(Type::i32(), v); }
Expr var(const char *n) { return Var::make(Type::i32(), n); }

TEST(OpenCLSource, ParallelLoopIsTheNDRangeAndRampsAreVectorLoads) {
  Expr idx = Ramp::make(Binary::make(Binary::Op::Mul, var("i"), i32(4)), i32(1), 4);
  Stmt body = Store::make("C", idx,
                          Binary::make(Binary::Op::Add, Load::make({DType::Float32, 1}, "A", idx),
                                       Broadcast::make(FloatImm::make({DType::Float32, 1}, 0.5), 4)));
  Kernel k{"add", {{"A", DType::Float32, 32, false}, {"C", DType::Float32, 32, true}},
           For::make("i", i32(0), i32(8), ForKind::Parallel, body)};
  KernelSource s = kernel_source(k);
  EXPECT_EQ(s.global_size, 8);
  EXPECT_FALSE(s.uses_fp64);
  EXPECT_EQ(s.source,
            "__kernel void tk_add(__global const float *restrict A, __global float *restrict C) {\n"
            "  const int i = (int)get_global_id(0);\n"
            "  vstore4((vload4(0, A + (i * 4)) + ((float4)(0.5f))), 0, C + (i * 4));\n"
            "}\n");
}

TEST(OpenCLSource, IntegerDivisionFloorsAndNeverTraps) {
  Stmt body = For::make("j", i32(0), i32(3), ForKind::Serial,
                        Store::make("O", var("j"), Binary::make(Binary::Op::Div, Load::make(Type::i32(), "X", var("j")), i32(-2))));
  Kernel k{"div", {{"X", DType::Int32, 3, false}, {"O", DType::Int32, 3, true}}, body};
  KernelSource s = kernel_source(k);
  EXPECT_EQ(s.global_size, 1);
  EXPECT_EQ(s.source,
            "static inline int tsr_floordiv_int(int a, int b) {\n"
            "  if (b == 0) return 0;\n"
            "  if (b == -1) return (int)((uint)0 - (uint)a);\n"
            "  int q = a / b, r = a % b;\n"
            "  if (r != 0 && ((r ^ b) < 0)) { q -= 1; r += b; }\n"
            "  return q;\n"
            "}\n"
            "__kernel void tk_div(__global const int *restrict X, __global int *restrict O) {\n"
            "  for (int j = 0; j < 3; ++j) {\n"
            "    O[j] = tsr_floordiv_int(X[j], (-2));\n"
            "  }\n"
            "}\n");
}

TEST(OpenCLSource, HalfIsStoredWithVstoreHalfAndDoubleEnablesFp64) {
  Stmt body = Store::make("O", i32(0), Cast::make({DType::Float16, 1}, Load::make({DType::Float64, 1}, "X", i32(0))));
  Kernel k{"h", {{"X", DType::Float64, 1, false}, {"O", DType::Float16, 1, true}}, body};
  KernelSource s = kernel_source(k);
  EXPECT_TRUE(s.uses_fp64);
  EXPECT_NE(s.source.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"), std::string::npos) << s.source;
  EXPECT_NE(s.source.find("vstore_half_rte(tsr_to_half_float((float)(X[0])), 0, O);"), std::string::npos) << s.source;
}

}  // namespace
}  // namespace tessera::opencl
