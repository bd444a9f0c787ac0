// The GLSL functions that Tessera's shaders call beyond GLSL's own: Tile's integer division and
// shifts, saturating float -> integer conversions, NaN-propagating max/min, C's fmod, round and
// pow, erf, and float64 exp/log/tanh/sinh/cosh (GLSL's take float only).
#pragma once

#include <vector>

#include "backends/clike/HelperLibrary.h"

namespace tessera::vulkan {

/// The definitions (clike/HelperLibrary.h): floordiv, floormod, truncdiv, truncmod, shl, shr,
/// fmax_nan, fmin_nan, relu, abs, to_half, round, fmod, pow, erf, exp, expm1, log, tanh, sinh,
/// cosh, and the conversion sat.
const std::vector<clike::HelperDefinition> &glsl_helpers();

}  // namespace tessera::vulkan
