#include "frontends/ops/Pool.h"

#include "frontends/ops/Conv.h"

namespace tessera::ops {

namespace pool_detail {

namespace {

// Accesses [n, spatial..., c] or [n, c, spatial...] from the spatial parts.
std::vector<IndexExpr> layout(DataFormat format, const IndexExpr &n, const IndexExpr &c,
                              const std::vector<IndexExpr> &spatial) {
  std::vector<IndexExpr> idx{n};
  if (format == DataFormat::ChannelsFirst) idx.push_back(c);
  idx.insert(idx.end(), spatial.begin(), spatial.end());
  if (format == DataFormat::ChannelsLast) idx.push_back(c);
  return idx;
}

// How many taps of each window are in range, as a tensor shaped like `sums` (or a number when
// every window lies inside the input). Separable: the product of per-axis counts, each
// min(start + window, in) - max(start, 0) with start = stride * x - pad_before.
Tensor in_range_count(const Tensor &sums, const std::vector<WindowAxis> &axes,
                      size_t first_spatial) {
  double full = 1;
  Tensor count;
  for (size_t i = 0; i < axes.size(); ++i) {
    const WindowAxis &a = axes[i];
    bool inside = a.pad_before == 0 && (a.out - 1) * a.stride + a.window <= a.in;
    if (inside) {
      full *= static_cast<double>(a.window);
      continue;
    }
    Tensor start = index(sums, static_cast<int>(first_spatial + i));
    if (a.stride != 1) start = start * a.stride;
    if (a.pad_before != 0) start = start - a.pad_before;
    Tensor taps = tessera::min(start + a.window, a.in) - tessera::max(start, 0);
    count = count.defined() ? count * taps : taps;
  }
  if (!count.defined()) return Tensor(full);
  return full == 1 ? cast(count, sums.dtype()) : cast(count, sums.dtype()) * full;
}

}  // namespace

Tensor pool(const std::string &op, size_t spatial, Kind kind, const Tensor &x,
            const PoolOptions &options) {
  size_t ns = conv_detail::spatial_rank(op, x, spatial);
  bool last = options.data_format == DataFormat::ChannelsLast;
  if (options.pool_size.empty()) throw EdslError(op + ": pool_size is required");
  std::vector<int64_t> window = per_axis(op, "pool_size", options.pool_size, ns, 1);
  std::vector<int64_t> strides = options.strides.empty() ? window : options.strides;
  size_t first_spatial = last ? 1 : 2;
  std::vector<int64_t> in(x.shape().begin() + first_spatial,
                          x.shape().begin() + first_spatial + ns);
  std::vector<WindowAxis> axes =
      window_axes(op, "pool window", in, window, strides, {}, options.padding);
  for (size_t i = 0; i < ns; ++i)
    if (axes[i].pad_before >= axes[i].window || axes[i].pad_after >= axes[i].window)
      throw EdslError(op + ": padding (" + std::to_string(axes[i].pad_before) + ", " +
                      std::to_string(axes[i].pad_after) + ") on spatial dimension " +
                      std::to_string(i) + " must be smaller than the pool window " +
                      std::to_string(axes[i].window));

  TensorIndex n("n"), c("c");
  std::vector<TensorIndex> o(ns), k(ns);
  std::vector<IndexExpr> out_sp, in_sp;
  std::vector<TensorDim> dims;
  for (size_t i = 0; i < ns; ++i) {
    out_sp.emplace_back(o[i]);
    in_sp.push_back(window_access(axes[i], o[i], k[i]));
  }
  int64_t C = x.shape()[last ? ns + 1 : 1];
  std::vector<int64_t> out_shape{x.shape()[0]};
  for (const auto &a : axes) out_shape.push_back(a.out);
  out_shape.insert(last ? out_shape.end() : out_shape.begin() + 1, C);
  for (int64_t d : out_shape) dims.emplace_back(d);

  Tensor out = TensorOutput(dims);
  if (kind == Kind::Max) {
    out(layout(options.data_format, n, c, out_sp)) >= x(layout(options.data_format, n, c, in_sp));
  } else {
    out(layout(options.data_format, n, c, out_sp)) += x(layout(options.data_format, n, c, in_sp));
  }
  // The accesses alone would let a tap run past its window into the next one.
  for (size_t i = 0; i < ns; ++i) out.add_constraint(IndexExpr(k[i]) < TensorDim(axes[i].window));
  if (kind == Kind::Max) return out;
  return out / in_range_count(out, axes, first_spatial);
}

Tensor global_pool(const std::string &op, Kind kind, const Tensor &x, bool keepdims,
                   DataFormat format) {
  size_t ns = conv_detail::spatial_rank(op, x, 0);
  size_t first_spatial = format == DataFormat::ChannelsLast ? 1 : 2;
  TensorIndex n("n"), c("c");
  std::vector<TensorIndex> s(ns);
  std::vector<IndexExpr> in_sp, out_sp;
  double taps = 1;
  for (size_t i = 0; i < ns; ++i) {
    in_sp.emplace_back(s[i]);
    out_sp.emplace_back(0);
    taps *= static_cast<double>(x.shape()[first_spatial + i]);
  }
  int64_t N = x.shape()[0], C = x.shape()[format == DataFormat::ChannelsLast ? ns + 1 : 1];
  std::vector<TensorDim> dims{N};
  if (format == DataFormat::ChannelsFirst) dims.emplace_back(C);
  if (keepdims) dims.insert(dims.end(), ns, TensorDim(1));
  if (format == DataFormat::ChannelsLast) dims.emplace_back(C);
  std::vector<IndexExpr> out_idx =
      keepdims ? layout(format, n, c, out_sp) : std::vector<IndexExpr>{n, c};

  Tensor out = TensorOutput(dims);
  if (kind == Kind::Max) {
    out(out_idx) >= x(layout(format, n, c, in_sp));
    return out;
  }
  out(out_idx) += x(layout(format, n, c, in_sp));
  return out / taps;
}

}  // namespace pool_detail

Tensor max_pool(const Tensor &x, const PoolOptions &options) {
  return pool_detail::pool("max_pool", 0, pool_detail::Kind::Max, x, options);
}
Tensor avg_pool(const Tensor &x, const PoolOptions &options) {
  return pool_detail::pool("avg_pool", 0, pool_detail::Kind::Avg, x, options);
}
Tensor global_max_pool(const Tensor &x, bool keepdims, DataFormat format) {
  return pool_detail::global_pool("global_max_pool", pool_detail::Kind::Max, x, keepdims, format);
}
Tensor global_avg_pool(const Tensor &x, bool keepdims, DataFormat format) {
  return pool_detail::global_pool("global_avg_pool", pool_detail::Kind::Avg, x, keepdims, format);
}

}  // namespace tessera::ops
