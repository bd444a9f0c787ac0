// Shape ops as contractions: concatenate, slice, pad, transpose, tile, repeat; reshape-based
// flatten, squeeze and expand_dims.
#include "frontends/ops/Shape.h"

#include <algorithm>
#include <numeric>

#include "frontends/ops/Library.h"

namespace tessera::ops {

namespace {

std::string list_text(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<TensorIndex> indices(size_t n) { return std::vector<TensorIndex>(n); }

std::vector<IndexExpr> exprs(const std::vector<TensorIndex> &idx) {
  return {idx.begin(), idx.end()};
}

int64_t product(const std::vector<int64_t> &v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace

int64_t normalize_axis(const std::string &op, int64_t axis, int64_t rank, const std::string &what) {
  if (axis < -rank || axis >= rank)
    throw EdslError(op + ": " + what + " " + std::to_string(axis) + " is out of range for rank " +
                    std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Tensor full(const std::vector<int64_t> &shape, double value, DType dtype) {
  // A contraction whose only access is a rank-0 literal writes it at every output point.
  Tensor literal =
      tile::is_float(dtype) || value != static_cast<double>(static_cast<int64_t>(value))
          ? Tensor(value)
          : Tensor(static_cast<int64_t>(value));
  Tensor out = TensorOutput(std::vector<TensorDim>(shape.begin(), shape.end()));
  out(exprs(indices(shape.size()))) = literal();
  return out.dtype() == dtype ? out : cast(out, dtype);
}

Tensor concatenate(const std::vector<Tensor> &inputs, int64_t axis) {
  if (inputs.empty()) throw EdslError("concatenate: needs at least one input");
  const Tensor &first = inputs[0];
  int64_t rank = static_cast<int64_t>(first.rank());
  if (rank == 0) throw EdslError("concatenate: input 0 is a scalar; inputs need rank 1 or more");
  int64_t a = normalize_axis("concatenate", axis, rank);
  std::vector<int64_t> shape = first.shape();
  shape[a] = 0;
  for (size_t n = 0; n < inputs.size(); ++n) {
    const Tensor &t = inputs[n];
    if (t.dtype() != first.dtype())
      throw EdslError("concatenate: input " + std::to_string(n) + " has dtype " +
                      std::string(tile::dtype_name(t.dtype())) + " but input 0 has " +
                      std::string(tile::dtype_name(first.dtype())));
    if (static_cast<int64_t>(t.rank()) != rank)
      throw EdslError("concatenate: input " + std::to_string(n) + " has rank " +
                      std::to_string(t.rank()) + " but input 0 has rank " + std::to_string(rank));
    for (int64_t d = 0; d < rank; ++d)
      if (d != a && t.shape()[d] != first.shape()[d])
        throw EdslError("concatenate: input " + std::to_string(n) + " has shape " +
                        list_text(t.shape()) + " but input 0 has " + list_text(first.shape()) +
                        " (they may differ only on axis " + std::to_string(a) + ")");
    shape[a] += t.shape()[a];
  }
  // Each link writes one input at its offset; the earlier links arrive through the default.
  Tensor out;
  int64_t offset = 0;
  for (const Tensor &t : inputs) {
    Tensor link = TensorOutput(std::vector<TensorDim>(shape.begin(), shape.end()));
    if (out.defined()) link.use_default(out);
    auto idx = indices(rank);
    std::vector<IndexExpr> at = exprs(idx);
    if (offset != 0) at[a] = at[a] + offset;
    link(at) = t(exprs(idx));
    offset += t.shape()[a];
    out = link;
  }
  return out;
}

Tensor slice(const Tensor &x, const std::vector<SliceRange> &ranges) {
  int64_t rank = static_cast<int64_t>(x.rank());
  if (static_cast<int64_t>(ranges.size()) > rank)
    throw EdslError("slice: " + std::to_string(ranges.size()) +
                    " ranges given for a tensor of rank " + std::to_string(rank));
  auto idx = indices(rank);
  std::vector<IndexExpr> from;
  std::vector<TensorDim> out_shape;
  for (int64_t a = 0; a < rank; ++a) {
    int64_t n = x.shape()[a];
    SliceRange r = a < static_cast<int64_t>(ranges.size()) ? ranges[a] : SliceRange{};
    if (r.step == 0) throw EdslError("slice: step of axis " + std::to_string(a) + " is 0");
    bool down = r.step < 0;
    // Python's slice clamping (PySlice_AdjustIndices).
    auto adjust = [&](std::optional<int64_t> bound, int64_t absent) {
      if (!bound) return absent;
      int64_t v = *bound;
      if (v < 0) {
        v = v < -n ? -1 : v + n;
        return v < 0 ? (down ? int64_t{-1} : int64_t{0}) : v;
      }
      return v >= n ? (down ? n - 1 : n) : v;
    };
    int64_t b = adjust(r.begin, down ? n - 1 : 0);
    int64_t e = adjust(r.end, down ? -1 : n);
    int64_t len =
        down ? (e < b ? (b - e - 1) / -r.step + 1 : 0) : (b < e ? (e - b - 1) / r.step + 1 : 0);
    out_shape.emplace_back(len);
    from.push_back(IndexExpr(b) + IndexExpr(r.step) * idx[a]);
  }
  Tensor out = TensorOutput(out_shape);
  out(exprs(idx)) = x(from);
  return out;
}

Tensor pad(const Tensor &x, const std::vector<int64_t> &pads, double value) {
  size_t rank = x.rank();
  if (pads.size() != 2 * rank)
    throw EdslError("pad: pads has " + std::to_string(pads.size()) +
                    " entries but a tensor of rank " + std::to_string(rank) + " needs " +
                    std::to_string(2 * rank) + " (a before/after pair per axis)");
  for (size_t i = 0; i < pads.size(); ++i)
    if (pads[i] < 0)
      throw EdslError("pad: pads entry " + std::to_string(i) + " (" + (i % 2 ? "after" : "before") +
                      " axis " + std::to_string(i / 2) +
                      ") is negative: " + std::to_string(pads[i]));
  std::vector<int64_t> shape;
  auto idx = indices(rank);
  std::vector<IndexExpr> at;
  for (size_t a = 0; a < rank; ++a) {
    shape.push_back(pads[2 * a] + x.shape()[a] + pads[2 * a + 1]);
    at.push_back(IndexExpr(idx[a]) + pads[2 * a]);
  }
  Tensor out = TensorOutput(std::vector<TensorDim>(shape.begin(), shape.end()));
  // Points no input element writes are 0, so only another value needs a default.
  if (value != 0) out.use_default(full(shape, value, x.dtype()));
  out(at) = x(exprs(idx));
  return out;
}

Tensor transpose(const Tensor &x, std::vector<int64_t> perm) {
  int64_t rank = static_cast<int64_t>(x.rank());
  if (perm.empty()) {
    for (int64_t a = rank - 1; a >= 0; --a) perm.push_back(a);
  }
  if (static_cast<int64_t>(perm.size()) != rank)
    throw EdslError("transpose: perm " + list_text(perm) + " has " + std::to_string(perm.size()) +
                    " entries for a tensor of rank " + std::to_string(rank));
  std::vector<bool> seen(rank, false);
  const std::vector<int64_t> given = perm;
  for (int64_t &p : perm) {
    if (p < -rank || p >= rank || seen[p < 0 ? p + rank : p])
      throw EdslError("transpose: perm " + list_text(given) +
                      " is not a permutation of the axes 0.." + std::to_string(rank - 1));
    p = p < 0 ? p + rank : p;
    seen[p] = true;
  }
  auto idx = indices(rank);
  std::vector<IndexExpr> at;
  std::vector<TensorDim> shape;
  for (int64_t p : perm) {
    at.emplace_back(idx[p]);
    shape.emplace_back(x.shape()[p]);
  }
  Tensor out = TensorOutput(shape);
  out(at) = x(exprs(idx));
  return out;
}

Tensor reshape_to(const Tensor &x, std::vector<int64_t> shape) {
  int64_t total = product(x.shape());
  int64_t known = 1;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred) throw EdslError("reshape: shape " + list_text(shape) + " has more than one -1");
      inferred = i;
    } else if (shape[i] < 0) {
      throw EdslError("reshape: shape " + list_text(shape) + " has a negative size other than -1");
    } else {
      known *= shape[i];
    }
  }
  if (inferred) {
    if (known == 0 || total % known != 0)
      throw EdslError("reshape: cannot infer the -1 in shape " + list_text(shape) + " for " +
                      std::to_string(total) + " elements");
    shape[*inferred] = total / known;
  }
  if (product(shape) != total)
    throw EdslError("reshape: shape " + list_text(shape) + " has " +
                    std::to_string(product(shape)) + " elements but the input " +
                    list_text(x.shape()) + " has " + std::to_string(total));
  return reshape(x, shape);
}

Tensor flatten(const Tensor &x) {
  if (x.rank() == 0) throw EdslError("flatten: the input is a scalar; it needs a batch dimension");
  std::vector<int64_t> rest(x.shape().begin() + 1, x.shape().end());
  return reshape(x, {x.shape()[0], product(rest)});
}

Tensor squeeze(const Tensor &x, const std::vector<int64_t> &axes) {
  int64_t rank = static_cast<int64_t>(x.rank());
  std::vector<bool> drop(rank, false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis("squeeze", a, rank);
    if (drop[n]) throw EdslError("squeeze: axis " + std::to_string(a) + " is listed twice");
    if (x.shape()[n] != 1)
      throw EdslError("squeeze: axis " + std::to_string(a) + " has size " +
                      std::to_string(x.shape()[n]) + ", not 1");
    drop[n] = true;
  }
  std::vector<int64_t> shape;
  for (int64_t a = 0; a < rank; ++a)
    if (!(axes.empty() ? x.shape()[a] == 1 : drop[a])) shape.push_back(x.shape()[a]);
  return reshape(x, shape);
}

Tensor expand_dims(const Tensor &x, int64_t axis) {
  int64_t rank = static_cast<int64_t>(x.rank());
  int64_t a = normalize_axis("expand_dims", axis, rank + 1);
  std::vector<int64_t> shape = x.shape();
  shape.insert(shape.begin() + a, 1);
  return reshape(x, shape);
}

Tensor tile_tensor(const Tensor &x, std::vector<int64_t> reps) {
  for (int64_t r : reps)
    if (r < 0) throw EdslError("tile: reps " + list_text(reps) + " has a negative count");
  std::vector<int64_t> in_shape = x.shape();
  while (reps.size() < in_shape.size()) reps.insert(reps.begin(), 1);
  while (in_shape.size() < reps.size()) in_shape.insert(in_shape.begin(), 1);
  Tensor in = in_shape == x.shape() ? x : reshape(x, in_shape);
  // Output element (i + d * t) is input element i for every copy t < reps.
  size_t rank = in_shape.size();
  auto idx = indices(rank), copy = indices(rank);
  std::vector<IndexExpr> at;
  std::vector<TensorDim> shape;
  for (size_t a = 0; a < rank; ++a) {
    at.push_back(reps[a] == 1 ? IndexExpr(idx[a])
                              : IndexExpr(idx[a]) + IndexExpr(in_shape[a]) * copy[a]);
    shape.emplace_back(in_shape[a] * reps[a]);
  }
  Tensor out = TensorOutput(shape);
  for (size_t a = 0; a < rank; ++a)
    if (reps[a] != 1) out.add_constraint(IndexExpr(copy[a]) < TensorDim(reps[a]));
  out(at) = in(exprs(idx));
  return out;
}

Tensor repeat(const Tensor &x, int64_t repeats, std::optional<int64_t> axis) {
  if (repeats < 0) throw EdslError("repeat: repeats is negative: " + std::to_string(repeats));
  Tensor in = axis ? x : reshape(x, {product(x.shape())});
  int64_t rank = static_cast<int64_t>(in.rank());
  if (rank == 0)
    throw EdslError("repeat: the input is a scalar; give no axis to repeat it as a vector");
  int64_t a = normalize_axis("repeat", axis.value_or(0), rank);
  auto idx = indices(rank);
  TensorIndex copy;
  std::vector<IndexExpr> at = exprs(idx);
  at[a] = IndexExpr(repeats) * idx[a] + copy;
  std::vector<TensorDim> shape(in.shape().begin(), in.shape().end());
  shape[a] = in.shape()[a] * repeats;
  Tensor out = TensorOutput(shape);
  out.add_constraint(IndexExpr(copy) < TensorDim(repeats));
  out(at) = in(exprs(idx));
  return out;
}

namespace {

std::vector<Tensor> one(const Tensor &t) { return {t}; }

void expect_count(const OpAttrs &attrs, const std::vector<Tensor> &in, size_t n) {
  if (in.size() != n)
    throw EdslError(attrs.op_name + ": expects " + std::to_string(n) + " input" +
                    (n == 1 ? "" : "s") + ", got " + std::to_string(in.size()));
}

// A slice bound list entry is absent past the list's end or where `mask` (tf.strided_slice's
// begin_mask / end_mask) has its bit set.
std::optional<int64_t> bound(const std::vector<int64_t> &list, int64_t mask, size_t axis) {
  if (axis >= list.size() || (axis < 63 && ((mask >> axis) & 1))) return std::nullopt;
  return list[axis];
}

}  // namespace

void register_shape_ops(OpRegistry &registry) {
  registry.add("concatenate", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    return one(concatenate(in, attrs.get_int("axis", -1)));
  });
  registry.add("slice", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    auto begin = attrs.get_ints("begin", {}), end = attrs.get_ints("end", {}),
         step = attrs.get_ints("step", {});
    int64_t begin_mask = attrs.get_int("begin_mask", 0), end_mask = attrs.get_int("end_mask", 0);
    std::vector<SliceRange> ranges(std::max({begin.size(), end.size(), step.size()}));
    for (size_t a = 0; a < ranges.size(); ++a)
      ranges[a] = SliceRange{bound(begin, begin_mask, a), bound(end, end_mask, a),
                             a < step.size() ? step[a] : 1};
    return one(slice(in[0], ranges));
  });
  registry.add("pad", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    return one(pad(in[0], attrs.get_ints("pads", {}), attrs.get_float("value", 0)));
  });
  registry.add("transpose", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    return one(transpose(in[0], attrs.get_ints("perm", {})));
  });
  registry.add("reshape", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    if (!attrs.has("shape")) throw EdslError("reshape: missing attribute 'shape'");
    return one(reshape_to(in[0], attrs.get_ints("shape", {})));
  });
  registry.add("flatten", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    return one(flatten(in[0]));
  });
  registry.add("squeeze", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    return one(squeeze(in[0], attrs.get_ints("axes", {})));
  });
  registry.add("expand_dims", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    return one(expand_dims(in[0], attrs.get_int("axis", 0)));
  });
  registry.add("tile", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    if (!attrs.has("reps")) throw EdslError("tile: missing attribute 'reps'");
    return one(tile_tensor(in[0], attrs.get_ints("reps", {})));
  });
  registry.add("repeat", [](const std::vector<Tensor> &in, const OpAttrs &attrs) {
    expect_count(attrs, in, 1);
    std::optional<int64_t> axis;
    if (attrs.has("axis")) axis = attrs.get_int("axis");
    return one(repeat(in[0], attrs.get_int("repeats"), axis));
  });
}

}  // namespace tessera::ops
