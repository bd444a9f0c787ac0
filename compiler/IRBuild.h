// Shorthands for the index arithmetic (int64) the lowering passes build: imm(3), var("i"),
// bin(Op::Add, a, b). `using namespace ir_build;` in a .cpp file brings them in.
#pragma once

#include <string>
#include <utility>

#include "compiler/IR.h"

namespace tessera::compiler::ir_build {

using Op = Binary::Op;

inline Expr imm(int64_t v) { return IntImm::make(v); }
inline Expr var(const std::string &n) { return Var::make(Type::i64(), n); }
inline Expr bin(Op op, Expr a, Expr b) { return Binary::make(op, std::move(a), std::move(b)); }

}  // namespace tessera::compiler::ir_build
