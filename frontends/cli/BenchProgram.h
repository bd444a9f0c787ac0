// The program `tessera bench` times for a zoo model: its forward pass, or a training step
// (forward, gradient from autodiff, SGD update of every weight), with the values of its inputs.
#pragma once

#include <map>
#include <string>

#include "bench/models/Models.h"
#include "runtime/HostTensor.h"
#include "tessera/edsl.h"

namespace tessera::cli {

struct BenchProgram {
  Function function;
  TensorMap inputs;  // X (the model's sample), L (training labels) and every weight
  /// Training: output "next_W" → input "W", written in place so that the weights stay on the
  /// device from step to step.
  std::map<std::string, std::string> updates;
  std::string result;  // the output read back after each pass: "Y", or "loss" when training
};

/// Inference: `Y = model(X)`. Training: `loss` = mean crossentropy of the probabilities against
/// one-hot labels L drawn from `seed` (a model without a classifier, bert_base: the mean square of
/// its outputs), and `next_W = W - learning_rate * dloss/dW` for every weight W.
BenchProgram bench_program(const models::Model &model, bool train, double learning_rate,
                           uint64_t seed);

}  // namespace tessera::cli
