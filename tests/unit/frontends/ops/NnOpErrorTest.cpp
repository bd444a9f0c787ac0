// Bad calls of the neural-network ops: each throws EdslError naming the op and the argument at
// fault.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "frontends/ops/Conv.h"
#include "frontends/ops/Linear.h"
#include "frontends/ops/Pool.h"
#include "tessera/ops.h"

namespace tessera::ops {
namespace {

Tensor f32(std::vector<int64_t> shape) { return Placeholder(DType::Float32, shape); }

// Runs `call`, expects EdslError, and checks that its message contains every fragment.
void expect_error(const std::function<void()> &call, const std::vector<std::string> &fragments) {
  try {
    call();
  } catch (const EdslError &e) {
    std::string message = e.what();
    for (const auto &f : fragments)
      EXPECT_NE(message.find(f), std::string::npos) << "'" << f << "' not in: " << message;
    return;
  }
  ADD_FAILURE() << "no EdslError for a call that should fail with: " << fragments.front();
}

std::vector<Tensor> by_name(const std::string &op, const std::vector<Tensor> &in,
                            OpAttrs attrs = {}) {
  static const OpRegistry registry = builtin_ops();
  return registry.call(op, in, attrs);
}

TEST(NnOpError, MatmulInnerDimensions) {
  expect_error(
      [] {
        matmul(f32({2, 3}), f32({4, 5}));
      },
      {"matmul: inner dimensions differ", "a [2, 3] has 3 columns", "b [4, 5] has 4 rows"});
  expect_error([] { matmul(f32({3}), f32({2})); }, {"matmul:", "3 columns", "2 rows"});
  expect_error(
      [] {
        matmul(f32({2, 2, 3}), f32({3, 3, 4}));
      },
      {"matmul: batch dimensions", "do not broadcast"});
  expect_error([] { matmul(f32({}), f32({3})); }, {"matmul: a is a scalar"});
}

TEST(NnOpError, DenseShapes) {
  expect_error(
      [] {
        dense(f32({2, 3}), f32({4, 5}));
      },
      {"dense: input has 3 features", "expects 4"});
  expect_error([] { dense(f32({2, 3}), f32({3})); }, {"dense: kernel must have rank 2"});
  expect_error(
      [] {
        dense(f32({2, 3}), f32({3, 5}), f32({4}));
      },
      {"dense: bias has shape [4]", "5 units"});
}

TEST(NnOpError, ConvRanks) {
  expect_error(
      [] {
        conv2d(f32({1, 5, 5}), f32({3, 3, 1, 2}));
      },
      {"conv2d: input must have rank 4", "got rank 3"});
  expect_error(
      [] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 1, 2}));
      },
      {"conv2d: kernel has rank 3", "input has rank 4"});
  expect_error([] { conv(f32({5, 5}), f32({3, 3})); }, {"conv: input must have rank >= 3"});
}

TEST(NnOpError, ConvChannels) {
  expect_error(
      [] {
        conv2d(f32({1, 5, 5, 4}), f32({3, 3, 3, 2}));
      },
      {"conv2d: kernel [3, 3, 3, 2] has 3 input channels", "the input has 4"});
  ConvOptions first;
  first.data_format = DataFormat::ChannelsFirst;
  expect_error(
      [&] {
        conv2d(f32({1, 4, 5, 5}), f32({2, 3, 3, 3}), first);
      },
      {"conv2d:", "3 input channels", "has 4"});
  expect_error(
      [] {
        conv1d(f32({1, 5, 4}), f32({3, 4, 2}), {}, f32({3}));
      },
      {"conv1d: bias has shape [3]", "2 channels"});
}

TEST(NnOpError, ConvGroups) {
  ConvOptions o;
  o.groups = 3;
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 4}), f32({3, 3, 1, 3}), o);
      },
      {"conv2d: groups (3) does not divide the input's 4 channels"});
  o.groups = 2;
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 4}), f32({3, 3, 2, 3}), o);
      },
      {"conv2d: groups (2) does not divide the kernel's 3 output channels"});
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 4}), f32({3, 3, 4, 2}), o);
      },
      {"conv2d:", "4 input channels", "in 2 groups (2 per group)"});
  o.groups = 0;
  expect_error([&] { conv2d(f32({1, 5, 5, 4}), f32({3, 3, 4, 2}), o); }, {"conv2d: groups is 0"});
}

TEST(NnOpError, ConvStridesAndDilation) {
  ConvOptions o;
  o.strides = {1, 2, 1};
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 3, 1, 1}), o);
      },
      {"conv2d: strides has 3 values", "2 spatial dimensions"});
  o.strides = {1, 0};
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 3, 1, 1}), o);
      },
      {"conv2d: strides[1] is 0", "positive"});
  o.strides = {};
  o.dilations = {-1, 1};
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 3, 1, 1}), o);
      },
      {"conv2d: dilation[0] is -1"});
}

TEST(NnOpError, ConvPadding) {
  ConvOptions o;
  o.padding = Padding::explicit_pads({1, 1, -1, 0});
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 3, 1, 1}), o);
      },
      {"conv2d: padding[2] is -1", "non-negative"});
  o.padding = Padding::explicit_pads({1, 1, 1});
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 3, 1, 1}), o);
      },
      {"conv2d: explicit padding has 3 values; expected 4"});
  // 'valid' with a dilated kernel wider than the input
  o.padding = Padding::valid();
  o.dilations = {3, 1};
  expect_error(
      [&] {
        conv2d(f32({1, 5, 5, 1}), f32({3, 3, 1, 1}), o);
      },
      {"conv2d: kernel spans 7 on spatial dimension 0", "only 5", "'valid'"});
  expect_error([] { parse_padding("conv2d", "full"); }, {"conv2d: unknown padding 'full'"});
  expect_error([] { parse_data_format("conv2d", "NHWC"); }, {"conv2d: unknown data_format 'NHWC'"});
}

TEST(NnOpError, ConvAttributesByName) {
  Tensor x = f32({1, 5, 5, 2}), k = f32({3, 3, 2, 4});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"padding", std::string("middle")}});
      },
      {"conv2d: unknown padding 'middle'"});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"data_format", std::string("NCHW")}});
      },
      {"conv2d: unknown data_format 'NCHW'"});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"padding", std::vector<int64_t>{0, 0, 2, -2}}});
      },
      {"conv2d: padding[3] is -2"});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"strides", int64_t{0}}});
      },
      {"conv2d: strides[0] is 0"});
  expect_error([&] { by_name("conv2d", {x}); }, {"conv2d: expects 2 or 3 inputs", "got 1"});
  expect_error([&] { by_name("conv3d", {x, k}); }, {"conv3d: input must have rank 5"});
  expect_error(
      [&] {
        by_name("matmul", {f32({2, 3}), f32({2, 3})});
      },
      {"matmul: inner dimensions differ"});
}

TEST(NnOpError, ConvTranspose) {
  ConvTransposeOptions o;
  expect_error(
      [&] {
        conv2d_transpose(f32({1, 4, 4, 3}), f32({3, 3, 2, 4}));
      },
      {"conv2d_transpose: kernel [3, 3, 2, 4] has 4 input channels", "the input has 3"});
  o.strides = {2, 2};
  o.output_padding = {2, 0};
  expect_error(
      [&] {
        conv2d_transpose(f32({1, 4, 4, 3}), f32({3, 3, 2, 3}), o);
      },
      {"conv2d_transpose: output_padding[0] is 2", "smaller than the stride 2"});
  o.output_padding = {};
  o.padding = Padding::explicit_pads({1, 1, 1, 1});
  expect_error(
      [&] {
        conv2d_transpose(f32({1, 4, 4, 3}), f32({3, 3, 2, 3}), o);
      },
      {"conv2d_transpose: padding must be 'valid' or 'same'"});
  expect_error(
      [] {
        conv2d_transpose(f32({1, 4, 3}), f32({3, 2, 3}));
      },
      {"conv2d_transpose: input must have rank 4"});
}

TEST(NnOpError, Pooling) {
  PoolOptions o;
  o.pool_size = {4, 4};
  expect_error(
      [&] {
        pool_detail::pool("max_pool2d", 2, pool_detail::Kind::Max, f32({1, 3, 5, 1}), o);
      },
      {"max_pool2d: pool window spans 4 on spatial dimension 0", "only 3", "'valid'"});
  o.pool_size = {2, 2, 2};
  expect_error(
      [&] {
        max_pool(f32({1, 4, 4, 1}), o);
      },
      {"max_pool: pool_size has 3 values", "2 spatial"});
  o.pool_size = {2, 2};
  o.strides = {0, 1};
  expect_error([&] { avg_pool(f32({1, 4, 4, 1}), o); }, {"avg_pool: strides[0] is 0"});
  o.strides = {};
  o.padding = Padding::explicit_pads({2, 0, 0, 0});
  expect_error(
      [&] {
        avg_pool(f32({1, 4, 4, 1}), o);
      },
      {"avg_pool: padding (2, 0) on spatial dimension 0", "smaller than the pool window 2"});
  expect_error(
      [] {
        by_name("max_pool2d", {f32({1, 4, 4, 1})});
      },
      {"max_pool2d: missing attribute 'pool_size'"});
  expect_error(
      [] {
        by_name("avg_pool1d", {f32({1, 4, 4, 1})}, {{"pool_size", int64_t{2}}});
      },
      {"avg_pool1d: input must have rank 3"});
  expect_error(
      [] {
        by_name("max_pool2d", {f32({1, 4, 4, 1})},
                {{"pool_size", int64_t{2}}, {"padding", std::string("SAME")}});
      },
      {"max_pool2d: unknown padding 'SAME'"});
  expect_error(
      [] {
        by_name("global_avg_pool", {f32({4, 4})});
      },
      {"global_avg_pool: input must have rank >= 3"});
  expect_error(
      [] {
        by_name("global_max_pool", {f32({1, 4, 4})}, {{"data_format", std::string("nchw")}});
      },
      {"global_max_pool: unknown data_format 'nchw'"});
}

// An attribute the op never asks for is a mistake (a typo, another framework's name), not a
// no-op: OpRegistry::call names the op, the attribute and the ones the op knows.
TEST(NnOpError, UnknownAttributes) {
  Tensor x = f32({1, 8, 8, 3}), k = f32({3, 3, 3, 4});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"bogus", int64_t{1}}});
      },
      {"conv2d: unknown attribute 'bogus' (known: ", "dilation_rate", "padding", "strides"});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"dilations", int64_t{0}}});
      },
      {"conv2d: unknown attribute 'dilations'"});
  expect_error(
      [&] {
        by_name("matmul", {f32({2, 3}), f32({3, 4})}, {{"transpose", true}});
      },
      {"matmul: unknown attribute 'transpose' (it takes none)"});
  // Known attributes with bad values: each op's own message.
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"dilation_rate", int64_t{0}}});
      },
      {"conv2d: dilation[0] is 0; dilation must be positive"});
  expect_error(
      [&] {
        by_name("conv2d", {x, k}, {{"strides", std::vector<int64_t>{1, -2}}});
      },
      {"conv2d: strides[1] is -2; strides must be positive"});
  expect_error(
      [&] {
        by_name("max_pool2d", {x}, {{"pool_size", int64_t{2}}, {"strides", int64_t{0}}});
      },
      {"max_pool2d: strides[0] is 0"});
  EXPECT_EQ(by_name("conv2d", {x, k}, {{"dilation", int64_t{2}}, {"padding", std::string("same")}})
                .size(),
            1u);
}

}  // namespace
}  // namespace tessera::ops
