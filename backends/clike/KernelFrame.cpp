#include "backends/clike/KernelFrame.h"

namespace tessera::clike {

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
  return f;
}

}  // namespace tessera::clike
