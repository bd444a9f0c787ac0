// Readable text of loop IR (`for i in [0, 128) parallel {`, `C[i*64 + j] = ...`), used by
// `tessera lower --emit loops`, the pass logger and the Before/Expected tests.
#pragma once

#include <string>

#include "compiler/IR.h"

namespace tessera::compiler {

std::string print_type(Type t);
std::string print_expr(const Expr &e);
/// Statements, two spaces per nesting level starting at `indent`, each line ending in '\n'.
std::string print_stmt(const Stmt &s, int indent = 0);
/// `kernel NAME(A: float32[6] in, C: float32[4] out) {` ... `}`.
std::string print_kernel(const Kernel &k);

}  // namespace tessera::compiler
