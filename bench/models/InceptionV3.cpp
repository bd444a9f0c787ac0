// Inception v3 as keras.applications builds it (299x299; 75x75 is the smallest input).
#include "bench/models/Layers.h"
#include "bench/models/Networks.h"

namespace tessera::models {

namespace {

/// Keras' conv2d_bn: a convolution without bias, batch norm and relu. Keras' batch norm has
/// scale=False there; ours keeps a gamma weight (near 1) so that every batch norm looks the same.
class InceptionBuilder {
 public:
  explicit InceptionBuilder(LayerBuilder &b) : b_(b) {}

  Tensor conv_bn(const Tensor &x, int64_t filters, int64_t kh, int64_t kw, int64_t stride = 1,
                 Pad pad = Pad::same()) {
    std::string name = "conv2d_" + std::to_string(++count_);
    Tensor y = b_.conv2d(x, name,
                         {.kh = kh,
                          .kw = kw,
                          .filters = b_.width(filters),
                          .stride = stride,
                          .pad = std::move(pad)});
    return b_.relu(b_.batch_norm(y, name + "_bn"));
  }
  /// AveragePooling2D((3, 3), strides=(1, 1), padding='same'): padding not counted.
  Tensor avg_pool_same(const Tensor &x) { return b_.avg_pool(x, 3, 1, Pad::same()); }
  Tensor max_pool(const Tensor &x) { return b_.max_pool(x, 3, 2, Pad::valid()); }
  Tensor concat(const std::vector<Tensor> &xs) { return b_.concat(xs, -1); }

 private:
  LayerBuilder &b_;
  int count_ = 0;
};

Tensor mixed_35(InceptionBuilder &n, const Tensor &x, int64_t pool_filters) {
  Tensor branch1x1 = n.conv_bn(x, 64, 1, 1);
  Tensor branch5x5 = n.conv_bn(n.conv_bn(x, 48, 1, 1), 64, 5, 5);
  Tensor branch3x3dbl = n.conv_bn(n.conv_bn(n.conv_bn(x, 64, 1, 1), 96, 3, 3), 96, 3, 3);
  Tensor branch_pool = n.conv_bn(n.avg_pool_same(x), pool_filters, 1, 1);
  return n.concat({branch1x1, branch5x5, branch3x3dbl, branch_pool});
}

Tensor mixed_17(InceptionBuilder &n, const Tensor &x, int64_t f) {
  Tensor branch1x1 = n.conv_bn(x, 192, 1, 1);
  Tensor branch7x7 = n.conv_bn(x, f, 1, 1);
  branch7x7 = n.conv_bn(branch7x7, f, 1, 7);
  branch7x7 = n.conv_bn(branch7x7, 192, 7, 1);
  Tensor branch7x7dbl = n.conv_bn(x, f, 1, 1);
  branch7x7dbl = n.conv_bn(branch7x7dbl, f, 7, 1);
  branch7x7dbl = n.conv_bn(branch7x7dbl, f, 1, 7);
  branch7x7dbl = n.conv_bn(branch7x7dbl, f, 7, 1);
  branch7x7dbl = n.conv_bn(branch7x7dbl, 192, 1, 7);
  Tensor branch_pool = n.conv_bn(n.avg_pool_same(x), 192, 1, 1);
  return n.concat({branch1x1, branch7x7, branch7x7dbl, branch_pool});
}

Tensor mixed_8x8(InceptionBuilder &n, const Tensor &x) {
  Tensor branch1x1 = n.conv_bn(x, 320, 1, 1);
  Tensor branch3x3 = n.conv_bn(x, 384, 1, 1);
  branch3x3 = n.concat({n.conv_bn(branch3x3, 384, 1, 3), n.conv_bn(branch3x3, 384, 3, 1)});
  Tensor branch3x3dbl = n.conv_bn(n.conv_bn(x, 448, 1, 1), 384, 3, 3);
  branch3x3dbl = n.concat({n.conv_bn(branch3x3dbl, 384, 1, 3), n.conv_bn(branch3x3dbl, 384, 3, 1)});
  Tensor branch_pool = n.conv_bn(n.avg_pool_same(x), 192, 1, 1);
  return n.concat({branch1x1, branch3x3, branch3x3dbl, branch_pool});
}

}  // namespace

Model build_inception_v3(const ModelOptions &options) {
  LayerBuilder b("inception_v3", options);
  InceptionBuilder n(b);
  Tensor x = b.image_input(options.image_size ? options.image_size : 299);
  x = n.conv_bn(x, 32, 3, 3, 2, Pad::valid());
  x = n.conv_bn(x, 32, 3, 3, 1, Pad::valid());
  x = n.conv_bn(x, 64, 3, 3);
  x = n.max_pool(x);
  x = n.conv_bn(x, 80, 1, 1, 1, Pad::valid());
  x = n.conv_bn(x, 192, 3, 3, 1, Pad::valid());
  x = n.max_pool(x);

  x = mixed_35(n, x, 32);  // mixed0
  x = mixed_35(n, x, 64);  // mixed1
  x = mixed_35(n, x, 64);  // mixed2

  // mixed3: 35 -> 17
  Tensor branch3x3 = n.conv_bn(x, 384, 3, 3, 2, Pad::valid());
  Tensor branch3x3dbl = n.conv_bn(n.conv_bn(x, 64, 1, 1), 96, 3, 3);
  branch3x3dbl = n.conv_bn(branch3x3dbl, 96, 3, 3, 2, Pad::valid());
  x = n.concat({branch3x3, branch3x3dbl, n.max_pool(x)});

  x = mixed_17(n, x, 128);  // mixed4
  x = mixed_17(n, x, 160);  // mixed5
  x = mixed_17(n, x, 160);  // mixed6
  x = mixed_17(n, x, 192);  // mixed7

  // mixed8: 17 -> 8
  Tensor branch3x3_8 = n.conv_bn(n.conv_bn(x, 192, 1, 1), 320, 3, 3, 2, Pad::valid());
  Tensor branch7x7x3 = n.conv_bn(x, 192, 1, 1);
  branch7x7x3 = n.conv_bn(branch7x7x3, 192, 1, 7);
  branch7x7x3 = n.conv_bn(branch7x7x3, 192, 7, 1);
  branch7x7x3 = n.conv_bn(branch7x7x3, 192, 3, 3, 2, Pad::valid());
  x = n.concat({branch3x3_8, branch7x7x3, n.max_pool(x)});

  x = mixed_8x8(n, x);  // mixed9
  x = mixed_8x8(n, x);  // mixed10
  x = b.global_avg_pool(x);
  return b.finish(b.softmax(b.dense(x, "predictions", 1000, true, 1.0)));
}

}  // namespace tessera::models
