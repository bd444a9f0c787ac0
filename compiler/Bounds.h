// Iteration domain of a contraction: each index variable's integer range by exact projection of
// its access and constraint inequalities (Fourier-Motzkin), and the inequalities the box does not
// imply, which become guards.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tile/Bind.h"

namespace tessera::compiler {

/// sum coeffs[j] * x_j + constant >= 0, integer coefficients (one per index variable).
struct Inequality {
  std::vector<int64_t> coeffs;
  int64_t constant = 0;
  bool operator==(const Inequality &) const = default;
  bool involves(size_t v) const { return coeffs[v] != 0; }
  std::string str(const std::vector<std::string> &names) const;  // "x + k - 1 >= 0"
};

/// (sum coeffs[j] * x_j + constant) % modulus == 0: an access with a fractional coefficient
/// (`i/2`) names an element only at points where it is an integer.
struct Divisibility {
  std::vector<int64_t> coeffs;
  int64_t constant = 0;
  int64_t modulus = 1;
};

struct DomainBounds {
  std::vector<int64_t> lo, hi;  // per index variable, inclusive; lo > hi for an empty domain
  std::vector<Inequality> guards;
  std::vector<Divisibility> divisibility;
  bool empty = false;
};

/// Every inequality of `c` (accesses of the output, of shape `output_shape`, and of the inputs,
/// whose shapes come from `types`; plus the constraints), scaled to integer coefficients.
std::vector<Inequality> domain_inequalities(const tile::BoundContraction &c,
                                            const std::vector<int64_t> &output_shape,
                                            const std::map<std::string, tile::TensorType> &types,
                                            std::vector<Divisibility> *divisibility = nullptr);

/// Range of variable `v` implied by `ineqs` over the rationals (Fourier-Motzkin elimination of
/// every other variable), rounded inward to integers. Returns false when a side is unbounded.
bool project(const std::vector<Inequality> &ineqs, size_t v, int64_t &lo, int64_t &hi, bool &empty);

/// The box and guards of `c`. Output variables (those named alone by an output dimension) always
/// range over the whole output dimension, since every output element must be written. Throws
/// tile::Error (at `range`) naming an index variable that no inequality bounds.
/// `extra` adds divisibility conditions (from the output basis change).
DomainBounds compute_bounds(const tile::BoundProgram &program, const tile::BoundStatement &s,
                            const tile::BoundContraction &c,
                            const std::vector<Divisibility> &extra = {});

}  // namespace tessera::compiler
