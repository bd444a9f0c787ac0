// The OpenCL C printer on hand-built loop IR: golden strings for the NDRange mapping, native
// vectors (vload, stores through pointers aligned like an element), lane-by-lane fallbacks and
// Tile's integer division.
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
  Stmt body =
      Store::make("C", idx,
                  Binary::make(Binary::Op::Add, Load::make({DType::Float32, 1}, "A", idx),
                               Broadcast::make(FloatImm::make({DType::Float32, 1}, 0.5), 4)));
  Kernel k{"add",
           {{"A", DType::Float32, 32, false}, {"C", DType::Float32, 32, true}},
           For::make("i", i32(0), i32(8), ForKind::Parallel, body)};
  KernelSource s = kernel_source(k);
  EXPECT_TRUE(s.launch.driver_local);
  EXPECT_EQ(s.launch.global()[0], 8);
  EXPECT_FALSE(s.uses_fp64);
  EXPECT_EQ(
      s.source,
      "typedef float4 __attribute__((aligned(4), may_alias)) tsr_float4_u;\n"
      "__kernel void tk_add(__global const float *restrict A, __global float *restrict C) {\n"
      "  const int i = ((int)get_global_id(0));\n"
      "  *(__global tsr_float4_u *)(C + (i * 4)) = (vload4(0, A + (i * 4)) + ((float4)(0.5f)));\n"
      "}\n");
}

TEST(OpenCLSource, IntegerDivisionFloorsAndNeverTraps) {
  Stmt body = For::make(
      "j", i32(0), i32(3), ForKind::Serial,
      Store::make("O", var("j"),
                  Binary::make(Binary::Op::Div, Load::make(Type::i32(), "X", var("j")), i32(-2))));
  Kernel k{"div", {{"X", DType::Int32, 3, false}, {"O", DType::Int32, 3, true}}, body};
  KernelSource s = kernel_source(k);
  EXPECT_EQ(s.launch.dims, 0);
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
  Stmt body = Store::make(
      "O", i32(0), Cast::make({DType::Float16, 1}, Load::make({DType::Float64, 1}, "X", i32(0))));
  Kernel k{"h", {{"X", DType::Float64, 1, false}, {"O", DType::Float16, 1, true}}, body};
  KernelSource s = kernel_source(k);
  EXPECT_TRUE(s.uses_fp64);
  EXPECT_NE(s.source.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"), std::string::npos)
      << s.source;
  EXPECT_NE(s.source.find("vstore_half_rte(tsr_to_half_float((float)(X[0])), 0, O);"),
            std::string::npos)
      << s.source;
}

// A local array of half holds floats (OpenCL computes half in float): stores into it need no
// (half) cast, which NVIDIA's compiler rejects without cl_khr_fp16.
TEST(OpenCLSource, HalfInALocalArrayIsStoredAsFloat) {
  Type half{DType::Float16, 1};
  Stmt body =
      Allocate::make("T", half, 4, true,
                     Block::make({Store::make("T", var("i"), Load::make(half, "X", var("i"))),
                                  Store::make("O", var("i"), Load::make(half, "T", var("i")))}));
  Kernel k{"h",
           {{"X", DType::Float16, 4, false}, {"O", DType::Float16, 4, true}},
           For::make("i", i32(0), i32(4), ForKind::Serial, body)};
  std::string src = kernel_source(k).source;
  EXPECT_NE(src.find("__local float T[4];"), std::string::npos) << src;
  EXPECT_NE(src.find("T[i] = vload_half(i, X);"), std::string::npos) << src;
  EXPECT_EQ(src.find("(half)"), std::string::npos) << src;
}

// cl_khr_fp64 follows the kernel's types, not its text: a loop variable may be called `doubled`,
// and a float32 kernel may compute in float64.
TEST(OpenCLSource, Fp64FollowsTheTypesNotTheText) {
  Stmt copy = For::make(
      "doubled", i32(0), i32(2), ForKind::Serial,
      Store::make("O", var("doubled"), Load::make({DType::Float32, 1}, "X", var("doubled"))));
  EXPECT_FALSE(
      kernel_source(
          Kernel{"copy", {{"X", DType::Float32, 2, false}, {"O", DType::Float32, 2, true}}, copy})
          .uses_fp64);
  Expr wide = Cast::make({DType::Float64, 1}, Load::make({DType::Float32, 1}, "X", i32(0)));
  Stmt square = Store::make(
      "O", i32(0), Cast::make({DType::Float32, 1}, Binary::make(Binary::Op::Mul, wide, wide)));
  KernelSource s = kernel_source(
      Kernel{"sq", {{"X", DType::Float32, 1, false}, {"O", DType::Float32, 1, true}}, square});
  EXPECT_TRUE(s.uses_fp64);
  EXPECT_EQ(s.source.rfind("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", 0), 0u) << s.source;
}

// Work-group and work-item loops become ids and a fixed work-group size; a private array read and
// written only at constant indices becomes vector variables; a * b + c is a fused multiply-add.
TEST(OpenCLSource, GpuLoopsAreIdsAndConstantIndexArraysAreRegisters) {
  Type f4{DType::Float32, 4}, f{DType::Float32, 1};
  Expr x = Binary::make(Binary::Op::Add, Binary::make(Binary::Op::Mul, var("g"), i32(2)), var("t"));
  Expr base = Binary::make(Binary::Op::Mul, x, i32(8));
  Expr lanes0 = Ramp::make(i32(0), i32(1), 4), lanes1 = Ramp::make(i32(4), i32(1), 4);
  Expr a0 = Load::make(f, "A", base), b0 = Load::make(f, "B", x);
  Stmt body = Allocate::make(
      "acc", f, 8, false,
      Block::make(
          {Store::make("acc", lanes0, Broadcast::make(FloatImm::make(f, 0), 4)),
           Store::make("acc", lanes1,
                       Binary::make(Binary::Op::Add,
                                    Binary::make(Binary::Op::Mul, Broadcast::make(a0, 4),
                                                 Broadcast::make(b0, 4)),
                                    Load::make(f, "acc", lanes0))),
           Store::make("C", Ramp::make(base, i32(1), 4), Load::make(f, "acc", lanes1)),
           Store::make("C", Ramp::make(Binary::make(Binary::Op::Add, base, i32(4)), i32(1), 4),
                       Load::make(f, "acc", lanes0))}));
  (void)f4;
  body = For::make("t", i32(0), i32(2), ForKind::GpuThread, body, 0);
  body = For::make("g", i32(0), i32(3), ForKind::GpuBlock, body, 0);
  Kernel k{"mm",
           {{"A", DType::Float32, 48, false},
            {"B", DType::Float32, 6, false},
            {"C", DType::Float32, 48, true}},
           body};
  KernelSource s = kernel_source(k);
  EXPECT_EQ(s.launch.dims, 1);
  EXPECT_EQ(s.launch.global()[0], 6);
  EXPECT_EQ(s.launch.local[0], 2);
  EXPECT_EQ(
      s.source,
      "typedef float4 __attribute__((aligned(4), may_alias)) tsr_float4_u;\n"
      "__attribute__((reqd_work_group_size(2, 1, 1)))\n"
      "__kernel void tk_mm(__global const float *restrict A, __global const float *restrict B, "
      "__global float *restrict C) {\n"
      "  const int g = ((int)get_group_id(0));\n"
      "  const int t = ((int)get_local_id(0));\n"
      "  float4 acc_r0, acc_r1;\n"
      "  acc_r0 = ((float4)(0.0f));\n"
      "  acc_r1 = fma(((float4)(A[(((g * 2) + t) * 8)])), ((float4)(B[((g * 2) + t)])), acc_r0);\n"
      "  *(__global tsr_float4_u *)(C + (((g * 2) + t) * 8)) = acc_r1;\n"
      "  *(__global tsr_float4_u *)(C + ((((g * 2) + t) * 8) + 4)) = acc_r0;\n"
      "}\n");
}

// A panel with prefetch_ahead (PoCL: Target::panel_prefetch_bytes) is prefetched at the top of the
// innermost loop that reads it, once per distinct address, and only in the first iteration of the
// serial loops around that one (the first row tile: later ones find the panel in cache); a buffer
// without it is never prefetched.
TEST(OpenCLSource, PanelsArePrefetchedInTheFirstRowTileOnly) {
  Type f{DType::Float32, 1};
  Expr row = Ramp::make(Binary::make(Binary::Op::Mul, var("r"), i32(16)), i32(1), 16);
  Expr panel = Load::make(f, "P", Ramp::make(Binary::make(Binary::Op::Mul, var("k"), i32(16)),
                                             i32(1), 16));
  Expr a = Broadcast::make(Load::make(f, "A", var("k")), 16);
  Expr b = Load::make(f, "B", Ramp::make(Binary::make(Binary::Op::Mul, var("k"), i32(16)),
                                         i32(1), 16));
  // O[r] = P[k] * A[k] + P[k] * B[k], twice the same panel vector and another input's.
  Stmt update = Store::make(
      "O", row,
      Binary::make(Binary::Op::Add, Binary::make(Binary::Op::Mul, panel, a),
                   Binary::make(Binary::Op::Mul, panel, b)));
  Stmt body = For::make("r", i32(0), i32(3), ForKind::Serial,
                        For::make("k", i32(0), i32(4), ForKind::Serial, update));
  BufferParam p{"P", DType::Float32, 64, false};
  p.constant_panel = true;
  p.prefetch_ahead = 512;
  Kernel k{"pf",
           {{"O", DType::Float32, 48, true},
            {"A", DType::Float32, 4, false},
            {"B", DType::Float32, 64, false},
            p},
           body};
  std::string src = kernel_source(k).source;
  EXPECT_NE(src.find("  for (int r = 0; r < 3; ++r) {\n"
                     "    for (int k = 0; k < 4; ++k) {\n"
                     "      if (r == 0) {\n"
                     "        __builtin_prefetch(P + (k * 16) + 512L, 0, 2);\n"
                     "      }\n"),
            std::string::npos)
      << src;
  size_t first = src.find("__builtin_prefetch");
  EXPECT_EQ(src.find("__builtin_prefetch", first + 1), std::string::npos) << src;  // once
  k.params.back().prefetch_ahead = 0;
  EXPECT_EQ(kernel_source(k).source.find("prefetch"), std::string::npos);
}

}  // namespace
}  // namespace tessera::opencl
