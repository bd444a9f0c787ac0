// MobileNetV2 (alpha 1.0) as keras.applications builds it: inverted residual blocks of a 1x1
// expansion, a 3x3 depthwise convolution and a linear 1x1 projection, relu6 throughout.
#include "bench/models/Layers.h"
#include "bench/models/Networks.h"

namespace tessera::models {

namespace {

Tensor conv_bn(LayerBuilder &b, const Tensor &x, const std::string &name, const ConvSpec &spec,
               double gamma = 1.0) {
  return b.batch_norm(b.conv2d(x, name, spec), name + "_bn", 1e-3, gamma);
}

/// Keras' _inverted_res_block. A stride-2 block pads as Keras' correct_pad does (TensorFlow's
/// 'same' split), so Pad::same() covers both strides.
Tensor inverted_res_block(LayerBuilder &b, const Tensor &x, int64_t in, int64_t filters,
                          int64_t stride, int64_t expansion, int block_id) {
  std::string name = block_id ? "block_" + std::to_string(block_id) : "expanded_conv";
  Tensor y = x;
  int64_t channels = x.shape()[3];
  if (block_id) {
    channels = b.width(expansion * in);
    y = b.relu6(conv_bn(b, y, name + "_expand", {.filters = channels}));
  }
  y = b.relu6(
      conv_bn(b, y, name + "_depthwise",
              {.kh = 3, .kw = 3, .filters = channels, .stride = stride, .groups = channels}));
  // On the full widths, so that the structure never changes. A residual branch ends in a small
  // gamma (LayerBuilder::batch_norm says why).
  bool residual = in == filters && stride == 1;
  y = conv_bn(b, y, name + "_project", {.filters = b.width(filters)}, residual ? 0.25 : 1.0);
  return residual ? b.add(x, y) : y;
}

}  // namespace

Model build_mobilenet_v2(const ModelOptions &options) {
  LayerBuilder b("mobilenet_v2", options);
  Tensor x = b.image_input(options.image_size ? options.image_size : 224);
  x = b.relu6(conv_bn(b, x, "Conv1", {.kh = 3, .kw = 3, .filters = b.width(32), .stride = 2}));
  struct Block {
    int64_t filters, stride, expansion;
  };
  const Block blocks[] = {{16, 1, 1}, {24, 2, 6},  {24, 1, 6},  {32, 2, 6},  {32, 1, 6}, {32, 1, 6},
                          {64, 2, 6}, {64, 1, 6},  {64, 1, 6},  {64, 1, 6},  {96, 1, 6}, {96, 1, 6},
                          {96, 1, 6}, {160, 2, 6}, {160, 1, 6}, {160, 1, 6}, {320, 1, 6}};
  int64_t in = 32;
  int block_id = 0;
  for (const Block &block : blocks) {
    x = inverted_res_block(b, x, in, block.filters, block.stride, block.expansion, block_id++);
    in = block.filters;
  }
  x = b.relu6(conv_bn(b, x, "Conv_1", {.filters = b.width(1280)}));
  x = b.global_avg_pool(x);
  return b.finish(b.softmax(b.dense(x, "predictions", 1000, true, 1.0)));
}

}  // namespace tessera::models
