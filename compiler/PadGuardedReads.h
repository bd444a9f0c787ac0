// Zero padding made explicit, for devices where a guard per load costs more than a copy. A
// convolution's implicit padding (`X[n, i + k - 1, j + l - 1, c]`, points past X's edge skipped)
// leaves guards on both spatial indices, so GPU schedules cannot tile them; reading a zero-padded
// copy of X instead makes every point of the box valid. lavapipe ran a 3x3 convolution on
// 56x56x64 in 18.0 ms with the guards and 8.4 ms on the padded copy (AMD EPYC, Zen 4). Where the
// device reads texels of four floats, an image's 3 colour channels are widened to 4 in the copy:
// the stem then reads a pixel with one fetch instead of three loads lane by lane (ResNet-50's 7x7
// stem on lavapipe 13.1 -> 6.5 ms, Zen 4).
#pragma once

#include <cstdint>

#include "tile/Bind.h"

namespace tessera::compiler {

/// Below this many points (multiply-adds) the copy's launch and pass cost more than tiling the rows
/// saves: small_resnet's 3x3 convolutions (16x16x16 -> 16, 0.6 million points) ran 1.5-2.6 ms a
/// network with copies against 1.5-2.5 without on lavapipe (Zen 4); ResNet-50's (0.1 billion
/// each) ran it 1.5x faster with them. Nothing was measured in between.
inline constexpr int64_t kPadMinPoints = int64_t{1} << 24;

/// Below this many points a copy made to widen an image's colour channels to a texel (`texel`
/// below) costs more than it saves: MobileNetV2's stem (11 million points) ran 2.86 -> 1.07 ms on
/// lavapipe reading 4-channel pixels by texels, plus 0.38 for the copy (Zen 4); small_resnet's (0.4
/// million) takes 0.15 ms, most of it the launch, which a copy would pay again.
inline constexpr int64_t kTexelPadMinPoints = int64_t{1} << 20;

/// `program` with every contraction S[...] = +(X[...] * W[...]) (no constraints, no default)
/// whose only out-of-bounds accesses, over its index box, are X's reading a padded copy of X
/// instead: P[..., i + lo, ...] = =(X[..., i, ...]), its elements outside X zero, and S reading
/// P at X's index forms plus lo. The skipped points read zeros there, so S's values are the same
/// wherever W is finite (0 * inf is NaN, as in the frameworks' padded convolutions). A copy
/// serves every reader of X with its leading padding and no more trailing. Qualifies only where the
/// box stays the same, the copy is at most four times X's size, S has `min_points` points or more
/// and some output index (the output channels) does not read X; `program` unchanged where nothing
/// does.
///
/// With `texel` > 1 (devices that read float32 inputs a group of `texel` at a time), an innermost
/// dimension of X shorter than `texel` that S reduces (an image's colour channels) is padded with
/// zeros to `texel` too, whether or not S reads X past its edges, where S has the smaller of
/// `min_points` and kTexelPadMinPoints points: S then reads each pixel's channels as one group
/// instead of element by element.
tile::BoundProgram pad_guarded_reads(const tile::BoundProgram &program,
                                     int64_t min_points = kPadMinPoints, int64_t texel = 1);

}  // namespace tessera::compiler
