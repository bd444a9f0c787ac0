// VGG-16 as keras.applications builds it: 13 3x3 convolutions with bias and relu in five blocks,
// each closed by a 2x2 max pool, then flatten and dense 4096, 4096, 1000.
#include "bench/models/Layers.h"
#include "bench/models/Networks.h"

namespace tessera::models {

Model build_vgg16(const ModelOptions &options) {
  LayerBuilder b("vgg16", options);
  Tensor x = b.image_input(options.image_size ? options.image_size : 224);
  struct Block {
    int64_t filters, convs;
  };
  const Block blocks[] = {{64, 2}, {128, 2}, {256, 3}, {512, 3}, {512, 3}};
  int index = 1;
  for (const Block &block : blocks) {
    std::string name = "block" + std::to_string(index++);
    for (int64_t i = 1; i <= block.convs; ++i)
      x = b.relu(b.conv2d(x, name + "_conv" + std::to_string(i),
                          {.kh = 3, .kw = 3, .filters = b.width(block.filters), .bias = true}));
    x = b.max_pool(x, 2, 2, Pad::valid());
  }
  x = b.flatten(x);
  x = b.relu(b.dense(x, "fc1", b.width(4096)));
  x = b.relu(b.dense(x, "fc2", b.width(4096)));
  return b.finish(b.softmax(b.dense(x, "predictions", 1000, true, 1.0)));
}

}  // namespace tessera::models
