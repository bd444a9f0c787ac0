// The zoo's networks, one builder each (ResNet.cpp, MobileNetV2.cpp, ...); build_model (Models.cpp)
// dispatches on the name and checks the options first.
#pragma once

#include "bench/models/Models.h"

namespace tessera::models {

Model build_resnet50(const ModelOptions &options);
Model build_small_resnet(const ModelOptions &options);
Model build_mobilenet_v2(const ModelOptions &options);
Model build_inception_v3(const ModelOptions &options);
Model build_vgg16(const ModelOptions &options);
Model build_bert_base(const ModelOptions &options);

}  // namespace tessera::models
