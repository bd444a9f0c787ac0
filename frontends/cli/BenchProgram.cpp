#include "frontends/cli/BenchProgram.h"

#include <random>

#include "frontends/ops/Loss.h"
#include "frontends/ops/Reduce.h"
#include "tessera/gradient.h"

namespace tessera::cli {

namespace {

/// One-hot rows [B, classes] with a random class per row.
HostTensor one_hot_labels(int64_t batch, int64_t classes, uint64_t seed) {
  HostTensor labels(tile::TensorType{DType::Float32, {batch, classes}});
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, classes - 1);
  for (int64_t b = 0; b < batch; ++b) labels.set_double(b * classes + pick(rng), 1.0);
  return labels;
}

}  // namespace

BenchProgram bench_program(const models::Model &model, bool train, double learning_rate,
                           uint64_t seed) {
  BenchProgram p;
  p.inputs = model.weight_values();
  p.inputs.emplace(model.input.name(), model.sample_input);
  std::vector<Tensor> inputs = model.inputs();
  if (!train) {
    p.function = build({{"Y", model.output}}, inputs);
    p.result = "Y";
    return p;
  }

  const std::vector<int64_t> &shape = model.output.shape();
  Tensor loss;
  if (shape.size() != 2) {  // hidden states (bert_base), not class probabilities
    loss = ops::mean(model.output * model.output);
  } else {
    HostTensor labels = one_hot_labels(shape.front(), shape.back(), seed);
    Tensor target = Placeholder(DType::Float32, labels.shape(), "L");
    inputs.insert(inputs.begin() + 1, target);
    p.inputs.emplace("L", std::move(labels));
    loss = ops::mean(ops::categorical_crossentropy(target, model.output));
  }
  std::vector<Tensor> weights;
  for (const auto &w : model.weights) weights.push_back(w.placeholder);
  std::vector<Tensor> grads = gradient(loss, weights);

  std::vector<std::pair<std::string, Tensor>> outputs{{"loss", loss}};
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string &name = weights[i].name();
    outputs.emplace_back("next_" + name, weights[i] - learning_rate * grads[i]);
    p.updates.emplace("next_" + name, name);
  }
  p.function = build(outputs, inputs);
  p.result = "loss";
  return p;
}

}  // namespace tessera::cli
