// Convolutions of the op library: conv1d/2d/3d with strides, dilation, padding, groups and both
// data formats, and their transposes (Keras Conv*DTranspose).
//
// Kernel layouts:
//   channels_last  (input [N, S..., CI]):  kernel [K..., CI / groups, CO]   (Keras, TensorFlow)
//   channels_first (input [N, CI, S...]):  kernel [CO, CI / groups, K...]   (PyTorch)
//   transposed, either format:              kernel [K..., CO, CI]           (Keras Conv2DTranspose)
// Output channel co belongs to group co / (CO / groups); depthwise convolution is groups == CI with
// CO = CI * multiplier, output channel c * multiplier + m (Keras DepthwiseConv2D's order).
#pragma once

#include <cstdint>
#include <vector>

#include "frontends/ops/Window.h"
#include "tessera/edsl.h"

namespace tessera::ops {

struct ConvOptions {
  std::vector<int64_t> strides;    // one per spatial axis; empty = 1
  std::vector<int64_t> dilations;  // one per spatial axis; empty = 1
  Padding padding;  // valid, same (TensorFlow's split) or explicit (before, after) pairs
  int64_t groups = 1;
  DataFormat data_format = DataFormat::ChannelsLast;
};

/// A convolution of any spatial rank (input rank >= 3); `bias` [CO] is optional.
Tensor conv(const Tensor &input, const Tensor &kernel, const ConvOptions &options = {},
            const Tensor &bias = Tensor());
/// The same, checking that the input has 1, 2 or 3 spatial dimensions; errors name conv1d/2d/3d.
Tensor conv1d(const Tensor &input, const Tensor &kernel, const ConvOptions &options = {},
              const Tensor &bias = Tensor());
Tensor conv2d(const Tensor &input, const Tensor &kernel, const ConvOptions &options = {},
              const Tensor &bias = Tensor());
Tensor conv3d(const Tensor &input, const Tensor &kernel, const ConvOptions &options = {},
              const Tensor &bias = Tensor());

struct ConvTransposeOptions {
  std::vector<int64_t> strides;         // empty = 1
  std::vector<int64_t> dilations;       // empty = 1
  std::vector<int64_t> output_padding;  // empty = none (Keras' None); else each < its stride
  Padding padding;                      // valid or same only
  DataFormat data_format = DataFormat::ChannelsLast;
};

/// Keras Conv{1,2,3}DTranspose: the gradient of a convolution with respect to its input, written as
/// a contraction over the output with rational indices (no dilated copy of the input). Output size
/// per Keras' deconv_output_length; padding placed as TensorFlow's conv2d_transpose places it.
Tensor conv_transpose(const Tensor &input, const Tensor &kernel,
                      const ConvTransposeOptions &options = {}, const Tensor &bias = Tensor());
Tensor conv1d_transpose(const Tensor &input, const Tensor &kernel,
                        const ConvTransposeOptions &options = {}, const Tensor &bias = Tensor());
Tensor conv2d_transpose(const Tensor &input, const Tensor &kernel,
                        const ConvTransposeOptions &options = {}, const Tensor &bias = Tensor());
Tensor conv3d_transpose(const Tensor &input, const Tensor &kernel,
                        const ConvTransposeOptions &options = {}, const Tensor &bias = Tensor());

namespace conv_detail {
/// The implementations behind the names above; `spatial` 0 accepts any spatial rank.
Tensor conv(const std::string &op, size_t spatial, const Tensor &input, const Tensor &kernel,
            const ConvOptions &options, const Tensor &bias);
Tensor conv_transpose(const std::string &op, size_t spatial, const Tensor &input,
                      const Tensor &kernel, const ConvTransposeOptions &options,
                      const Tensor &bias);
/// Adds a per-channel bias [C] to `out` in `format`; checks its shape.
Tensor add_channel_bias(const std::string &op, const Tensor &out, const Tensor &bias,
                        DataFormat format);
/// Checks the input's rank; returns its number of spatial dimensions.
size_t spatial_rank(const std::string &op, const Tensor &input, size_t expected);
}  // namespace conv_detail

}  // namespace tessera::ops
