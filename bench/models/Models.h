// The model zoo of `tessera bench` and bench/compare: whole networks written with the op library,
// NHWC, random weights drawn from a fixed seed. Each model is also recorded as a layer graph
// (docs/bench-models.md) from which bench/compare builds the same network, with the same weights,
// in the peer engines.
//
//   models::Model m = models::build_model("resnet50", {.batch = 8});
//   Function fn = build({{"Y", m.output}}, m.inputs());   // X first, then every weight
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/HostTensor.h"
#include "tessera/edsl.h"

namespace tessera::models {

struct ModelOptions {
  int64_t batch = 1;
  int64_t image_size = 0;     // 0: the model's own (224; 299 for inception_v3; 32 for small_resnet)
  int64_t seq_len = 0;        // bert_base: 0 = 128
  int64_t layers = 0;         // bert_base: encoder layers, 0 = 12 (tests use fewer)
  int64_t width_divisor = 1;  // every channel count and hidden size divided by it (tests: 8, 16)
  uint64_t seed = 1;          // the weights' and the sample input's seed
};

/// A weight: a placeholder and the values it is bound to.
struct Weight {
  Tensor placeholder;
  HostTensor value;
};

struct Model {
  std::string name;
  Tensor input;                 // placeholder "X": float32 NHWC images, or int32 [B, S] token ids
  Tensor output;                // the network's output ("Y" in programs and graphs)
  std::vector<Weight> weights;  // in creation order; names unique ("conv1_w", "conv1_bn_gamma")
  HostTensor sample_input;      // a valid input of X's type, drawn from the seed
  double flops = 0;             // one forward pass: 2 per multiply-add of conv2d, dense and matmul
  std::string graph_json;       // the layer graph (docs/bench-models.md)

  /// X, then every weight's placeholder: the order the program's inputs take.
  std::vector<Tensor> inputs() const;
  /// Every weight's value by its placeholder's name.
  TensorMap weight_values() const;
};

/// The zoo's names, in the order `tessera bench --help` lists them.
std::vector<std::string> model_names();

/// Builds a model; throws EdslError naming the known models for an unknown name, and for options
/// that make a layer empty (an image too small for the network's strides).
Model build_model(const std::string &name, const ModelOptions &options = {});

}  // namespace tessera::models
