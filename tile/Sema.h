// Semantic analysis of a parsed Tile program: name classification and definition order.
#pragma once

#include "tile/Program.h"

namespace tessera::tile {

/// Checks a freshly parsed program and returns it ready for binding: every name is defined before
/// use and is used as what it is (tensor, dimension, index), every index variable of a contraction
/// appears in a tensor access, sizes match output ranks, call arities are right, outputs exist.
/// Specials nested inside expressions are hoisted into statements of their own. Throws tile::Error.
Program analyze(Program program);

}  // namespace tessera::tile
