// Reductions of the op library: sum, mean, max, min, prod, argmax, argmin over any axes.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "tessera/edsl.h"

namespace tessera::ops {

/// Axes as numpy takes them (negative counts from the end) checked against `rank` and returned
/// sorted; throws EdslError "<op>: axis 3 is out of range ..." or "<op>: axis 1 is repeated".
std::vector<size_t> normalize_axes(const std::string &op, const std::vector<int64_t> &axes,
                                   size_t rank);

/// Every axis of `x`, the default of the reductions.
std::vector<int64_t> all_axes(const Tensor &x);

// Reductions over `axes` (numpy's axis=tuple; an empty list reduces nothing); `keepdims` keeps
// each reduced axis as size 1. The overloads without axes reduce every axis. The result keeps x's
// dtype, except mean, which gives float32 for integer x.
Tensor sum(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor sum(const Tensor &x);
Tensor mean(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor mean(const Tensor &x);
Tensor max(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor max(const Tensor &x);
// A braced list of axes must not read as tessera::max(x, Tensor(1)): `max(x, {1})` is a reduction.
Tensor max(const Tensor &x, std::initializer_list<int64_t> axes, bool keepdims = false);
Tensor min(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor min(const Tensor &x);
Tensor min(const Tensor &x, std::initializer_list<int64_t> axes, bool keepdims = false);
Tensor prod(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor prod(const Tensor &x);

/// int32 position of the first maximum (minimum) over `axes`; with several axes, the row-major
/// position within the reduced block, so that all axes (the default) matches np.argmax on
/// x.ravel().
Tensor argmax(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor argmax(const Tensor &x);
Tensor argmin(const Tensor &x, const std::vector<int64_t> &axes, bool keepdims = false);
Tensor argmin(const Tensor &x);

}  // namespace tessera::ops
