// Iteration domain of a contraction: each index variable's integer range by exact projection of
// its access and constraint inequalities (Fourier-Motzkin), and the inequalities the box does not
// imply, which become guards.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tile/Bind.h"
#include "tile/Projection.h"

namespace tessera::compiler {

using tile::Divisibility;
using tile::domain_inequalities;
using tile::Inequality;
using tile::project;

struct DomainBounds {
  std::vector<int64_t> lo, hi;  // per index variable, inclusive; lo > hi for an empty domain
  std::vector<Inequality> guards;
  std::vector<Divisibility> divisibility;
  bool empty = false;
};

/// The box and guards of `c`. Output variables (those named alone by an output dimension) always
/// range over the whole output dimension, since every output element must be written. Throws
/// tile::Error (at `range`) naming an index variable that no inequality bounds.
/// `extra` adds divisibility conditions (from the output basis change).
DomainBounds compute_bounds(const tile::BoundProgram &program, const tile::BoundStatement &s,
                            const tile::BoundContraction &c,
                            const std::vector<Divisibility> &extra = {});

}  // namespace tessera::compiler
