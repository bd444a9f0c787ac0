#include "backends/clike/KernelFrame.h"

#include "compiler/IRVisitor.h"

namespace tessera::clike {

namespace {

class TypesOf : public compiler::IRVisitor {
 public:
  KernelTypes types;
  using IRVisitor::visit;
#define LOOP_EXPR(Name)                           \
  void visit(const compiler::Name *op) override { \
    types.values.insert(op->type.dtype);          \
    IRVisitor::visit(op);                         \
  }
#include "compiler/IR.def"
  void visit(const compiler::Allocate *op) override {
    types.arrays.insert(op->type.dtype);
    IRVisitor::visit(op);
  }
};

KernelTypes types_of(const compiler::Kernel &kernel) {
  TypesOf v;
  for (const auto &p : kernel.params) v.types.arrays.insert(p.dtype);
  v.visit_stmt(kernel.body);
  return v.types;
}

}  // namespace

KernelFrame kernel_frame(Dialect &dialect, const compiler::Kernel &kernel) {
  KernelFrame f;
  f.launch = gpu_launch(kernel.body);
  CLikePrinter printer(dialect, kernel.params);
  for (const auto &id : f.launch.ids) {
    std::string type = dialect.compute_type(id.type.dtype);
    std::string first = id.min ? printer.scalar(id.min, 0) : "0";
    f.ids += "  const " + type + " " + CLikePrinter::identifier(id.var) + " = " +
             dialect.cast_to(type, dialect.gpu_id(id.kind, id.dim)) +
             (first == "0" || first == "0L" ? "" : " + " + first) + ";\n";
    printer.declare(id.var, id.type);
  }
  f.body = printer.print(f.launch.body, 1);
  f.helpers = dialect.helper_definitions();
  f.types = types_of(kernel);
  return f;
}

}  // namespace tessera::clike
