// Nearest resizing as a block-writing contraction; bilinear as two contractions with per-axis
// interpolation matrices built from index().
#include "frontends/ops/Resize.h"

#include "frontends/ops/Library.h"
#include "frontends/ops/Shape.h"

namespace tessera::ops {

namespace {

void expect_nhwc(const std::string &op, const Tensor &x) {
  if (x.rank() != 4)
    throw EdslError(op + ": input has rank " + std::to_string(x.rank()) +
                    "; it must be NHWC (rank 4)");
}

void expect_pair(const std::string &op, const std::string &what, const std::vector<int64_t> &v) {
  if (v.size() != 2)
    throw EdslError(op + ": " + what + " needs 2 entries (height, width), got " +
                    std::to_string(v.size()));
  for (int64_t d : v)
    if (d < 1)
      throw EdslError(op + ": " + what + " entries must be at least 1, got " + std::to_string(d));
}

// W[o, i]: how much input row i contributes to output row o under TF's half-pixel bilinear rule.
Tensor bilinear_weights(int64_t out, int64_t in) {
  Tensor grid = full({out, in}, 0, DType::Float32);
  Tensor o = cast(index(grid, 0), DType::Float32);
  Tensor i = cast(index(grid, 1), DType::Float32);
  // TF computes the scale in float32 too.
  double scale = static_cast<float>(in) / static_cast<float>(out);
  Tensor src = (o + 0.5) * scale - 0.5;
  Tensor below = call(tile::Intrinsic::Floor, {src});
  Tensor lerp = src - below;
  Tensor lower = tessera::max(below, 0.0);
  Tensor upper = tessera::min(call(tile::Intrinsic::Ceil, {src}), static_cast<double>(in - 1));
  return select(i == lower, 1.0 - lerp, 0.0) + select(i == upper, lerp, 0.0);
}

}  // namespace

Tensor resize_nearest(const Tensor &x, const std::vector<int64_t> &scale) {
  expect_nhwc("resize_nearest", x);
  expect_pair("resize_nearest", "scale", scale);
  TensorIndex n, y, w, c, dy, dx;
  const auto &s = x.shape();
  Tensor out = TensorOutput(s[0], s[1] * scale[0], s[2] * scale[1], s[3]);
  out.add_constraint(IndexExpr(dy) < TensorDim(scale[0]));
  out.add_constraint(IndexExpr(dx) < TensorDim(scale[1]));
  out(n, IndexExpr(scale[0]) * y + dy, IndexExpr(scale[1]) * w + dx, c) = x(n, y, w, c);
  return out;
}

Tensor resize_bilinear(const Tensor &x, const std::vector<int64_t> &size) {
  expect_nhwc("resize_bilinear", x);
  expect_pair("resize_bilinear", "size", size);
  Tensor in = tile::is_float(x.dtype()) ? x : cast(x, DType::Float32);
  const auto &s = x.shape();
  Tensor wy = bilinear_weights(size[0], s[1]);
  Tensor wx = bilinear_weights(size[1], s[2]);
  TensorIndex n, oy, ox, y, w, c;
  Tensor rows = TensorOutput(s[0], size[0], s[2], s[3]);
  rows(n, oy, w, c) += wy(oy, y) * in(n, y, w, c);
  Tensor out = TensorOutput(s[0], size[0], size[1], s[3]);
  out(n, oy, ox, c) += wx(ox, w) * rows(n, oy, w, c);
  return out.dtype() == in.dtype() ? out : cast(out, in.dtype());
}

void register_resize_ops(OpRegistry &registry) {
  // Attributes: `scale` (integer factors) or `size` (output height, width); nearest needs `size`
  // to be a multiple of the input since UpSampling2D repeats whole pixels.
  auto resize = [](const std::string &method, const std::vector<Tensor> &in, const OpAttrs &attrs) {
    const std::string &op = attrs.op_name;
    if (in.size() != 1) throw EdslError(op + ": expects 1 input, got " + std::to_string(in.size()));
    const Tensor &x = in[0];
    expect_nhwc(op, x);
    if (attrs.has("scale") == attrs.has("size"))
      throw EdslError(op + ": give exactly one of 'scale' and 'size'");
    std::vector<int64_t> scale = attrs.get_ints("scale", {}, 2),
                         size = attrs.get_ints("size", {}, 2);
    if (method == "nearest") {
      if (attrs.has("size")) {
        expect_pair(op, "size", size);
        for (int a = 0; a < 2; ++a)
          if (size[a] % x.shape()[a + 1] != 0)
            throw EdslError(op + ": nearest resizing needs size " + std::to_string(size[a]) +
                            " to be a multiple of the input's " + (a ? "width " : "height ") +
                            std::to_string(x.shape()[a + 1]));
        scale = {size[0] / x.shape()[1], size[1] / x.shape()[2]};
      }
      return std::vector<Tensor>{resize_nearest(x, scale)};
    }
    if (method != "bilinear")
      throw EdslError(op + ": method '" + method + "' is not 'nearest' or 'bilinear'");
    if (attrs.has("scale")) {
      expect_pair(op, "scale", scale);
      size = {x.shape()[1] * scale[0], x.shape()[2] * scale[1]};
    }
    return std::vector<Tensor>{resize_bilinear(x, size)};
  };
  registry.add("resize", [resize](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    return resize(attrs.get_string("method", "nearest"), in, attrs);
  });
  registry.add("resize_nearest", [resize](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    return resize("nearest", in, attrs);
  });
  registry.add("resize_bilinear", [resize](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    return resize("bilinear", in, attrs);
  });
}

}  // namespace tessera::ops
