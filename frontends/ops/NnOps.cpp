// Registers the neural-network ops (Linear.h, Conv.h, Pool.h) by name, reading their attributes.
#include "frontends/ops/Conv.h"
#include "frontends/ops/Library.h"
#include "frontends/ops/Linear.h"
#include "frontends/ops/Pool.h"

namespace tessera::ops {

namespace {

using Inputs = std::vector<Tensor>;

void expect_inputs(const OpAttrs &attrs, const Inputs &in, size_t lo, size_t hi,
                   const char *names) {
  if (in.size() >= lo && in.size() <= hi) return;
  std::string count =
      lo == hi ? std::to_string(lo) : std::to_string(lo) + " or " + std::to_string(hi);
  throw EdslError(attrs.op_name + ": expects " + count + " inputs (" + names + "), got " +
                  std::to_string(in.size()));
}

Tensor optional_input(const Inputs &in, size_t i) { return i < in.size() ? in[i] : Tensor(); }

// `padding` is "valid", "same" or a flat list of (before, after) pairs.
Padding padding_attr(const OpAttrs &attrs) {
  if (!attrs.has("padding")) return Padding::valid();
  std::string name;
  try {
    name = attrs.get_string("padding", "valid");
  } catch (const EdslError &) {
    return Padding::explicit_pads(attrs.get_ints("padding", {}));
  }
  return parse_padding(attrs.op_name, name);
}

DataFormat format_attr(const OpAttrs &attrs) {
  return parse_data_format(attrs.op_name, attrs.get_string("data_format", "channels_last"));
}

// Spatial rank of the op's input for expanding a single integer attribute to every axis.
size_t spatial_axes(const Inputs &in) {
  return in.empty() || in[0].rank() < 2 ? 1 : in[0].rank() - 2;
}

// Keras calls it dilation_rate; accept either name.
std::vector<int64_t> dilation_attr(const OpAttrs &attrs, size_t axes) {
  const char *name = attrs.has("dilation_rate") ? "dilation_rate" : "dilation";
  return attrs.get_ints(name, {}, axes);
}

void register_conv(OpRegistry &registry, const std::string &name, size_t spatial) {
  registry.add(name, [spatial](const Inputs &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 3, "input, kernel[, bias]");
    size_t axes = spatial_axes(in);
    ConvOptions o;
    o.strides = attrs.get_ints("strides", {}, axes);
    o.dilations = dilation_attr(attrs, axes);
    o.padding = padding_attr(attrs);
    o.groups = attrs.get_int("groups", 1);
    o.data_format = format_attr(attrs);
    return Inputs{
        conv_detail::conv(attrs.op_name, spatial, in[0], in[1], o, optional_input(in, 2))};
  });
}

void register_conv_transpose(OpRegistry &registry, const std::string &name, size_t spatial) {
  registry.add(name, [spatial](const Inputs &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 3, "input, kernel[, bias]");
    size_t axes = spatial_axes(in);
    ConvTransposeOptions o;
    o.strides = attrs.get_ints("strides", {}, axes);
    o.dilations = dilation_attr(attrs, axes);
    o.output_padding = attrs.get_ints("output_padding", {}, axes);
    o.padding = padding_attr(attrs);
    o.data_format = format_attr(attrs);
    return Inputs{conv_detail::conv_transpose(attrs.op_name, spatial, in[0], in[1], o,
                                              optional_input(in, 2))};
  });
}

void register_pool(OpRegistry &registry, const std::string &name, size_t spatial,
                   pool_detail::Kind kind) {
  registry.add(name, [spatial, kind](const Inputs &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1, "input");
    size_t axes = spatial_axes(in);
    PoolOptions o;
    if (!attrs.has("pool_size")) throw EdslError(attrs.op_name + ": missing attribute 'pool_size'");
    o.pool_size = attrs.get_ints("pool_size", {}, axes);
    o.strides = attrs.get_ints("strides", {}, axes);
    o.padding = padding_attr(attrs);
    o.data_format = format_attr(attrs);
    return Inputs{pool_detail::pool(attrs.op_name, spatial, kind, in[0], o)};
  });
}

void register_global_pool(OpRegistry &registry, const std::string &name, pool_detail::Kind kind) {
  registry.add(name, [kind](const Inputs &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1, "input");
    return Inputs{pool_detail::global_pool(attrs.op_name, kind, in[0],
                                           attrs.get_bool("keepdims", false), format_attr(attrs))};
  });
}

}  // namespace

void register_nn_ops(OpRegistry &registry) {
  registry.add("matmul", [](const Inputs &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 2, "a, b");
    return Inputs{matmul(in[0], in[1])};
  });
  registry.add("dense", [](const Inputs &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 3, "x, kernel[, bias]");
    return Inputs{dense(in[0], in[1], optional_input(in, 2))};
  });
  register_conv(registry, "conv", 0);
  register_conv_transpose(registry, "conv_transpose", 0);
  for (size_t d = 1; d <= 3; ++d) {
    std::string nd = std::to_string(d) + "d";
    register_conv(registry, "conv" + nd, d);
    register_conv_transpose(registry, "conv" + nd + "_transpose", d);
    register_pool(registry, "max_pool" + nd, d, pool_detail::Kind::Max);
    register_pool(registry, "avg_pool" + nd, d, pool_detail::Kind::Avg);
  }
  register_pool(registry, "max_pool", 0, pool_detail::Kind::Max);
  register_pool(registry, "avg_pool", 0, pool_detail::Kind::Avg);
  register_global_pool(registry, "global_max_pool", pool_detail::Kind::Max);
  register_global_pool(registry, "global_avg_pool", pool_detail::Kind::Avg);
}

}  // namespace tessera::ops
