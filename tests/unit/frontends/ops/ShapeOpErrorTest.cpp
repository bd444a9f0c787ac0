// Bad calls of the shape ops: each throws EdslError naming the op and the offending argument.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "frontends/ops/Resize.h"
#include "frontends/ops/Scan.h"
#include "frontends/ops/Shape.h"
#include "tessera/ops.h"

namespace tessera {
namespace {

// The message of the EdslError that `fn` throws, or a failure when it throws nothing.
std::string error_of(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const EdslError &e) {
    return e.what();
  }
  ADD_FAILURE() << "no EdslError was thrown";
  return "";
}

void expect_error(const std::function<void()> &fn, const std::vector<std::string> &parts) {
  std::string msg = error_of(fn);
  for (const auto &p : parts)
    EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
}

Tensor f32(std::vector<int64_t> shape) { return Placeholder(DType::Float32, shape, "X"); }

TEST(ShapeOpError, AxisOutOfRange) {
  expect_error(
      [] {
        ops::concatenate({f32({2, 3}), f32({2, 3})}, 2);
      },
      {"concatenate: axis 2", "rank 2"});
  expect_error(
      [] {
        ops::concatenate({f32({2, 3}), f32({2, 3})}, -3);
      },
      {"concatenate: axis -3", "out of range"});
  expect_error(
      [] {
        ops::expand_dims(f32({2, 3}), 3);
      },
      {"expand_dims: axis 3", "out of range for rank 3"});
  expect_error([] { ops::squeeze(f32({1, 3}), {2}); }, {"squeeze: axis 2", "out of range"});
  expect_error([] { ops::repeat(f32({2, 3}), 2, 5); }, {"repeat: axis 5", "out of range"});
  expect_error(
      [] {
        ops::take(f32({2, 3}), Placeholder(DType::Int32, {4}), -3);
      },
      {"gather: axis -3", "out of range"});
  expect_error([] { ops::cumsum(f32({2, 3}), 2); }, {"cumsum: axis 2", "out of range"});
  expect_error([] { ops::cumprod(f32({2, 3}), -4); }, {"cumprod: axis -4", "out of range"});
  expect_error([] { ops::one_hot(Placeholder(DType::Int32, {3}), 4, 1, 0, 2); },
               {"one_hot: axis 2", "out of range"});
}

TEST(ShapeOpError, ConcatenateMismatchedShapesOrDtypes) {
  expect_error(
      [] {
        ops::concatenate({f32({2, 3}), f32({4, 3}), f32({2, 5})}, 0);
      },
      {"concatenate: input 2 has shape [2, 5]", "input 0 has [2, 3]", "only on axis 0"});
  expect_error(
      [] {
        ops::concatenate({f32({2, 3}), Placeholder(DType::Int32, {2, 3})}, 1);
      },
      {"concatenate: input 1 has dtype int32", "input 0 has float32"});
  expect_error(
      [] {
        ops::concatenate({f32({2, 3}), f32({2, 3, 1})}, 1);
      },
      {"concatenate: input 1 has rank 3", "input 0 has rank 2"});
  expect_error([] { ops::concatenate({}, 0); }, {"concatenate: needs at least one input"});
}

TEST(ShapeOpError, NegativePad) {
  expect_error(
      [] {
        ops::pad(f32({2, 3}), {0, 1, -1, 0});
      },
      {"pad: pads entry 2", "before axis 1", "negative: -1"});
  expect_error([] { ops::pad(f32({2, 3}), {1, 1}); }, {"pad: pads has 2 entries", "needs 4"});
}

TEST(ShapeOpError, ReshapeSizeMismatchOrTwoInferred) {
  expect_error(
      [] {
        ops::reshape_to(f32({2, 3}), {4, 2});
      },
      {"reshape: shape [4, 2] has 8 elements", "input [2, 3] has 6"});
  expect_error(
      [] {
        ops::reshape_to(f32({2, 3}), {-1, -1});
      },
      {"reshape: shape [-1, -1]", "more than one -1"});
  expect_error(
      [] {
        ops::reshape_to(f32({2, 3}), {-1, 4});
      },
      {"reshape: cannot infer the -1 in shape [-1, 4]"});
  expect_error(
      [] {
        ops::reshape_to(f32({2, 3}), {-2, -3});
      },
      {"reshape: shape [-2, -3]", "negative size"});
}

TEST(ShapeOpError, SqueezeOfANonUnitDim) {
  expect_error([] { ops::squeeze(f32({1, 3, 1}), {1}); }, {"squeeze: axis 1 has size 3, not 1"});
  expect_error([] { ops::squeeze(f32({1, 3, 1}), {0, -3}); }, {"squeeze: axis -3 is listed twice"});
}

TEST(ShapeOpError, PermNotAPermutation) {
  expect_error(
      [] {
        ops::transpose(f32({2, 3, 4}), {0, 0, 1});
      },
      {"transpose: perm [0, 0, 1] is not a permutation", "0..2"});
  expect_error(
      [] {
        ops::transpose(f32({2, 3, 4}), {0, 1, 3});
      },
      {"transpose: perm [0, 1, 3]", "not a permutation"});
  expect_error(
      [] {
        ops::transpose(f32({2, 3, 4}), {1, 0});
      },
      {"transpose: perm [1, 0] has 2 entries", "rank 3"});
}

TEST(ShapeOpError, SliceStepZero) {
  expect_error([] { ops::slice(f32({4, 5}), {{}, {1, 3, 0}}); }, {"slice: step of axis 1 is 0"});
  expect_error([] { ops::slice(f32({4}), {{}, {}}); }, {"slice: 2 ranges", "rank 1"});
}

TEST(ShapeOpError, OneHotDepthBelowOne) {
  expect_error([] { ops::one_hot(Placeholder(DType::Int32, {3}), 0); },
               {"one_hot: depth must be at least 1, got 0"});
  expect_error([] { ops::one_hot(f32({3}), 4); },
               {"one_hot: indices have dtype float32", "integers"});
}

TEST(ShapeOpError, OtherArguments) {
  expect_error([] { ops::tile_tensor(f32({2}), {-1}); }, {"tile: reps [-1]", "negative"});
  expect_error([] { ops::repeat(f32({2}), -2, 0); }, {"repeat: repeats is negative: -2"});
  expect_error([] { ops::take(f32({2, 3}), f32({2})); }, {"gather: indices have dtype float32"});
  expect_error([] { ops::flatten(f32({})); }, {"flatten: the input is a scalar"});
  expect_error(
      [] {
        ops::resize_nearest(f32({2, 3, 4}), {2, 2});
      },
      {"resize_nearest: input has rank 3", "NHWC"});
  expect_error(
      [] {
        ops::resize_bilinear(f32({1, 3, 4, 2}), {0, 2});
      },
      {"resize_bilinear: size entries", "got 0"});
}

// Through the registry, as Python calls them: attribute errors name the op too.
TEST(ShapeOpError, RegistryCallsNameTheOp) {
  OpRegistry ops = builtin_ops();
  expect_error(
      [&] {
        ops.call("slice", {f32({4})}, {{"step", std::vector<int64_t>{0}}});
      },
      {"slice: step of axis 0 is 0"});
  expect_error(
      [&] {
        ops.call("pad", {f32({4})}, {{"pads", std::vector<int64_t>{1, -2}}});
      },
      {"pad: pads entry 1"});
  expect_error(
      [&] {
        ops.call("one_hot", {Placeholder(DType::Int32, {2})}, {{"depth", int64_t{-1}}});
      },
      {"one_hot: depth must be at least 1, got -1"});
  expect_error([&] { ops.call("one_hot", {Placeholder(DType::Int32, {2})}); },
               {"one_hot: missing attribute 'depth'"});
  expect_error([&] { ops.call("reshape", {f32({4})}); }, {"reshape: missing attribute 'shape'"});
  expect_error(
      [&] {
        ops.call("resize", {f32({1, 2, 2, 1})},
                 {{"method", std::string("cubic")}, {"size", int64_t{4}}});
      },
      {"resize: method 'cubic'"});
  expect_error(
      [&] {
        ops.call("resize_nearest", {f32({1, 2, 2, 1})}, {{"size", std::vector<int64_t>{3, 4}}});
      },
      {"resize_nearest: nearest resizing needs size 3", "height 2"});
  expect_error(
      [&] {
        ops.call("resize_bilinear", {f32({1, 2, 2, 1})});
      },
      {"resize_bilinear: give exactly one"});
  expect_error(
      [&] {
        ops.call("transpose", {f32({2}), f32({2})});
      },
      {"transpose: expects 1 input, got 2"});
}

}  // namespace
}  // namespace tessera
