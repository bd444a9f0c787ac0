// The builder every model of the zoo is written with: each call creates the layer's weights (named,
// drawn from the seed), applies the op library and records the layer as a node of the layer graph
// (docs/bench-models.md), so that the program and the graph cannot drift apart.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "bench/models/Models.h"
#include "tessera/ops.h"

namespace tessera::models {

/// How a window op pads: TensorFlow's 'valid' or 'same' (the smaller half before), or explicit
/// [top, bottom, left, right] pads (Keras' ZeroPadding2D in front of a 'valid' layer).
struct Pad {
  enum class Mode { Valid, Same, Explicit };
  Mode mode = Mode::Same;
  std::vector<int64_t> pads;
  static Pad valid() { return {Mode::Valid, {}}; }
  static Pad same() { return {Mode::Same, {}}; }
  static Pad explicit_pads(std::vector<int64_t> pads) { return {Mode::Explicit, std::move(pads)}; }
};

/// A conv2d layer: HWIO kernel [kh, kw, CI / groups, filters].
struct ConvSpec {
  int64_t kh = 1, kw = 1, filters = 1;
  int64_t stride = 1;
  Pad pad = Pad::same();
  int64_t groups = 1;  // CI: depthwise
  bool bias = false;
};

/// A node of the layer graph: op, input and output tensor names, attributes.
struct GraphNode {
  std::string op;
  std::vector<std::string> inputs;
  std::string output;
  std::vector<std::pair<std::string, OpAttr>> attrs;
};

class LayerBuilder {
 public:
  LayerBuilder(std::string model, const ModelOptions &options);

  const ModelOptions &options() const { return options_; }
  /// A channel count or hidden size divided by options.width_divisor, never below 1.
  int64_t width(int64_t full) const;

  /// The input placeholder "X": float32 NHWC images [batch, size, size, 3] with a standard normal
  /// sample, or int32 token ids [batch, seq] with a sample uniform in [0, vocab).
  Tensor image_input(int64_t size);
  Tensor token_input(int64_t seq, int64_t vocab);

  /// A weight placeholder `name` (unique) with values drawn from the seed.
  Tensor normal_weight(const std::string &name, const std::vector<int64_t> &shape, double mean,
                       double stddev);
  Tensor uniform_weight(const std::string &name, const std::vector<int64_t> &shape, double lo,
                        double hi);

  // Layers with weights; `name` prefixes the weights' names ("conv1" -> "conv1_w", "conv1_b").
  Tensor conv2d(const Tensor &x, const std::string &name, const ConvSpec &spec);
  /// Batch norm with gamma near `gamma` (uniform within 20%), beta and mean near 0, variance
  /// near 1. The statistics are not the data's, so a batch norm does not renormalize: the last
  /// one of a residual branch takes a small gamma (0.25), else every residual add would double the
  /// variance (2^16 through ResNet-50's blocks, and one-hot probabilities).
  Tensor batch_norm(const Tensor &x, const std::string &name, double epsilon = 1e-3,
                    double gamma = 1.0);
  /// Weights normal with variance gain / IN: 2 (He) before a relu or gelu, 1 for logits.
  Tensor dense(const Tensor &x, const std::string &name, int64_t units, bool bias = true,
               double gain = 2.0);
  Tensor layer_norm(const Tensor &x, const std::string &name, double epsilon);
  /// Rows of `table` for the ids.
  Tensor gather(const Tensor &table, const Tensor &ids);

  // Layers without weights.
  Tensor relu(const Tensor &x);
  Tensor relu6(const Tensor &x);
  Tensor gelu(const Tensor &x);  // the exact (erf) form
  Tensor add(const Tensor &a, const Tensor &b);
  Tensor mul_scalar(const Tensor &x, double value);
  Tensor max_pool(const Tensor &x, int64_t size, int64_t stride, const Pad &pad);
  /// Average over the window's in-range taps (padding not counted).
  Tensor avg_pool(const Tensor &x, int64_t size, int64_t stride, const Pad &pad);
  Tensor global_avg_pool(const Tensor &x);
  Tensor concat(const std::vector<Tensor> &xs, int64_t axis = -1);
  Tensor flatten(const Tensor &x);
  Tensor softmax(const Tensor &x, int64_t axis = -1);
  Tensor reshape(const Tensor &x, const std::vector<int64_t> &shape);
  Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm);
  Tensor matmul(const Tensor &a, const Tensor &b);

  /// The model whose output is `y` (the last layer recorded, renamed "Y" in the graph).
  Model finish(const Tensor &y);

 private:
  /// [top, bottom, left, right] for a window on the image x.
  std::vector<int64_t> resolve_pads(const Tensor &x, int64_t kh, int64_t kw, int64_t stride,
                                    const Pad &pad) const;
  Tensor pool(const std::string &op, const Tensor &x, int64_t size, int64_t stride, const Pad &pad);
  /// Records the node computing `out` and names `out` ("t0", "t1", ...).
  Tensor record(const Tensor &out, std::string op, const std::vector<Tensor> &inputs,
                std::vector<std::pair<std::string, OpAttr>> attrs = {});
  const std::string &name_of(const Tensor &t) const;
  Tensor add_weight(const std::string &name, HostTensor value);

  std::string model_;
  ModelOptions options_;
  std::mt19937_64 rng_;
  Tensor input_;
  HostTensor sample_input_;
  std::vector<Weight> weights_;
  std::set<std::string> weight_names_;
  std::vector<GraphNode> nodes_;
  std::map<const void *, std::string> names_;  // tensor node -> graph name; lookups only
  double flops_ = 0;
};

/// The layer graph as JSON (docs/bench-models.md).
std::string graph_json(const std::string &model, const ModelOptions &options, double flops,
                       const Tensor &input, const std::vector<Weight> &weights,
                       const std::vector<GraphNode> &nodes);

}  // namespace tessera::models
