// Read-only traversal of loop IR; one visit method per node kind, generated from IR.def.
#pragma once

#include <set>
#include <string>

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

/// The global buffers a statement reads and writes, and the kernel-local arrays it allocates
/// (whose loads and stores are in `read` and `written` too).
class BufferUses : public IRVisitor {
 public:
  std::set<std::string> read, written, local;
  using IRVisitor::visit;
  void visit(const Load *op) override;
  void visit(const Store *op) override;
  void visit(const Allocate *op) override;
};

/// The names of the variables `e` reads.
std::set<std::string> variables_of(const Expr &e);

}  // namespace tessera::compiler
