// Bad calls of the math ops (reductions, normalizations, losses, dropout, clip) raise EdslError
// naming the op and the offending argument, from C++ and through the registry.
#include <gtest/gtest.h>

#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Loss.h"
#include "frontends/ops/Normalize.h"
#include "frontends/ops/Random.h"
#include "frontends/ops/Reduce.h"
#include "tessera/ops.h"

namespace tessera::ops {
namespace {

// Runs `fn` and returns the EdslError's message ("" when nothing was thrown).
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const EdslError &e) {
    return e.what();
  }
  return "";
}

Tensor f32(std::vector<int64_t> shape) { return Placeholder(DType::Float32, shape, "X"); }

TEST(MathOpError, AxisOutOfRange) {
  Tensor x = f32({2, 3});
  EXPECT_EQ(error_of([&] { sum(x, {2}); }), "sum: axis 2 is out of range for a tensor of rank 2");
  EXPECT_EQ(error_of([&] { max(x, {-3}); }), "max: axis -3 is out of range for a tensor of rank 2");
  EXPECT_EQ(error_of([&] { argmin(x, {5}); }),
            "argmin: axis 5 is out of range for a tensor of rank 2");
  EXPECT_EQ(error_of([&] { softmax(x, {2}); }),
            "softmax: axis 2 is out of range for a tensor of rank 2");
  EXPECT_EQ(error_of([&] { layer_norm(x, {-4}); }),
            "layer_norm: axis -4 is out of range for a tensor of rank 2");
  EXPECT_EQ(error_of([&] { categorical_crossentropy(x, x, false, 3); }),
            "categorical_crossentropy: axis 3 is out of range for a tensor of rank 2");
}

TEST(MathOpError, RepeatedAxis) {
  Tensor x = f32({2, 3, 4});
  EXPECT_EQ(error_of([&] { mean(x, {0, 0}); }), "mean: axis 0 is repeated");
  EXPECT_EQ(error_of([&] { prod(x, {1, -2}); }), "prod: axis -2 is repeated");
  EXPECT_EQ(error_of([&] { moments(x, {2, -1}); }), "moments: axis -1 is repeated");
}

TEST(MathOpError, AxisErrorsThroughTheRegistry) {
  OpRegistry ops = builtin_ops();
  Tensor x = f32({2, 3});
  EXPECT_EQ(error_of([&] {
              ops.call("argmax", {x}, {{"axis", int64_t{2}}});
            }),
            "argmax: axis 2 is out of range for a tensor of rank 2");
  EXPECT_EQ(error_of([&] {
              ops.call("sum", {x}, {{"axis", std::vector<int64_t>{1, 1}}});
            }),
            "sum: axis 1 is repeated");
  EXPECT_EQ(error_of([&] { ops.call("softmax", {x, x}); }), "softmax: expects 1 input, got 2");
}

TEST(MathOpError, DropoutRateOutsideZeroOne) {
  Tensor x = f32({4});
  Tensor state = Placeholder(DType::UInt32, {3, 8}, "S");
  EXPECT_EQ(error_of([&] { dropout(x, state, 1.0); }), "dropout: rate 1.000000 is outside [0, 1)");
  EXPECT_EQ(error_of([&] { dropout(x, state, -0.25); }),
            "dropout: rate -0.250000 is outside [0, 1)");
  EXPECT_EQ(error_of([&] { dropout(x, Placeholder(DType::UInt32, {8}, "S"), 0.5); }),
            "dropout: state must be uint32 [3, N], not uint32 [8]");
  EXPECT_EQ(error_of([&] { dropout(x, state, 0.5); }), "");
}

TEST(MathOpError, BatchNormParametersMustMatchTheAxis) {
  Tensor x = f32({2, 3, 4});
  Tensor c3 = f32({3}), c4 = f32({4});
  EXPECT_EQ(error_of([&] { batch_norm(x, c3, c4, c4, c4); }),
            "batch_norm: mean has shape [3] but x [2, 3, 4] needs [4] (x's sizes on axis 2)");
  EXPECT_EQ(error_of([&] { batch_norm(x, c3, c3, c3, c4, 1e-3, 1); }),
            "batch_norm: gamma has shape [4] but x [2, 3, 4] needs [3] (x's sizes on axis 1)");
  EXPECT_EQ(error_of([&] { batch_norm(x, c3, c3, c3, c3, 1e-3, 3); }),
            "batch_norm: axis 3 is out of range for a tensor of rank 3");
  EXPECT_EQ(error_of([&] { batch_norm(x, c3, c3, c3, c3, 1e-3, 1); }), "");
  EXPECT_EQ(error_of([&] { batch_norm(x, f32({1, 3, 1}), c3, Tensor(), Tensor(), 1e-3, -2); }), "");
}

TEST(MathOpError, TargetsMustMatchOutputs) {
  Tensor out = f32({2, 5});
  EXPECT_EQ(error_of([&] {
              categorical_crossentropy(f32({2, 4}), out);
            }),
            "categorical_crossentropy: target has shape [2, 4] but output has shape [2, 5]");
  EXPECT_EQ(error_of([&] { binary_crossentropy(f32({5}), out); }),
            "binary_crossentropy: target has shape [5] but output has shape [2, 5]");
  Tensor labels = Placeholder(DType::Int32, {5}, "T");
  EXPECT_EQ(error_of([&] { sparse_categorical_crossentropy(labels, out); }),
            "sparse_categorical_crossentropy: target has shape [5] but output [2, 5] needs [2] "
            "(output's shape "
            "without axis -1)");
  EXPECT_EQ(error_of([&] {
              sparse_categorical_crossentropy(Placeholder(DType::Int32, {5}, "T"), out, false, 0);
            }),
            "");
}

TEST(MathOpError, ClipWithMinAboveMax) {
  Tensor x = f32({3});
  EXPECT_EQ(error_of([&] { clip(x, 2.0, 1.0); }), "clip: min 2 is greater than max 1");
  EXPECT_EQ(error_of([&] {
              builtin_ops().call("clip", {x}, {{"min", 0.5}, {"max", -0.5}});
            }),
            "clip: min 0.5 is greater than max -0.5");
  EXPECT_EQ(error_of([&] { clip(x, 1.0, 1.0); }), "");
}

}  // namespace
}  // namespace tessera::ops
