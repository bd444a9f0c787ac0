// Folds constants and drops identities (x + 0, x * 1) in integer index math, so printed loop IR
// reads like hand-written code and backends see simple indices.
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

Expr simplify(const Expr &e);
Stmt simplify(const Stmt &s);

}  // namespace tessera::compiler
