// Read-only traversal of loop IR; one visit method per node kind, generated from IR.def.
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

/// The default visit of each node visits its children. Override the kinds you care about and
/// call IRVisitor::visit(op) to keep descending.
class IRVisitor {
 public:
  virtual ~IRVisitor() = default;
  void visit_expr(const Expr &e);
  void visit_stmt(const Stmt &s);

#define LOOP_EXPR(Name) virtual void visit(const Name *op);
#define LOOP_STMT(Name) virtual void visit(const Name *op);
#include "compiler/IR.def"
};

}  // namespace tessera::compiler
