// Normalizations built from the reductions and broadcasting elementwise arithmetic.
#include "frontends/ops/Normalize.h"

#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Library.h"
#include "frontends/ops/Reduce.h"

namespace tessera::ops {

Tensor softmax(const Tensor &x, const std::vector<int64_t> &axes) {
  normalize_axes("softmax", axes, x.rank());
  Tensor e = exp(x - max(x, axes, true));
  return e / sum(e, axes, true);
}

Tensor log_softmax(const Tensor &x, const std::vector<int64_t> &axes) {
  normalize_axes("log_softmax", axes, x.rank());
  Tensor shifted = x - max(x, axes, true);
  return shifted - log(sum(exp(shifted), axes, true));
}

namespace {

// A parameter broadcast against x: `param` has either `compact` (the sizes on the normalized
// axes) or x's rank with those sizes on `axes` and 1 elsewhere; returns the latter.
Tensor broadcastable(const std::string &op, const std::string &what, const Tensor &param,
                     const Tensor &x, const std::vector<size_t> &axes) {
  std::vector<int64_t> compact, full(x.rank(), 1);
  for (size_t a : axes) {
    compact.push_back(x.shape()[a]);
    full[a] = x.shape()[a];
  }
  if (param.shape() == full) return param;
  if (param.shape() == compact) return reshape(param, full);
  std::string axes_text;
  for (size_t i = 0; i < axes.size(); ++i) axes_text += (i ? ", " : "") + std::to_string(axes[i]);
  throw EdslError(op + ": " + what + " has shape " + shape_text(param.shape()) + " but x " +
                  shape_text(x.shape()) + " needs " + shape_text(compact) + " (x's sizes on axis " +
                  axes_text + ")");
}

}  // namespace

Tensor batch_norm(const Tensor &x, const Tensor &mean, const Tensor &variance, const Tensor &beta,
                  const Tensor &gamma, double epsilon, int64_t axis) {
  if (epsilon < 0) throw EdslError("batch_norm: epsilon must not be negative");
  std::vector<size_t> axes = normalize_axes("batch_norm", {axis}, x.rank());
  // One statement each, so that the parameters are checked in order.
  Tensor m = broadcastable("batch_norm", "mean", mean, x, axes);
  Tensor v = broadcastable("batch_norm", "variance", variance, x, axes);
  Tensor y = (x - m) / sqrt(v + epsilon);
  if (gamma.defined()) y = y * broadcastable("batch_norm", "gamma", gamma, x, axes);
  if (beta.defined()) y = y + broadcastable("batch_norm", "beta", beta, x, axes);
  return y;
}

Moments moments(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims) {
  normalize_axes("moments", axes, x.rank());
  Tensor m = mean(x, axes, true);
  Tensor centered = x - m;
  Tensor v = mean(centered * centered, axes, keepdims);
  return {keepdims ? m : mean(x, axes, false), v};
}

Tensor layer_norm(const Tensor &x, const std::vector<int64_t> &axes, double epsilon,
                  const Tensor &gamma, const Tensor &beta) {
  if (epsilon < 0) throw EdslError("layer_norm: epsilon must not be negative");
  std::vector<size_t> normalized = normalize_axes("layer_norm", axes, x.rank());
  Tensor m = mean(x, axes, true);
  Tensor centered = x - m;
  Tensor y = centered / sqrt(mean(centered * centered, axes, true) + epsilon);
  if (gamma.defined()) y = y * broadcastable("layer_norm", "gamma", gamma, x, normalized);
  if (beta.defined()) y = y + broadcastable("layer_norm", "beta", beta, x, normalized);
  return y;
}

void register_norm_ops(OpRegistry &registry) {
  registry.add("softmax", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{softmax(in[0], attrs.get_ints("axis", {-1}))};
  });
  registry.add("log_softmax", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{log_softmax(in[0], attrs.get_ints("axis", {-1}))};
  });
  // Inputs (x, mean, variance) or (x, mean, variance, beta, gamma), in Keras' order.
  registry.add("batch_norm", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 3, 5);
    if (in.size() == 4)
      throw EdslError(
          "batch_norm: expects 3 or 5 inputs (x, mean, variance[, beta, gamma]), got 4");
    Tensor beta = in.size() == 5 ? in[3] : Tensor(), gamma = in.size() == 5 ? in[4] : Tensor();
    return std::vector<Tensor>{batch_norm(in[0], in[1], in[2], beta, gamma,
                                          attrs.get_float("epsilon", 1e-3),
                                          attrs.get_int("axis", -1))};
  });
  registry.add("moments", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    std::vector<int64_t> axes = attrs.has("axis") ? attrs.get_ints("axis", {}) : all_axes(in[0]);
    Moments m = moments(in[0], axes, attrs.get_bool("keepdims", false));
    return std::vector<Tensor>{m.mean, m.variance};
  });
  // Inputs (x), (x, gamma) or (x, gamma, beta).
  registry.add("layer_norm", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 3);
    return std::vector<Tensor>{
        layer_norm(in[0], attrs.get_ints("axis", {-1}), attrs.get_float("epsilon", 1e-3),
                   in.size() > 1 ? in[1] : Tensor(), in.size() > 2 ? in[2] : Tensor())};
  });
}

}  // namespace tessera::ops
