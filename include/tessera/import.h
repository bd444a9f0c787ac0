// import_program: a tile::Program rebuilt as EDSL Tensors, so that a Tile program (parsed text, or
// a gradient from autodiff) becomes an op callable from C++ on any Tensors.
//
//   tile::Program p = tile::parse_program("function (A[M, K], B[K, N]) -> (C) { ... }");
//   Tensor C = import_program(p, {{"A", x}, {"B", w}}).at("C");  // x, w: any EDSL Tensors
#pragma once

#include <map>
#include <string>

#include "tessera/edsl.h"
#include "tile/Program.h"

namespace tessera {

/// The outputs of `p` (by name) computed from `inputs`, one Tensor per program input (its dtype
/// and shape bind the program, as tile::bind). Elementwise statements and specials become
/// tessera::call (literals become Tensor literals); contractions become TensorOutput/TensorIndex
/// contractions with the bound accesses, constraints, default and no_defract. Throws EdslError
/// ("import_program: ...") for a missing or unknown input and for a program that does not bind.
std::map<std::string, Tensor> import_program(const tile::Program &p,
                                             const std::map<std::string, Tensor> &inputs);

}  // namespace tessera
