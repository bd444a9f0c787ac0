#include "bench/models/Models.h"

#include "bench/models/Networks.h"

namespace tessera::models {

namespace {

struct Entry {
  const char *name;
  Model (*build)(const ModelOptions &);
};

const Entry kZoo[] = {
    {"resnet50", build_resnet50},         {"mobilenet_v2", build_mobilenet_v2},
    {"inception_v3", build_inception_v3}, {"vgg16", build_vgg16},
    {"bert_base", build_bert_base},       {"small_resnet", build_small_resnet},
};

void check_options(const std::string &name, const ModelOptions &options) {
  auto positive = [&](const char *what, int64_t value, bool zero_ok) {
    if (value < 0 || (value == 0 && !zero_ok))
      throw EdslError(name + ": " + what + " must be " + (zero_ok ? "0 or " : "") +
                      "positive, got " + std::to_string(value));
  };
  positive("batch", options.batch, false);
  positive("image_size", options.image_size, true);
  positive("seq_len", options.seq_len, true);
  positive("layers", options.layers, true);
  positive("width_divisor", options.width_divisor, false);
}

}  // namespace

std::vector<Tensor> Model::inputs() const {
  std::vector<Tensor> all{input};
  for (const Weight &w : weights) all.push_back(w.placeholder);
  return all;
}

TensorMap Model::weight_values() const {
  TensorMap values;
  for (const Weight &w : weights) values[w.placeholder.name()] = w.value;
  return values;
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const Entry &e : kZoo) names.push_back(e.name);
  return names;
}

Model build_model(const std::string &name, const ModelOptions &options) {
  for (const Entry &e : kZoo) {
    if (name != e.name) continue;
    check_options(name, options);
    try {
      return e.build(options);
    } catch (const EdslError &error) {
      // A window that no longer fits: the op names itself; the image size is the cause.
      throw EdslError(name + ": the input is too small for the network (" + error.what() + ")");
    }
  }
  std::string known;
  for (const Entry &e : kZoo) known += std::string(known.empty() ? "" : ", ") + e.name;
  throw EdslError("unknown model '" + name + "' (known: " + known + ")");
}

}  // namespace tessera::models
