// Replaces variables by expressions (binding tiled loop counters to `i_o*T + i_i`, and the
// unwritten/accumulator placeholders of epilogues).
#pragma once

#include <map>
#include <string>

#include "compiler/IR.h"

namespace tessera::compiler {

Expr substitute(const Expr &e, const std::map<std::string, Expr> &replacements);
Stmt substitute(const Stmt &s, const std::map<std::string, Expr> &replacements);

}  // namespace tessera::compiler
