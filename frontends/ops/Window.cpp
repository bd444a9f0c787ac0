#include "frontends/ops/Window.h"

#include <algorithm>

namespace tessera::ops {

DataFormat parse_data_format(const std::string &op, const std::string &name) {
  if (name == "channels_last") return DataFormat::ChannelsLast;
  if (name == "channels_first") return DataFormat::ChannelsFirst;
  throw EdslError(op + ": unknown data_format '" + name +
                  "' (expected 'channels_last' or 'channels_first')");
}

Padding parse_padding(const std::string &op, const std::string &name) {
  if (name == "valid") return Padding::valid();
  if (name == "same") return Padding::same();
  throw EdslError(op + ": unknown padding '" + name +
                  "' (expected 'valid', 'same' or a list of (before, after) pairs)");
}

std::string shape_string(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

IndexExpr window_access(const WindowAxis &axis, const TensorIndex &x, const TensorIndex &k) {
  IndexExpr e = axis.stride == 1 ? IndexExpr(x) : axis.stride * IndexExpr(x);
  e = e + (axis.dilation == 1 ? IndexExpr(k) : axis.dilation * IndexExpr(k));
  return axis.pad_before == 0 ? e : e - axis.pad_before;
}

std::vector<int64_t> per_axis(const std::string &op, const std::string &what,
                              const std::vector<int64_t> &values, size_t axes, int64_t fallback) {
  if (values.empty()) return std::vector<int64_t>(axes, fallback);
  if (values.size() != axes)
    throw EdslError(op + ": " + what + " has " + std::to_string(values.size()) +
                    " values but the input has " + std::to_string(axes) + " spatial dimensions");
  for (size_t i = 0; i < axes; ++i)
    if (values[i] <= 0)
      throw EdslError(op + ": " + what + "[" + std::to_string(i) + "] is " +
                      std::to_string(values[i]) + "; " + what + " must be positive");
  return values;
}

std::vector<WindowAxis> window_axes(const std::string &op, const std::string &window_name,
                                    const std::vector<int64_t> &in,
                                    const std::vector<int64_t> &window,
                                    const std::vector<int64_t> &strides,
                                    const std::vector<int64_t> &dilations, const Padding &padding) {
  size_t n = in.size();
  std::vector<int64_t> s = per_axis(op, "strides", strides, n, 1);
  std::vector<int64_t> d = per_axis(op, "dilation", dilations, n, 1);
  if (padding.mode == Padding::Mode::Explicit) {
    if (padding.pads.size() != 2 * n)
      throw EdslError(op + ": explicit padding has " + std::to_string(padding.pads.size()) +
                      " values; expected " + std::to_string(2 * n) +
                      " ((before, after) for each of " + std::to_string(n) +
                      " spatial dimensions)");
    for (size_t i = 0; i < padding.pads.size(); ++i)
      if (padding.pads[i] < 0)
        throw EdslError(op + ": padding[" + std::to_string(i) + "] is " +
                        std::to_string(padding.pads[i]) + "; padding must be non-negative");
  }
  std::vector<WindowAxis> axes(n);
  for (size_t i = 0; i < n; ++i) {
    WindowAxis &a = axes[i];
    a.in = in[i];
    a.window = window[i];
    a.stride = s[i];
    a.dilation = d[i];
    if (a.window <= 0)
      throw EdslError(op + ": " + window_name + " size " + std::to_string(a.window) +
                      " on spatial dimension " + std::to_string(i) + " must be positive");
    int64_t span = (a.window - 1) * a.dilation + 1;
    if (padding.mode == Padding::Mode::Same) {
      a.out = (a.in + a.stride - 1) / a.stride;
      int64_t total = std::max<int64_t>((a.out - 1) * a.stride + span - a.in, 0);
      a.pad_before = total / 2;
      a.pad_after = total - a.pad_before;
      continue;
    }
    if (padding.mode == Padding::Mode::Explicit) {
      a.pad_before = padding.pads[2 * i];
      a.pad_after = padding.pads[2 * i + 1];
    }
    int64_t padded = a.in + a.pad_before + a.pad_after;
    if (padded < span)
      throw EdslError(
          op + ": " + window_name + " spans " + std::to_string(span) + " on spatial dimension " +
          std::to_string(i) + " but the input has only " + std::to_string(a.in) +
          (padded == a.in ? "" : " (" + std::to_string(padded) + " padded)") + " with " +
          (padding.mode == Padding::Mode::Valid ? "'valid'" : "explicit") + " padding");
    a.out = (padded - span) / a.stride + 1;
  }
  return axes;
}

}  // namespace tessera::ops
