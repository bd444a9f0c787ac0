// Sliding-window geometry shared by convolution and pooling: padding modes, data formats, output
// sizes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

/// Where the channels are: channels_last is [N, spatial..., C] (Keras' default, NHWC);
/// channels_first is [N, C, spatial...] (PyTorch's NCHW).
enum class DataFormat { ChannelsLast, ChannelsFirst };

/// Throws EdslError "<op>: unknown data_format 'x'" for anything but the two Keras names.
DataFormat parse_data_format(const std::string &op, const std::string &name);

/// How a window op pads its input. Padding is an index shift: taps that fall outside the input
/// are not valid points of the contraction, so nothing is copied.
struct Padding {
  enum class Mode { Valid, Same, Explicit };
  Mode mode = Mode::Valid;
  std::vector<int64_t> pads;  // Explicit only: (before, after) per spatial axis, flattened

  static Padding valid() { return {}; }
  static Padding same() { return {Mode::Same, {}}; }
  static Padding explicit_pads(std::vector<int64_t> pads) {
    return {Mode::Explicit, std::move(pads)};
  }
};

/// "valid" or "same"; throws EdslError "<op>: unknown padding 'x'" otherwise.
Padding parse_padding(const std::string &op, const std::string &name);

/// One spatial axis of a window op: output position x reads input position
/// stride * x + dilation * k - pad_before for window tap k in [0, window).
struct WindowAxis {
  int64_t in = 0, window = 0, stride = 1, dilation = 1, pad_before = 0, pad_after = 0, out = 0;
};

/// The input position `stride * x + dilation * k - pad_before` read by output x at tap k, without
/// unit factors or zero offsets so the Tile stays as one would write it.
IndexExpr window_access(const WindowAxis &axis, const TensorIndex &x, const TensorIndex &k);

/// One value per spatial axis: empty gives `fallback` on every axis. Throws EdslError when the list
/// has the wrong length or a value is not positive ("conv2d: strides has 3 values ...").
std::vector<int64_t> per_axis(const std::string &op, const std::string &what,
                              const std::vector<int64_t> &values, size_t axes, int64_t fallback);

/// The geometry of every spatial axis. 'same' follows TensorFlow: out = ceil(in / stride) and the
/// padding total max((out - 1) * stride + (window - 1) * dilation + 1 - in, 0) is split with the
/// smaller half before. 'valid' and explicit padding give floor((in + pads - span) / stride) + 1
/// and throw when the dilated window does not fit. `window_name` names the window in messages.
std::vector<WindowAxis> window_axes(const std::string &op, const std::string &window_name,
                                    const std::vector<int64_t> &in,
                                    const std::vector<int64_t> &window,
                                    const std::vector<int64_t> &strides,
                                    const std::vector<int64_t> &dilations, const Padding &padding);

/// "[1, 2, 3]", for messages.
std::string shape_string(const std::vector<int64_t> &shape);

}  // namespace tessera::ops
