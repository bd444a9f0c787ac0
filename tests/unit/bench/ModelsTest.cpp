// The model zoo (bench/models): every model at a reduced size builds, its layer graph names
// exactly its inputs and weights and only uses the documented ops, and its program gives the same
// output on every compiled device as on interp. The full sizes are checked against the parameter
// counts keras.applications reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>

#include "backends/Registry.h"
#include "bench/models/Models.h"

namespace tessera::models {
namespace {

struct Case {
  std::string model;
  ModelOptions options;
  std::vector<int64_t> output_shape;
};

std::vector<Case> cases() {
  return {
      {"resnet50", {.batch = 2, .image_size = 32, .width_divisor = 16}, {2, 1000}},
      {"mobilenet_v2", {.batch = 2, .image_size = 32, .width_divisor = 8}, {2, 1000}},
      {"inception_v3", {.batch = 2, .image_size = 75, .width_divisor = 16}, {2, 1000}},
      {"vgg16", {.batch = 2, .image_size = 32, .width_divisor = 16}, {2, 1000}},
      {"bert_base", {.batch = 2, .seq_len = 8, .layers = 2, .width_divisor = 8}, {2, 8, 96}},
      {"small_resnet", {.batch = 2, .width_divisor = 8}, {2, 10}},
  };
}

// Test names and failures show the model, not Case's bytes.
void PrintTo(const Case &c, std::ostream *os) { *os << c.model; }

const std::set<std::string> kGraphOps = {
    "conv2d",     "batch_norm", "relu",      "relu6",    "gelu",
    "add",        "mul_scalar", "max_pool",  "avg_pool", "global_avg_pool",
    "concat",     "flatten",    "dense",     "softmax",  "gather",
    "layer_norm", "reshape",    "transpose", "matmul"};

std::vector<int64_t> shape_of(const nlohmann::json &j) { return j.get<std::vector<int64_t>>(); }

/// The graph's inputs are X and the weights, in order with their shapes; names are unique; each
/// node reads only names defined before it, and the last one writes Y.
void check_graph(const Model &m) {
  nlohmann::json g = nlohmann::json::parse(m.graph_json);
  EXPECT_EQ(g["model"], m.name);
  EXPECT_EQ(g["flops"].get<double>(), m.flops);
  ASSERT_EQ(g["inputs"].size(), 1u);
  EXPECT_EQ(g["inputs"][0]["name"], "X");
  EXPECT_EQ(shape_of(g["inputs"][0]["shape"]), m.input.shape());
  EXPECT_EQ(g["outputs"], nlohmann::json::array({"Y"}));
  ASSERT_EQ(g["weights"].size(), m.weights.size());
  std::set<std::string> defined{"X"}, unused;
  for (size_t i = 0; i < m.weights.size(); ++i) {
    const nlohmann::json &w = g["weights"][i];
    EXPECT_EQ(w["name"], m.weights[i].placeholder.name());
    EXPECT_EQ(shape_of(w["shape"]), m.weights[i].placeholder.shape());
    EXPECT_EQ(shape_of(w["shape"]), m.weights[i].value.shape());
    EXPECT_TRUE(defined.insert(w["name"]).second) << "two tensors named " << w["name"];
    unused.insert(w["name"]);
  }
  std::string last;
  for (const nlohmann::json &node : g["nodes"]) {
    EXPECT_TRUE(kGraphOps.count(node["op"])) << "undocumented op " << node["op"];
    EXPECT_TRUE(node["attrs"].is_object());
    for (const std::string input : node["inputs"]) {
      EXPECT_TRUE(defined.count(input)) << node["op"] << " reads " << input << " before it is set";
      unused.erase(input);
    }
    last = node["output"];
    EXPECT_TRUE(defined.insert(last).second) << "two tensors named " << last;
  }
  EXPECT_EQ(last, "Y");
  EXPECT_TRUE(unused.empty()) << "unused weight " << *unused.begin();
}

bool has_device(const std::string &name) {
  auto names = builtin_devices().names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

// With `constant_weights`, the weights are compiled in (inference: batch norm folded into the
// convolutions) and X is the run's only input.
HostTensor run(const Model &m, const std::string &device, bool constant_weights = false) {
  Function fn = build({{"Y", m.output}}, m.inputs());
  TensorMap in = m.weight_values();
  CompileOptions options;
  if (constant_weights) std::swap(options.constants, in);
  in["X"] = m.sample_input;
  return compile(fn, device, options)->run(in).at("Y");
}

void expect_near(const HostTensor &ref, const HostTensor &got, const std::string &device) {
  ASSERT_EQ(ref.type(), got.type()) << device;
  int mismatches = 0;
  for (int64_t i = 0; i < ref.elements() && mismatches < 5; ++i) {
    double a = ref.get_double(i), b = got.get_double(i);
    if (!(std::abs(a - b) <= 1e-3 * std::abs(a) + 1e-6)) {
      ++mismatches;
      ADD_FAILURE() << device << " differs from interp at " << i << ": " << b << " vs " << a;
    }
  }
}

/// Probabilities with real spread (not uniform, not NaN), or hidden states of order one.
void expect_plausible(const Case &c, const HostTensor &y) {
  int64_t last = y.shape().back(), rows = y.elements() / last;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0, max = 0, sum_sq = 0;
    for (int64_t i = 0; i < last; ++i) {
      double v = y.get_double(r * last + i);
      ASSERT_TRUE(std::isfinite(v)) << "row " << r;
      sum += v;
      sum_sq += v * v;
      max = std::max(max, v);
    }
    if (c.model == "bert_base") {  // layer-normed: mean ~beta, spread ~gamma
      EXPECT_GT(std::sqrt(sum_sq / double(last)), 0.5) << "row " << r;
      continue;
    }
    EXPECT_NEAR(sum, 1.0, 1e-4) << "row " << r;
    EXPECT_GT(max, 1.1 / double(last)) << "row " << r << ": probabilities without spread";
    EXPECT_LT(max, 0.99) << "row " << r << ": one-hot probabilities (exploding activations)";
  }
}

class ModelZoo : public ::testing::TestWithParam<Case> {};

TEST_P(ModelZoo, GraphMatchesAndDevicesAgreeWithInterp) {
  const Case &c = GetParam();
  Model m = build_model(c.model, c.options);
  EXPECT_EQ(m.name, c.model);
  EXPECT_EQ(m.output.shape(), c.output_shape);
  EXPECT_EQ(m.sample_input.type(), (tile::TensorType{m.input.dtype(), m.input.shape()}));
  EXPECT_GT(m.flops, 0);
  check_graph(m);

  HostTensor ref = run(m, "interp");
  EXPECT_EQ(ref.shape(), c.output_shape);
  expect_plausible(c, ref);
  // PoCL builds about a kernel a second even with a warm cache (mobilenet_v2 alone: 100 s cold,
  // 10 s warm): a CI run pays a few minutes for opencl:0, spread over ctest's two jobs.
  for (const std::string device : {"cpu", "vulkan:0", "opencl:0"}) {
    if (!has_device(device)) {
      std::cout << "no device " << device << " on this machine: skipped\n";
      continue;
    }
    auto start = std::chrono::steady_clock::now();
    expect_near(ref, run(m, device), device);
    expect_near(ref, run(m, device, true), device + " with constant weights");
    std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    std::cout << c.model << " on " << device << ": " << seconds.count() << " s\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Reduced, ModelZoo, ::testing::ValuesIn(cases()),
                         [](const auto &info) { return info.param.model; });

TEST(ModelZooTest, TheSameSeedGivesTheSameModel) {
  ModelOptions options{.batch = 1, .width_divisor = 8};
  Model a = build_model("small_resnet", options), b = build_model("small_resnet", options);
  EXPECT_EQ(a.graph_json, b.graph_json);
  ASSERT_EQ(a.weights.size(), b.weights.size());
  for (size_t i = 0; i < a.weights.size(); ++i)
    EXPECT_EQ(0, std::memcmp(a.weights[i].value.data(), b.weights[i].value.data(),
                             a.weights[i].value.bytes()));
  options.seed = 2;
  Model c = build_model("small_resnet", options);
  EXPECT_NE(0, std::memcmp(a.sample_input.data(), c.sample_input.data(), a.sample_input.bytes()));
}

int64_t parameters(const Model &m, const std::string &skip_suffix = "") {
  int64_t n = 0;
  for (const Weight &w : m.weights) {
    const std::string &name = w.placeholder.name();
    if (!skip_suffix.empty() && name.size() >= skip_suffix.size() &&
        name.compare(name.size() - skip_suffix.size(), skip_suffix.size(), skip_suffix) == 0)
      continue;
    n += w.value.elements();
  }
  return n;
}

// keras.applications' count_params() (batch-norm moving statistics included): the full-size
// structure is Keras'. inception_v3's batch norms have scale=False in Keras; ours keep a gamma.
TEST(ModelZooTest, FullSizeParameterCountsAreKeras) {
  EXPECT_EQ(parameters(build_model("resnet50")), 25636712);
  EXPECT_EQ(parameters(build_model("mobilenet_v2")), 3538984);
  EXPECT_EQ(parameters(build_model("inception_v3"), "_bn_gamma"), 23851784);
  EXPECT_EQ(parameters(build_model("vgg16")), 138357544);
  EXPECT_EQ(parameters(build_model("small_resnet")), 97402);  // Keras' model with 10 classes
}

TEST(ModelZooTest, UnknownModelNamesTheKnownOnes) {
  try {
    build_model("resnet51");
    FAIL() << "no error";
  } catch (const EdslError &e) {
    EXPECT_STREQ(e.what(), "unknown model 'resnet51' (known: resnet50, mobilenet_v2, "
                           "inception_v3, vgg16, bert_base, small_resnet)");
  }
}

TEST(ModelZooTest, AnImageTooSmallForTheNetworkIsAnError) {
  EXPECT_THROW(build_model("inception_v3", {.image_size = 74, .width_divisor = 16}), EdslError);
  EXPECT_THROW(build_model("vgg16", {.image_size = 16, .width_divisor = 16}), EdslError);
  try {
    build_model("inception_v3", {.image_size = 74, .width_divisor = 16});
  } catch (const EdslError &e) {
    EXPECT_NE(std::string(e.what()).find("inception_v3: the input is too small"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(build_model("resnet50", {.batch = 0}), EdslError);
  EXPECT_THROW(build_model("bert_base", {.width_divisor = 0}), EdslError);
}

}  // namespace
}  // namespace tessera::models
