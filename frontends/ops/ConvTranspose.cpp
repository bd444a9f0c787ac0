// Transposed convolutions (Keras Conv{1,2,3}DTranspose), declared in Conv.h.
#include <algorithm>
#include <optional>

#include "frontends/ops/Conv.h"

namespace tessera::ops {

namespace conv_detail {

namespace {

// Output size and leading padding of one axis. The size is Keras' deconv_output_length; the padding
// is what TensorFlow's conv2d_transpose derives from that size (the forward convolution's padding).
WindowAxis transpose_axis(const std::string &op, size_t axis, int64_t in, int64_t window,
                          int64_t stride, int64_t dilation, std::optional<int64_t> output_padding,
                          bool same) {
  WindowAxis a;
  a.in = in;
  a.window = window;
  a.stride = stride;
  a.dilation = dilation;
  int64_t span = (window - 1) * dilation + 1;
  if (!output_padding) {
    a.out = same ? in * stride : in * stride + std::max<int64_t>(span - stride, 0);
  } else {
    int64_t p = *output_padding;
    if (p < 0 || p >= stride)
      throw EdslError(op + ": output_padding[" + std::to_string(axis) + "] is " +
                      std::to_string(p) + "; it must be non-negative and smaller than the stride " +
                      std::to_string(stride));
    int64_t pad = same ? span / 2 : 0;
    a.out = (in - 1) * stride + span - 2 * pad + p;
  }
  a.pad_before = same ? std::max<int64_t>((in - 1) * stride + span - a.out, 0) / 2 : 0;
  return a;
}

}  // namespace

Tensor conv_transpose(const std::string &op, size_t spatial, const Tensor &input,
                      const Tensor &kernel, const ConvTransposeOptions &options,
                      const Tensor &bias) {
  size_t ns = spatial_rank(op, input, spatial);
  size_t rank = ns + 2;
  if (kernel.rank() != rank)
    throw EdslError(op + ": kernel has rank " + std::to_string(kernel.rank()) + " " +
                    shape_string(kernel.shape()) + " but the input has rank " +
                    std::to_string(rank));
  if (options.padding.mode == Padding::Mode::Explicit)
    throw EdslError(op + ": padding must be 'valid' or 'same'; explicit padding is not supported");
  bool last = options.data_format == DataFormat::ChannelsLast;
  const auto &is = input.shape();
  const auto &ks = kernel.shape();
  size_t in_c = last ? rank - 1 : 1, in_s = last ? 1 : 2;
  int64_t CI = is[in_c], CO = ks[ns];
  if (ks[ns + 1] != CI)
    throw EdslError(op + ": kernel " + shape_string(ks) + " has " + std::to_string(ks[ns + 1]) +
                    " input channels (its last axis) but the input has " + std::to_string(CI));
  std::vector<int64_t> strides = per_axis(op, "strides", options.strides, ns, 1);
  std::vector<int64_t> dilations = per_axis(op, "dilation", options.dilations, ns, 1);
  if (!options.output_padding.empty() && options.output_padding.size() != ns)
    throw EdslError(op + ": output_padding has " + std::to_string(options.output_padding.size()) +
                    " values but the input has " + std::to_string(ns) + " spatial dimensions");
  for (size_t i = 0; i < ns; ++i)
    if (ks[i] <= 0)
      throw EdslError(op + ": kernel size " + std::to_string(ks[i]) + " on spatial dimension " +
                      std::to_string(i) + " must be positive");

  TensorIndex n("n"), ci("ci"), co("co");
  std::vector<TensorIndex> y(ns), k(ns);
  std::vector<IndexExpr> out_sp, in_sp, k_idx;
  std::vector<TensorDim> out_sp_dims;
  for (size_t i = 0; i < ns; ++i) {
    std::optional<int64_t> op_pad;
    if (!options.output_padding.empty()) op_pad = options.output_padding[i];
    WindowAxis a = transpose_axis(op, i, is[in_s + i], ks[i], strides[i], dilations[i], op_pad,
                                  options.padding.mode == Padding::Mode::Same);
    // Output y gathers input x where y = stride * x + dilation * k - pad: x = (y + pad - dilation *
    // k) / stride, a rational index that is valid only where it is an integer.
    out_sp.emplace_back(y[i]);
    IndexExpr x =
        IndexExpr(y[i]) - (a.dilation == 1 ? IndexExpr(k[i]) : a.dilation * IndexExpr(k[i]));
    if (a.pad_before != 0) x = x + a.pad_before;
    in_sp.push_back(a.stride == 1 ? x : x / a.stride);
    k_idx.emplace_back(k[i]);
    out_sp_dims.emplace_back(a.out);
  }
  k_idx.emplace_back(co);
  k_idx.emplace_back(ci);

  std::vector<IndexExpr> out_idx{n}, in_idx{n};
  std::vector<TensorDim> out_dims{is[0]};
  if (!last) {
    out_idx.emplace_back(co);
    in_idx.emplace_back(ci);
    out_dims.emplace_back(CO);
  }
  out_idx.insert(out_idx.end(), out_sp.begin(), out_sp.end());
  in_idx.insert(in_idx.end(), in_sp.begin(), in_sp.end());
  out_dims.insert(out_dims.end(), out_sp_dims.begin(), out_sp_dims.end());
  if (last) {
    out_idx.emplace_back(co);
    in_idx.emplace_back(ci);
    out_dims.emplace_back(CO);
  }
  Tensor out = TensorOutput(out_dims);
  out(out_idx) += input(in_idx) * kernel(k_idx);
  return add_channel_bias(op, out, bias, options.data_format);
}

}  // namespace conv_detail

Tensor conv_transpose(const Tensor &input, const Tensor &kernel,
                      const ConvTransposeOptions &options, const Tensor &bias) {
  return conv_detail::conv_transpose("conv_transpose", 0, input, kernel, options, bias);
}
Tensor conv1d_transpose(const Tensor &input, const Tensor &kernel,
                        const ConvTransposeOptions &options, const Tensor &bias) {
  return conv_detail::conv_transpose("conv1d_transpose", 1, input, kernel, options, bias);
}
Tensor conv2d_transpose(const Tensor &input, const Tensor &kernel,
                        const ConvTransposeOptions &options, const Tensor &bias) {
  return conv_detail::conv_transpose("conv2d_transpose", 2, input, kernel, options, bias);
}
Tensor conv3d_transpose(const Tensor &input, const Tensor &kernel,
                        const ConvTransposeOptions &options, const Tensor &bias) {
  return conv_detail::conv_transpose("conv3d_transpose", 3, input, kernel, options, bias);
}

}  // namespace tessera::ops
