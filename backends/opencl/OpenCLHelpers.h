// The OpenCL C functions that Tessera's kernels call beyond OpenCL's own: Tile's integer division
// and shifts, NaN-propagating max/min, relu, integer abs and rounding to float16.
#pragma once

#include <vector>

#include "backends/clike/HelperLibrary.h"

namespace tessera::opencl {

/// The definitions (clike/HelperLibrary.h): floordiv, floormod, truncdiv, truncmod, shl, shr,
/// fmax_nan, fmin_nan, relu, abs and to_half.
const std::vector<clike::HelperDefinition> &opencl_helpers();

}  // namespace tessera::opencl
