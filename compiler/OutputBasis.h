// Output basis change: rewrites a contraction whose output accesses are not single index
// variables (`dI[2*x + k - 1]`, `dI[x + k]`) so that each output dimension is one variable.
#pragma once

#include <vector>

#include "compiler/Bounds.h"
#include "tile/Bind.h"

namespace tessera::compiler {

struct BasisChange {
  tile::BoundContraction contraction;  // output access is `o_0, ..., o_{r-1}`, outputs first
  /// Points of the new space that are images of integer points of the old one (when the
  /// Hermite normal form has diagonal entries above 1, strided outputs).
  std::vector<Divisibility> integrality;
  bool changed = false;
};

/// With the output access matrix A (rows: output dims, scaled to integers), a unimodular U gives
/// A U = [H 0] (column Hermite normal form, H lower triangular). New variables y = U^-1 x: the
/// first ones are fixed by the output element (y1 = H^-1 (o - b)), the rest range freely, so each
/// output element is computed by exactly one iteration of the output loops: no write races.
/// Output dimensions that depend on others become equality constraints. Already-simple outputs
/// are returned unchanged.
BasisChange change_output_basis(const tile::BoundContraction &c);

/// `c` with every index that a constraint pins to one value (`co < 1`: co = 0) substituted and
/// dropped, with that constraint; the same points. change_output_basis starts with it.
tile::BoundContraction pin_single_valued(const tile::BoundContraction &c);

}  // namespace tessera::compiler
