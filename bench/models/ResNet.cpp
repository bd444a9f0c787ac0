// ResNet-50 v1 as keras.applications builds it, and the demo's small ResNet
// (examples/keras/small_resnet.py).
#include "bench/models/Layers.h"
#include "bench/models/Networks.h"

namespace tessera::models {

namespace {

// keras.applications.resnet's batch-norm epsilon.
constexpr double kResNetEpsilon = 1.001e-5;

Tensor conv_bn(LayerBuilder &b, const Tensor &x, const std::string &name, const ConvSpec &spec,
               double gamma = 1.0) {
  return b.batch_norm(b.conv2d(x, name, spec), name + "_bn", kResNetEpsilon, gamma);
}

// The last batch norm of a residual branch (LayerBuilder::batch_norm says why).
constexpr double kBranchGamma = 0.25;

/// Keras' block1: 1x1 (with the stride), 3x3, 1x1 to 4 * filters, and a projection shortcut
/// when `project`, else the identity.
Tensor bottleneck(LayerBuilder &b, const Tensor &x, const std::string &name, int64_t filters,
                  int64_t stride, bool project) {
  Tensor shortcut = x;
  if (project)
    shortcut = conv_bn(b, x, name + "_0",
                       {.filters = b.width(4 * filters), .stride = stride, .bias = true});
  Tensor y = b.relu(
      conv_bn(b, x, name + "_1", {.filters = b.width(filters), .stride = stride, .bias = true}));
  y = b.relu(
      conv_bn(b, y, name + "_2", {.kh = 3, .kw = 3, .filters = b.width(filters), .bias = true}));
  y = conv_bn(b, y, name + "_3", {.filters = b.width(4 * filters), .bias = true}, kBranchGamma);
  return b.relu(b.add(shortcut, y));
}

/// small_resnet.py's residual_block: two 3x3 convs without bias; a 1x1 projection when the
/// stride or the width changes.
Tensor residual_block(LayerBuilder &b, const Tensor &x, const std::string &name, int64_t in,
                      int64_t filters, int64_t stride) {
  Tensor y =
      b.batch_norm(b.conv2d(x, name + "_conv1",
                            {.kh = 3, .kw = 3, .filters = b.width(filters), .stride = stride}),
                   name + "_bn1");
  y = b.relu(y);
  y = b.batch_norm(b.conv2d(y, name + "_conv2", {.kh = 3, .kw = 3, .filters = b.width(filters)}),
                   name + "_bn2", 1e-3, kBranchGamma);
  Tensor shortcut = x;
  if (stride != 1 || in != filters)  // on the full widths, so that the structure never changes
    shortcut =
        b.batch_norm(b.conv2d(x, name + "_proj", {.filters = b.width(filters), .stride = stride}),
                     name + "_proj_bn");
  return b.relu(b.add(y, shortcut));
}

}  // namespace

Model build_resnet50(const ModelOptions &options) {
  LayerBuilder b("resnet50", options);
  Tensor x = b.image_input(options.image_size ? options.image_size : 224);
  // ZeroPadding2D(3) + 7x7/2 conv, then ZeroPadding2D(1) + 3x3/2 max pool.
  x = b.relu(conv_bn(b, x, "conv1",
                     {.kh = 7,
                      .kw = 7,
                      .filters = b.width(64),
                      .stride = 2,
                      .pad = Pad::explicit_pads({3, 3, 3, 3}),
                      .bias = true}));
  x = b.max_pool(x, 3, 2, Pad::explicit_pads({1, 1, 1, 1}));
  const int64_t filters[] = {64, 128, 256, 512}, blocks[] = {3, 4, 6, 3};
  for (int stage = 0; stage < 4; ++stage)
    for (int64_t block = 0; block < blocks[stage]; ++block) {
      std::string name = "conv" + std::to_string(stage + 2) + "_block" + std::to_string(block + 1);
      int64_t stride = block == 0 && stage > 0 ? 2 : 1;
      x = bottleneck(b, x, name, filters[stage], stride, block == 0);
    }
  x = b.global_avg_pool(x);
  return b.finish(b.softmax(b.dense(x, "predictions", 1000, true, 1.0)));
}

Model build_small_resnet(const ModelOptions &options) {
  LayerBuilder b("small_resnet", options);
  Tensor x = b.image_input(options.image_size ? options.image_size : 32);
  x = b.relu(b.batch_norm(
      b.conv2d(x, "conv1", {.kh = 3, .kw = 3, .filters = b.width(16), .stride = 2}), "bn1"));
  int64_t in = 16;
  int index = 1;
  const std::pair<int64_t, int64_t> plan[] = {{16, 1}, {32, 2}, {32, 1}, {64, 2}};
  for (auto [filters, stride] : plan) {
    x = residual_block(b, x, "block" + std::to_string(index++), in, filters, stride);
    in = filters;
  }
  x = b.global_avg_pool(x);
  return b.finish(b.softmax(b.dense(x, "predictions", 10, true, 1.0)));
}

}  // namespace tessera::models
