// Writes a tile::Program as canonical Tile text: one statement per line, operators in
// function-call form, minimal parentheses in index polynomials. parse(print(p)) equals p.
#pragma once

#include <string>

#include "tile/Program.h"

namespace tessera::tile {

std::string print_program(const Program &program);
std::string print_poly(const PolyPtr &poly);
std::string print_expr(const ExprPtr &expr);

}  // namespace tessera::tile
