// Integer ranges of a bound contraction's index variables, by interval propagation over its
// affine access and constraint inequalities, and by exact projection (tile/Projection.h) for a
// variable that no single inequality bounds. Shared by bind (unbounded-index errors) and the
// interpreter (the box it enumerates).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tile/Bind.h"

namespace tessera::tile {

/// Inclusive integer range [lo, hi]; empty when lo > hi.
struct IndexRange {
  int64_t lo = 0;
  int64_t hi = -1;
  bool empty() const { return lo > hi; }
};

/// One range per index variable of `c` (by position), or nullopt for a variable that the
/// inequalities together do not bound on both sides. Every access dimension gives 0 <= a < D (D
/// from `types`, the output from `output_shape`), every constraint 0 <= p < B. The box contains
/// every valid point; the enumerator still checks each point exactly.
std::vector<std::optional<IndexRange>> index_ranges(const BoundContraction &c,
                                                    const std::vector<int64_t> &output_shape,
                                                    const std::map<std::string, TensorType> &types);

}  // namespace tessera::tile
