#include "bench/models/Layers.h"

#include <cmath>
#include <stdexcept>

#include "frontends/ops/Conv.h"
#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Linear.h"
#include "frontends/ops/Normalize.h"
#include "frontends/ops/Pool.h"
#include "frontends/ops/Shape.h"

namespace tessera::models {

namespace {

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

HostTensor float_tensor(const std::vector<int64_t> &shape) {
  return HostTensor(tile::TensorType{DType::Float32, shape});
}

// The sample input has its own generator, so that it does not depend on how many weights come
// before it.
constexpr uint64_t kSampleSeedSalt = 0x9E3779B97F4A7C15ull;

}  // namespace

LayerBuilder::LayerBuilder(std::string model, const ModelOptions &options)
    : model_(std::move(model)), options_(options), rng_(options.seed) {}

int64_t LayerBuilder::width(int64_t full) const {
  return std::max<int64_t>(1, full / options_.width_divisor);
}

Tensor LayerBuilder::image_input(int64_t size) {
  std::vector<int64_t> shape{options_.batch, size, size, 3};
  input_ = Placeholder(DType::Float32, shape, "X");
  names_[input_.node().get()] = "X";
  sample_input_ = float_tensor(shape);
  std::mt19937_64 rng(options_.seed ^ kSampleSeedSalt);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  float *data = sample_input_.as<float>();
  for (int64_t i = 0; i < sample_input_.elements(); ++i) data[i] = normal(rng);
  return input_;
}

Tensor LayerBuilder::token_input(int64_t seq, int64_t vocab) {
  std::vector<int64_t> shape{options_.batch, seq};
  input_ = Placeholder(DType::Int32, shape, "X");
  names_[input_.node().get()] = "X";
  sample_input_ = HostTensor(tile::TensorType{DType::Int32, shape});
  std::mt19937_64 rng(options_.seed ^ kSampleSeedSalt);
  std::uniform_int_distribution<int32_t> ids(0, static_cast<int32_t>(vocab - 1));
  int32_t *data = sample_input_.as<int32_t>();
  for (int64_t i = 0; i < sample_input_.elements(); ++i) data[i] = ids(rng);
  return input_;
}

Tensor LayerBuilder::add_weight(const std::string &name, HostTensor value) {
  if (!weight_names_.insert(name).second)
    throw std::logic_error(model_ + ": two weights named '" + name + "'");
  Tensor placeholder = Placeholder(DType::Float32, value.shape(), name);
  names_[placeholder.node().get()] = name;
  weights_.push_back({placeholder, std::move(value)});
  return placeholder;
}

Tensor LayerBuilder::normal_weight(const std::string &name, const std::vector<int64_t> &shape,
                                   double mean, double stddev) {
  HostTensor value = float_tensor(shape);
  std::normal_distribution<float> normal(static_cast<float>(mean), static_cast<float>(stddev));
  float *data = value.as<float>();
  for (int64_t i = 0; i < value.elements(); ++i) data[i] = normal(rng_);
  return add_weight(name, std::move(value));
}

Tensor LayerBuilder::uniform_weight(const std::string &name, const std::vector<int64_t> &shape,
                                    double lo, double hi) {
  HostTensor value = float_tensor(shape);
  std::uniform_real_distribution<float> uniform(static_cast<float>(lo), static_cast<float>(hi));
  float *data = value.as<float>();
  for (int64_t i = 0; i < value.elements(); ++i) data[i] = uniform(rng_);
  return add_weight(name, std::move(value));
}

std::vector<int64_t> LayerBuilder::resolve_pads(const Tensor &x, int64_t kh, int64_t kw,
                                                int64_t stride, const Pad &pad) const {
  switch (pad.mode) {
    case Pad::Mode::Valid: return {0, 0, 0, 0};
    case Pad::Mode::Explicit: return pad.pads;
    case Pad::Mode::Same: {
      std::vector<int64_t> pads;
      for (auto [in, k] : {std::pair{x.shape()[1], kh}, std::pair{x.shape()[2], kw}}) {
        int64_t out = (in + stride - 1) / stride;
        int64_t total = std::max<int64_t>((out - 1) * stride + k - in, 0);
        pads.push_back(total / 2);
        pads.push_back(total - total / 2);
      }
      return pads;
    }
  }
  throw std::logic_error("unknown padding mode");
}

Tensor LayerBuilder::conv2d(const Tensor &x, const std::string &name, const ConvSpec &spec) {
  int64_t ci = x.shape().at(3);
  if (ci % spec.groups != 0 || spec.filters % spec.groups != 0)
    throw std::logic_error(model_ + ": " + name + ": groups do not divide the channels");
  int64_t fan_in = spec.kh * spec.kw * (ci / spec.groups);
  Tensor w = normal_weight(name + "_w", {spec.kh, spec.kw, ci / spec.groups, spec.filters}, 0,
                           std::sqrt(2.0 / double(fan_in)));
  Tensor b = spec.bias ? uniform_weight(name + "_b", {spec.filters}, -0.1, 0.1) : Tensor();
  std::vector<int64_t> pads = resolve_pads(x, spec.kh, spec.kw, spec.stride, spec.pad);
  ops::ConvOptions options;
  options.strides = {spec.stride, spec.stride};
  options.padding = ops::Padding::explicit_pads(pads);
  options.groups = spec.groups;
  Tensor y = ops::conv2d(x, w, options, b);
  flops_ += 2.0 * double(elements(y.shape())) * double(fan_in);
  std::vector<Tensor> inputs{x, w};
  if (spec.bias) inputs.push_back(b);
  return record(y, "conv2d", inputs,
                {{"strides", std::vector<int64_t>{spec.stride, spec.stride}},
                 {"pads", pads},
                 {"dilations", std::vector<int64_t>{1, 1}},
                 {"groups", spec.groups}});
}

Tensor LayerBuilder::batch_norm(const Tensor &x, const std::string &name, double epsilon,
                                double gamma_center) {
  std::vector<int64_t> c{x.shape().back()};
  Tensor gamma = uniform_weight(name + "_gamma", c, 0.8 * gamma_center, 1.2 * gamma_center);
  Tensor beta = uniform_weight(name + "_beta", c, -0.1, 0.1);
  Tensor mean = uniform_weight(name + "_mean", c, -0.1, 0.1);
  Tensor variance = uniform_weight(name + "_variance", c, 0.8, 1.2);
  Tensor y = ops::batch_norm(x, mean, variance, beta, gamma, epsilon);
  return record(y, "batch_norm", {x, gamma, beta, mean, variance}, {{"epsilon", epsilon}});
}

Tensor LayerBuilder::dense(const Tensor &x, const std::string &name, int64_t units, bool bias,
                           double gain) {
  int64_t in = x.shape().back();
  Tensor w = normal_weight(name + "_w", {in, units}, 0, std::sqrt(gain / double(in)));
  Tensor b = bias ? uniform_weight(name + "_b", {units}, -0.1, 0.1) : Tensor();
  Tensor y = ops::dense(x, w, b);
  flops_ += 2.0 * double(elements(y.shape())) * double(in);
  std::vector<Tensor> inputs{x, w};
  if (bias) inputs.push_back(b);
  return record(y, "dense", inputs);
}

Tensor LayerBuilder::layer_norm(const Tensor &x, const std::string &name, double epsilon) {
  std::vector<int64_t> c{x.shape().back()};
  Tensor gamma = uniform_weight(name + "_gamma", c, 0.8, 1.2);
  Tensor beta = uniform_weight(name + "_beta", c, -0.1, 0.1);
  Tensor y = ops::layer_norm(x, {-1}, epsilon, gamma, beta);
  return record(y, "layer_norm", {x, gamma, beta}, {{"epsilon", epsilon}});
}

Tensor LayerBuilder::gather(const Tensor &table, const Tensor &ids) {
  return record(ops::take(table, ids, 0), "gather", {table, ids});
}

Tensor LayerBuilder::relu(const Tensor &x) { return record(ops::relu(x), "relu", {x}); }

Tensor LayerBuilder::relu6(const Tensor &x) { return record(ops::relu6(x), "relu6", {x}); }

Tensor LayerBuilder::gelu(const Tensor &x) {
  return record(ops::gelu(x, /*approximate=*/false), "gelu", {x});
}

Tensor LayerBuilder::add(const Tensor &a, const Tensor &b) { return record(a + b, "add", {a, b}); }

Tensor LayerBuilder::mul_scalar(const Tensor &x, double value) {
  return record(x * Tensor(value), "mul_scalar", {x}, {{"value", value}});
}

Tensor LayerBuilder::pool(const std::string &op, const Tensor &x, int64_t size, int64_t stride,
                          const Pad &pad) {
  std::vector<int64_t> pads = resolve_pads(x, size, size, stride, pad);
  ops::PoolOptions options;
  options.pool_size = {size, size};
  options.strides = {stride, stride};
  options.padding = ops::Padding::explicit_pads(pads);
  Tensor y = op == "max_pool" ? ops::max_pool(x, options) : ops::avg_pool(x, options);
  return record(y, op, {x},
                {{"size", std::vector<int64_t>{size, size}},
                 {"strides", std::vector<int64_t>{stride, stride}},
                 {"pads", pads}});
}

Tensor LayerBuilder::max_pool(const Tensor &x, int64_t size, int64_t stride, const Pad &pad) {
  return pool("max_pool", x, size, stride, pad);
}

Tensor LayerBuilder::avg_pool(const Tensor &x, int64_t size, int64_t stride, const Pad &pad) {
  return pool("avg_pool", x, size, stride, pad);
}

Tensor LayerBuilder::global_avg_pool(const Tensor &x) {
  return record(ops::global_avg_pool(x), "global_avg_pool", {x});
}

Tensor LayerBuilder::concat(const std::vector<Tensor> &xs, int64_t axis) {
  return record(ops::concatenate(xs, axis), "concat", xs, {{"axis", axis}});
}

Tensor LayerBuilder::flatten(const Tensor &x) { return record(ops::flatten(x), "flatten", {x}); }

Tensor LayerBuilder::softmax(const Tensor &x, int64_t axis) {
  return record(ops::softmax(x, {axis}), "softmax", {x}, {{"axis", axis}});
}

Tensor LayerBuilder::reshape(const Tensor &x, const std::vector<int64_t> &shape) {
  return record(ops::reshape_to(x, shape), "reshape", {x}, {{"shape", shape}});
}

Tensor LayerBuilder::transpose(const Tensor &x, const std::vector<int64_t> &perm) {
  return record(ops::transpose(x, perm), "transpose", {x}, {{"perm", perm}});
}

Tensor LayerBuilder::matmul(const Tensor &a, const Tensor &b) {
  Tensor y = ops::matmul(a, b);
  flops_ += 2.0 * double(elements(y.shape())) * double(a.shape().back());
  return record(y, "matmul", {a, b});
}

Tensor LayerBuilder::record(const Tensor &out, std::string op, const std::vector<Tensor> &inputs,
                            std::vector<std::pair<std::string, OpAttr>> attrs) {
  GraphNode node{std::move(op), {}, "t" + std::to_string(nodes_.size()), std::move(attrs)};
  for (const Tensor &t : inputs) node.inputs.push_back(name_of(t));
  if (!names_.emplace(out.node().get(), node.output).second)
    throw std::logic_error(model_ + ": " + node.op + " recorded a tensor that has a name");
  nodes_.push_back(std::move(node));
  return out;
}

const std::string &LayerBuilder::name_of(const Tensor &t) const {
  auto it = names_.find(t.node().get());
  if (it == names_.end()) throw std::logic_error(model_ + ": a layer's input is not in the graph");
  return it->second;
}

Model LayerBuilder::finish(const Tensor &y) {
  if (nodes_.empty() || name_of(y) != nodes_.back().output)
    throw std::logic_error(model_ + ": the output is not the last layer");
  nodes_.back().output = "Y";
  Model m;
  m.name = model_;
  m.input = input_;
  m.output = y;
  m.weights = std::move(weights_);
  m.sample_input = std::move(sample_input_);
  m.flops = flops_;
  m.graph_json = models::graph_json(model_, options_, flops_, input_, m.weights, nodes_);
  return m;
}

}  // namespace tessera::models
