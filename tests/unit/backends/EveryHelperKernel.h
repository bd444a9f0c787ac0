// A kernel that makes a C-like dialect define each of its helper functions for each dtype the
// printer asks for it: floor and truncating division, shifts, abs, relu and saturating conversions
// on every integer type; NaN-propagating max/min, fmod, round, pow, erf, relu, the transcendental
// functions and rounding to float16 on every float type. The OpenCL and Vulkan tests compile it.
#pragma once

#include <string>
#include <vector>

#include "compiler/IR.h"

namespace tessera::test {

/// `float64`: compute on float64 too; `float64_erf`: erf included on float64 (GLSL has none).
inline compiler::Kernel every_helper_kernel(bool float64, bool float64_erf) {
  using namespace compiler;
  using tile::DType;
  using tile::Intrinsic;
  using Op = Binary::Op;
  std::vector<BufferParam> params{{"F", DType::Float32, 1, false}};
  std::vector<Stmt> stores;
  auto at = [](int64_t i) { return IntImm::make(Type::i32(), i); };
  auto store_all = [&](DType t, const std::string &out, const std::vector<Expr> &results) {
    params.push_back({out, t, static_cast<int64_t>(results.size()), true});
    for (size_t i = 0; i < results.size(); ++i)
      stores.push_back(Store::make(out, at(i), results[i]));
  };
  if (float64) params.push_back({"D", DType::Float64, 1, false});
  for (DType t : {DType::Int8, DType::UInt8, DType::Int16, DType::UInt16, DType::Int32,
                  DType::UInt32, DType::Int64, DType::UInt64}) {
    std::string name(tile::dtype_name(t));
    Type type{t, 1};
    params.push_back({"X_" + name, t, 2, false});
    Expr a = Load::make(type, "X_" + name, at(0)), b = Load::make(type, "X_" + name, at(1));
    std::vector<Expr> results{Binary::make(Op::Div, a, b),  // floor division
                              Binary::make(Op::Mod, a, b),
                              Call::make(type, Intrinsic::Div, {a, b}),  // truncating division
                              Call::make(type, Intrinsic::BitLeft, {a, b}),
                              Call::make(type, Intrinsic::BitRight, {a, b}),
                              Call::make(type, Intrinsic::Abs, {a}),
                              Call::make(type, Intrinsic::Relu, {a}),
                              Cast::make(type, Load::make({DType::Float32, 1}, "F", at(0)))};
    if (float64) results.push_back(Cast::make(type, Load::make({DType::Float64, 1}, "D", at(0))));
    store_all(t, "O_" + name, results);
  }
  for (DType t : {DType::Float16, DType::Float32, DType::Float64}) {
    if (t == DType::Float64 && !float64) continue;
    std::string name(tile::dtype_name(t));
    Type type{t, 1};
    params.push_back({"X_" + name, t, 2, false});
    Expr a = Load::make(type, "X_" + name, at(0)), b = Load::make(type, "X_" + name, at(1));
    std::vector<Expr> results{Binary::make(Op::Max, a, b), Binary::make(Op::Min, a, b),
                              Binary::make(Op::Mod, a, b),
                              Cast::make(type, Cast::make({DType::Float16, 1}, a))};
    for (Intrinsic f : {Intrinsic::Relu, Intrinsic::Round, Intrinsic::Exp, Intrinsic::Log,
                        Intrinsic::Tanh, Intrinsic::Sinh, Intrinsic::Cosh, Intrinsic::Erf})
      if (f != Intrinsic::Erf || t != DType::Float64 || float64_erf)
        results.push_back(Call::make(type, f, {a}));
    results.push_back(Call::make(type, Intrinsic::Pow, {a, b}));
    store_all(t, "O_" + name, results);
  }
  return Kernel{"helpers", params, Block::make(stores)};
}

}  // namespace tessera::test
