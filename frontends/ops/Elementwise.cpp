// Elementwise activations and math of the op library.
#include "frontends/ops/Elementwise.h"

#include <cstdio>

#include "frontends/ops/Library.h"

namespace tessera::ops {

namespace {
std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
}  // namespace

void expect_inputs(const OpAttrs &attrs, const std::vector<Tensor> &inputs, size_t min,
                   size_t max) {
  if (inputs.size() >= min && inputs.size() <= max) return;
  std::string want = std::to_string(min) + (max == min       ? ""
                                            : max == min + 1 ? " or " + std::to_string(max)
                                                             : " to " + std::to_string(max));
  throw EdslError(attrs.op_name + ": expects " + want + " input" + (max == 1 ? "" : "s") +
                  ", got " + std::to_string(inputs.size()));
}

std::string shape_text(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Tensor relu(const Tensor &x, double alpha, std::optional<double> max_value, double threshold) {
  if (max_value && *max_value < 0)
    throw EdslError("relu: max_value " + format_number(*max_value) + " is negative");
  // Keras' order: keep x above the threshold, clip that part, then subtract the leaky part.
  Tensor y = select(x > threshold, x, 0);
  if (max_value) y = tessera::min(tessera::max(y, 0), *max_value);
  if (alpha == 0) return y;
  Tensor below = threshold - x;
  return y - alpha * select(below > 0, below, 0);
}

Tensor relu6(const Tensor &x) { return tessera::min(tessera::max(x, 0), 6); }

Tensor leaky_relu(const Tensor &x, double alpha) { return select(x >= 0, x, alpha * x); }

Tensor elu(const Tensor &x, double alpha) { return select(x > 0, x, alpha * (exp(x) - 1)); }

Tensor selu(const Tensor &x) {
  // The constants of Klambauer et al. (2017), as Keras has them.
  const double alpha = 1.6732632423543772848170429916717;
  const double scale = 1.0507009873554804934193349852946;
  return scale * elu(x, alpha);
}

Tensor hard_sigmoid(const Tensor &x) { return tessera::min(tessera::max(x * 0.2 + 0.5, 0), 1); }

Tensor softplus(const Tensor &x) {
  // max(x, 0) + log(1 + exp(-|x|)): exp never sees a large positive argument.
  return tessera::max(x, 0) + log(exp(-abs(x)) + 1);
}

Tensor softsign(const Tensor &x) { return x / (abs(x) + 1); }

Tensor gelu(const Tensor &x, bool approximate) {
  if (approximate) {
    const double c = 0.79788456080286535588;  // sqrt(2 / pi)
    return x * 0.5 * (tanh((x + x * x * x * 0.044715) * c) + 1);
  }
  return x * 0.5 * (call(tile::Intrinsic::Erf, {x * 0.70710678118654752440}) + 1);
}

Tensor square(const Tensor &x) { return x * x; }

Tensor sign(const Tensor &x) { return cast(select(x > 0, 1, select(x < 0, -1, 0)), x.dtype()); }

Tensor clip(const Tensor &x, std::optional<double> lo, std::optional<double> hi) {
  if (lo && hi && *lo > *hi)
    throw EdslError("clip: min " + format_number(*lo) + " is greater than max " +
                    format_number(*hi));
  Tensor y = x;
  if (lo) y = tessera::max(y, *lo);
  if (hi) y = tessera::min(y, *hi);
  return y;
}

Tensor minimum(const Tensor &a, const Tensor &b) { return tessera::min(a, b); }
Tensor maximum(const Tensor &a, const Tensor &b) { return tessera::max(a, b); }
Tensor where(const Tensor &cond, const Tensor &a, const Tensor &b) { return select(cond, a, b); }

namespace {

std::optional<double> optional_float(const OpAttrs &attrs, const std::string &name) {
  if (!attrs.has(name)) return std::nullopt;
  return attrs.get_float(name, 0);
}

using Unary = Tensor (*)(const Tensor &);
using Binary = Tensor (*)(const Tensor &, const Tensor &);

void add_unary(OpRegistry &registry, const std::string &name, Unary fn) {
  registry.add(name, [fn](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{fn(in[0])};
  });
}

void add_binary(OpRegistry &registry, const std::string &name, Binary fn) {
  registry.add(name, [fn](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 2);
    return std::vector<Tensor>{fn(in[0], in[1])};
  });
}

}  // namespace

void register_elementwise_ops(OpRegistry &registry) {
  registry.add("relu", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{relu(in[0], attrs.get_float("alpha", 0),
                                    optional_float(attrs, "max_value"),
                                    attrs.get_float("threshold", 0))};
  });
  registry.add("leaky_relu", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{leaky_relu(in[0], attrs.get_float("alpha", 0.2))};
  });
  registry.add("elu", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{elu(in[0], attrs.get_float("alpha", 1.0))};
  });
  registry.add("gelu", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    std::string approximate = attrs.get_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      throw EdslError("gelu: approximate must be 'none' or 'tanh', not '" + approximate + "'");
    return std::vector<Tensor>{gelu(in[0], approximate == "tanh")};
  });
  registry.add("clip", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 1, 1);
    return std::vector<Tensor>{
        clip(in[0], optional_float(attrs, "min"), optional_float(attrs, "max"))};
  });
  registry.add("where", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 3, 3);
    return std::vector<Tensor>{where(in[0], in[1], in[2])};
  });
  registry.add("switch", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 3, 3);
    return std::vector<Tensor>{where(in[0], in[1], in[2])};
  });
  add_unary(registry, "relu6", relu6);
  add_unary(registry, "selu", selu);
  add_unary(registry, "sigmoid", [](const Tensor &x) { return sigmoid(x); });
  add_unary(registry, "hard_sigmoid", hard_sigmoid);
  add_unary(registry, "tanh", [](const Tensor &x) { return tanh(x); });
  add_unary(registry, "softplus", softplus);
  add_unary(registry, "softsign", softsign);
  add_unary(registry, "exp", [](const Tensor &x) { return exp(x); });
  add_unary(registry, "log", [](const Tensor &x) { return log(x); });
  add_unary(registry, "sqrt", [](const Tensor &x) { return sqrt(x); });
  add_unary(registry, "square", square);
  add_unary(registry, "abs", [](const Tensor &x) { return abs(x); });
  add_unary(registry, "sign", sign);
  add_binary(registry, "pow", [](const Tensor &a, const Tensor &b) { return pow(a, b); });
  add_binary(registry, "minimum", minimum);
  add_binary(registry, "maximum", maximum);
}

}  // namespace tessera::ops
