// The iteration domain of a contraction as integer inequalities over its index variables (its
// accesses and constraints), and the exact range of one variable by Fourier-Motzkin elimination
// of the others. Bind uses it to find unbounded indices, the interpreter to enumerate a box, and
// the compiler for loop bounds and guards (compiler/Bounds.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tile/Bind.h"

namespace tessera::tile {

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

/// Every inequality of `c` (accesses of the output, of shape `output_shape`, and of the inputs,
/// whose shapes come from `types`; plus the constraints), scaled to integer coefficients.
std::vector<Inequality> domain_inequalities(const BoundContraction &c,
                                            const std::vector<int64_t> &output_shape,
                                            const std::map<std::string, TensorType> &types,
                                            std::vector<Divisibility> *divisibility = nullptr);

/// Range of variable `v` implied by `ineqs` over the rationals (Fourier-Motzkin elimination of
/// every other variable), rounded inward to integers. Returns false when a side is unbounded.
bool project(const std::vector<Inequality> &ineqs, size_t v, int64_t &lo, int64_t &hi, bool &empty);

}  // namespace tessera::tile
