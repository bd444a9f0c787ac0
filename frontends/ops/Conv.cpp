#include "frontends/ops/Conv.h"

namespace tessera::ops {

namespace conv_detail {

size_t spatial_rank(const std::string &op, const Tensor &input, size_t expected) {
  size_t rank = input.rank();
  if (expected != 0 && rank != expected + 2)
    throw EdslError(op + ": input must have rank " + std::to_string(expected + 2) + " (batch, " +
                    std::to_string(expected) + " spatial, channels), got rank " +
                    std::to_string(rank) + " " + shape_string(input.shape()));
  if (rank < 3)
    throw EdslError(op + ": input must have rank >= 3 (batch, spatial..., channels), got rank " +
                    std::to_string(rank));
  return rank - 2;
}

Tensor add_channel_bias(const std::string &op, const Tensor &out, const Tensor &bias,
                        DataFormat format) {
  if (!bias.defined()) return out;
  size_t channel_axis = format == DataFormat::ChannelsLast ? out.rank() - 1 : 1;
  int64_t channels = out.shape()[channel_axis];
  if (bias.shape() != std::vector<int64_t>{channels})
    throw EdslError(op + ": bias has shape " + shape_string(bias.shape()) + " but the output has " +
                    std::to_string(channels) + " channels");
  if (format == DataFormat::ChannelsLast) return out + bias;
  // [C] against [N, C, S...]: give the bias trailing unit dimensions so broadcasting lines it up.
  std::vector<int64_t> shape(out.rank() - 1, 1);
  shape[0] = channels;
  return out + reshape(bias, shape);
}

Tensor conv(const std::string &op, size_t spatial, const Tensor &input, const Tensor &kernel,
            const ConvOptions &options, const Tensor &bias) {
  size_t ns = spatial_rank(op, input, spatial);
  size_t rank = ns + 2;
  if (kernel.rank() != rank)
    throw EdslError(op + ": kernel has rank " + std::to_string(kernel.rank()) + " " +
                    shape_string(kernel.shape()) + " but the input has rank " +
                    std::to_string(rank));
  bool last = options.data_format == DataFormat::ChannelsLast;
  const auto &is = input.shape();
  const auto &ks = kernel.shape();
  // Axis positions of the two layouts (see Conv.h).
  size_t in_c = last ? rank - 1 : 1, in_s = last ? 1 : 2;
  size_t k_ci = last ? ns : 1, k_co = last ? ns + 1 : 0, k_s = last ? 0 : 2;
  int64_t G = options.groups, CI = is[in_c], CO = ks[k_co];
  if (G <= 0) throw EdslError(op + ": groups is " + std::to_string(G) + "; it must be positive");
  if (CI % G != 0)
    throw EdslError(op + ": groups (" + std::to_string(G) + ") does not divide the input's " +
                    std::to_string(CI) + " channels");
  if (CO % G != 0)
    throw EdslError(op + ": groups (" + std::to_string(G) + ") does not divide the kernel's " +
                    std::to_string(CO) + " output channels");
  int64_t CIg = CI / G, COg = CO / G;
  if (ks[k_ci] != CIg)
    throw EdslError(
        op + ": kernel " + shape_string(ks) + " has " + std::to_string(ks[k_ci]) +
        " input channels but the input has " + std::to_string(CI) +
        (G == 1 ? ""
                : " in " + std::to_string(G) + " groups (" + std::to_string(CIg) + " per group)"));

  std::vector<int64_t> in_sizes, window;
  for (size_t i = 0; i < ns; ++i) {
    in_sizes.push_back(is[in_s + i]);
    window.push_back(ks[k_s + i]);
  }
  std::vector<WindowAxis> axes = window_axes(op, "kernel", in_sizes, window, options.strides,
                                             options.dilations, options.padding);

  TensorIndex n("n"), ci("ci"), co("co"), g("g");
  std::vector<TensorIndex> x(ns), k(ns);
  std::vector<IndexExpr> out_sp, in_sp, k_sp;
  std::vector<TensorDim> out_sp_dims;
  for (size_t i = 0; i < ns; ++i) {
    const WindowAxis &a = axes[i];
    out_sp.emplace_back(x[i]);
    in_sp.push_back(window_access(a, x[i], k[i]));
    k_sp.emplace_back(k[i]);
    out_sp_dims.emplace_back(a.out);
  }
  // Grouped: output channel g * COg + co reads input channels g * CIg + ci. Plain convolutions keep
  // single-index channel accesses so later passes see the simplest form.
  IndexExpr out_c = G == 1 ? IndexExpr(co) : IndexExpr(g) * COg + co;
  IndexExpr in_ch = G == 1 ? IndexExpr(ci) : IndexExpr(g) * CIg + ci;

  std::vector<IndexExpr> out_idx{n}, in_idx{n}, k_idx;
  std::vector<TensorDim> out_dims{is[0]};
  auto add_channel = [](std::vector<IndexExpr> &idx, const IndexExpr &c,
                        std::vector<IndexExpr> &sp) {
    idx.push_back(c);
    idx.insert(idx.end(), sp.begin(), sp.end());
  };
  if (last) {
    out_idx.insert(out_idx.end(), out_sp.begin(), out_sp.end());
    out_idx.push_back(out_c);
    in_idx.insert(in_idx.end(), in_sp.begin(), in_sp.end());
    in_idx.push_back(in_ch);
    k_idx = k_sp;
    k_idx.emplace_back(ci);
    k_idx.push_back(out_c);
    out_dims.insert(out_dims.end(), out_sp_dims.begin(), out_sp_dims.end());
    out_dims.emplace_back(CO);
  } else {
    add_channel(out_idx, out_c, out_sp);
    add_channel(in_idx, in_ch, in_sp);
    k_idx = {out_c, IndexExpr(ci)};
    k_idx.insert(k_idx.end(), k_sp.begin(), k_sp.end());
    out_dims.emplace_back(CO);
    out_dims.insert(out_dims.end(), out_sp_dims.begin(), out_sp_dims.end());
  }
  Tensor out = TensorOutput(out_dims);
  out(out_idx) += input(in_idx) * kernel(k_idx);
  // co must stay inside its group; g is then bounded by the output channel access.
  if (G != 1) out.add_constraint(IndexExpr(co) < TensorDim(COg));
  return add_channel_bias(op, out, bias, options.data_format);
}

}  // namespace conv_detail

Tensor conv(const Tensor &input, const Tensor &kernel, const ConvOptions &options,
            const Tensor &bias) {
  return conv_detail::conv("conv", 0, input, kernel, options, bias);
}
Tensor conv1d(const Tensor &input, const Tensor &kernel, const ConvOptions &options,
              const Tensor &bias) {
  return conv_detail::conv("conv1d", 1, input, kernel, options, bias);
}
Tensor conv2d(const Tensor &input, const Tensor &kernel, const ConvOptions &options,
              const Tensor &bias) {
  return conv_detail::conv("conv2d", 2, input, kernel, options, bias);
}
Tensor conv3d(const Tensor &input, const Tensor &kernel, const ConvOptions &options,
              const Tensor &bias) {
  return conv_detail::conv("conv3d", 3, input, kernel, options, bias);
}

}  // namespace tessera::ops
