// Shape and data-movement ops of the op library: concatenate, slice, pad, transpose, reshape, ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

/// Joins tensors of one dtype and rank along `axis` (negative counts from the end); every other
/// dimension must match. Built as a chain of `=` contractions, each writing one input at its
/// offset and taking the rest from the previous link as its default.
Tensor concatenate(const std::vector<Tensor> &inputs, int64_t axis);

/// One axis of a slice as Python writes `begin:end:step`; an absent bound means "from the first
/// element in the step's direction" or "through the last". Bounds are clamped as Python clamps
/// them.
struct SliceRange {
  std::optional<int64_t> begin;
  std::optional<int64_t> end;
  int64_t step = 1;
};
/// `x[r0, r1, ...]`; axes past the end of `ranges` are taken whole.
Tensor slice(const Tensor &x, const std::vector<SliceRange> &ranges);

/// Pads with a constant; `pads` is a flat list of (before, after) pairs, one per axis, none
/// negative.
Tensor pad(const Tensor &x, const std::vector<int64_t> &pads, double value = 0);

/// Permutes axes: output axis k is input axis perm[k]. An empty perm reverses the axes.
Tensor transpose(const Tensor &x, std::vector<int64_t> perm = {});

/// Row-major reshape; one entry may be -1, meaning "whatever makes the sizes agree".
Tensor reshape_to(const Tensor &x, std::vector<int64_t> shape);

/// Keras Flatten: keeps the first (batch) dimension and folds the rest into one.
Tensor flatten(const Tensor &x);

/// Removes size-1 axes: those in `axes`, or every size-1 axis when `axes` is empty.
Tensor squeeze(const Tensor &x, const std::vector<int64_t> &axes = {});

/// Inserts a size-1 axis so that it becomes axis `axis` of the result (np.expand_dims).
Tensor expand_dims(const Tensor &x, int64_t axis);

/// np.tile: repeats the whole tensor `reps[a]` times along each axis (shorter lists or ranks are
/// padded with leading 1s).
Tensor tile_tensor(const Tensor &x, std::vector<int64_t> reps);  // not `tile`: that is a namespace

/// np.repeat with an integer count: each element `repeats` times along `axis`; with no axis the
/// tensor is flattened first.
Tensor repeat(const Tensor &x, int64_t repeats, std::optional<int64_t> axis);

/// np.take(x, indices, axis, mode="clip"): indices below 0 read element 0 and indices past the end
/// read the last element (Tile's gather clamps; it never fails at run time).
Tensor take(const Tensor &x, const Tensor &indices, int64_t axis = 0);

/// tf.one_hot: integer indices to a tensor with a new axis of size `depth` (at `axis`, -1 = last)
/// holding `on` where the index matches and `off` elsewhere; out-of-range indices give all `off`.
Tensor one_hot(const Tensor &indices, int64_t depth, double on = 1, double off = 0,
               int64_t axis = -1, DType dtype = DType::Float32);

/// A tensor of `shape` filled with `value`, as a contraction over a literal.
Tensor full(const std::vector<int64_t> &shape, double value, DType dtype);

/// `axis` in [-rank, rank) made non-negative; throws "<op>: <what> A is out of range for rank R".
int64_t normalize_axis(const std::string &op, int64_t axis, int64_t rank,
                       const std::string &what = "axis");

}  // namespace tessera::ops
