// inline_builtin: a builtin call (`Y = builtin_softmax(X, N, C);`) as the ordinary statements that
// define it, which tile::bind binds in its place.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tile/Program.h"

namespace tessera::tile {

/// The statements that compute builtin statement `s`, in order; the last one defines s.output and
/// the others define names that `fresh(suffix)` gives (names no other statement uses). Every
/// statement and expression carries the call's source range, so errors point at the call.
std::vector<Statement> inline_builtin(const Statement &s,
                                      const std::function<std::string(const std::string &)> &fresh);

}  // namespace tessera::tile
