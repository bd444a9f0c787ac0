// Crossentropies from the normalizations and reductions.
#include "frontends/ops/Loss.h"

#include "frontends/ops/Elementwise.h"
#include "frontends/ops/Library.h"
#include "frontends/ops/Normalize.h"
#include "frontends/ops/Reduce.h"

namespace tessera::ops {

namespace {

// Keras' backend epsilon: probabilities are kept this far from 0 and 1 before the log.
constexpr double kEpsilon = 1e-7;

void check_float(const std::string &op, const Tensor &output) {
  if (!tile::is_float(output.dtype()))
    throw EdslError(op + ": output must be a float tensor, not " +
                    std::string(tile::dtype_name(output.dtype())));
}

// log of the class probabilities along `axis`, as Keras computes them.
Tensor log_probabilities(const Tensor &output, bool from_logits, int64_t axis) {
  if (from_logits) return log_softmax(output, {axis});
  Tensor p = output / sum(output, {axis}, true);
  return log(clip(p, kEpsilon, 1 - kEpsilon));
}

}  // namespace

Tensor categorical_crossentropy(const Tensor &target, const Tensor &output, bool from_logits,
                                int64_t axis) {
  const std::string op = "categorical_crossentropy";
  check_float(op, output);
  normalize_axes(op, {axis}, output.rank());
  if (target.shape() != output.shape())
    throw EdslError(op + ": target has shape " + shape_text(target.shape()) +
                    " but output has shape " + shape_text(output.shape()));
  return -sum(target * log_probabilities(output, from_logits, axis), {axis});
}

Tensor sparse_categorical_crossentropy(const Tensor &target, const Tensor &output, bool from_logits,
                                       int64_t axis) {
  const std::string op = "sparse_categorical_crossentropy";
  check_float(op, output);
  size_t a = normalize_axes(op, {axis}, output.rank())[0];
  if (!tile::is_integer(target.dtype()))
    throw EdslError(op + ": target must hold integer class ids, not " +
                    std::string(tile::dtype_name(target.dtype())));
  std::vector<int64_t> want = output.shape(), kept = output.shape();
  want.erase(want.begin() + static_cast<std::ptrdiff_t>(a));
  kept[a] = 1;
  if (target.shape() != want && target.shape() != kept)
    throw EdslError(op + ": target has shape " + shape_text(target.shape()) + " but output " +
                    shape_text(output.shape()) + " needs " + shape_text(want) +
                    " (output's shape without axis " + std::to_string(axis) + ")");
  // The target's class, compared with each position along the axis, is a one-hot mask.
  Tensor one_hot = index(output, static_cast<int>(a)) == reshape(target, kept);
  Tensor picked = select(one_hot, log_probabilities(output, from_logits, axis), 0);
  return -sum(picked, {axis});
}

Tensor binary_crossentropy(const Tensor &target, const Tensor &output, bool from_logits) {
  const std::string op = "binary_crossentropy";
  check_float(op, output);
  if (target.shape() != output.shape())
    throw EdslError(op + ": target has shape " + shape_text(target.shape()) +
                    " but output has shape " + shape_text(output.shape()));
  if (from_logits) {
    // max(z, 0) - z t + log(1 + exp(-|z|)): the logistic loss without exp of a large argument.
    return tessera::max(output, 0) - output * target + log(exp(-abs(output)) + 1);
  }
  Tensor p = clip(output, kEpsilon, 1 - kEpsilon);
  return -(target * log(p) + (1 - target) * log(1 - p));
}

void register_loss_ops(OpRegistry &registry) {
  registry.add("categorical_crossentropy", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 2);
    return std::vector<Tensor>{categorical_crossentropy(
        in[0], in[1], attrs.get_bool("from_logits", false), attrs.get_int("axis", -1))};
  });
  registry.add(
      "sparse_categorical_crossentropy", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
        expect_inputs(attrs, in, 2, 2);
        return std::vector<Tensor>{sparse_categorical_crossentropy(
            in[0], in[1], attrs.get_bool("from_logits", false), attrs.get_int("axis", -1))};
      });
  registry.add("binary_crossentropy", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_inputs(attrs, in, 2, 2);
    return std::vector<Tensor>{
        binary_crossentropy(in[0], in[1], attrs.get_bool("from_logits", false))};
  });
}

}  // namespace tessera::ops
