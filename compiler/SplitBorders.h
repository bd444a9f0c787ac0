// Splits a guarded contraction (a padded convolution) into an unguarded interior and guarded
// borders, so that the interior's output indices carry no guards and can be register-blocked.
#pragma once

#include <vector>

#include "compiler/Nest.h"

namespace tessera::compiler {

/// Regions that partition `n`'s output points, each a copy of `n` over a sub-range of one or more
/// output indices, with the guards its box implies removed. For each output index in order
/// whose guards hold throughout a middle range [a, b] (for every value of the other indices) that
/// covers at least half of it,
/// the current interior splits into [lo, a), [a, b], (b, hi]; only the middle is split further.
/// The interior comes first. A nest with nothing to split gives itself alone.
std::vector<ContractionNest> split_borders(const ContractionNest &n);

}  // namespace tessera::compiler
