// Rebuilding traversal of loop IR; one visit method per node kind, generated from IR.def.
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

/// mutate() returns the node itself when nothing below it changed, so unchanged subtrees stay
/// shared (and a pass can tell whether it changed anything by pointer comparison). Override the
/// kinds you care about; call IRMutator::visit(op, self) to mutate the children.
class IRMutator {
 public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr &e);
  Stmt mutate(const Stmt &s);

#define LOOP_EXPR(Name) virtual Expr visit(const Name *op, const Expr &self);
#define LOOP_STMT(Name) virtual Stmt visit(const Name *op, const Stmt &self);
#include "compiler/IR.def"
};

}  // namespace tessera::compiler
