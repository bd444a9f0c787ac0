#include "compiler/tune/Canonical.h"

#include <map>

#include "compiler/ApplySchedule.h"
#include "compiler/IRMutator.h"
#include "compiler/IRPrinter.h"

namespace tessera::compiler::tune {

namespace {

/// Alpha-renaming: buffer parameters become p0, p1, ...; loop counters, lets, local arrays and
/// other variables become v0, v1, ... in the order the printer would meet them.
class Renamer : public IRMutator {
 public:
  explicit Renamer(const std::vector<BufferParam> &params) {
    for (size_t i = 0; i < params.size(); ++i) names_[params[i].name] = "p" + std::to_string(i);
  }
  using IRMutator::visit;
  std::string gpu_dims;  // the dimension of each GPU loop met, in order

  Expr visit(const Var *op, const Expr &) override { return Var::make(op->type, rename(op->name)); }
  Expr visit(const Load *op, const Expr &) override {
    return Load::make(op->type.with_lanes(1), rename(op->buffer), mutate(op->index));
  }
  Stmt visit(const Store *op, const Stmt &) override {
    std::string b = rename(op->buffer);
    Expr i = mutate(op->index);
    return Store::make(b, i, mutate(op->value));
  }
  Stmt visit(const For *op, const Stmt &) override {
    std::string v = rename(op->var);
    if (op->for_kind == ForKind::GpuBlock || op->for_kind == ForKind::GpuThread)
      gpu_dims += " " + std::to_string(op->gpu_dim);  // not printed, but where the loop runs
    Expr m = mutate(op->min), e = mutate(op->extent);
    return For::make(v, m, e, op->for_kind, mutate(op->body), op->gpu_dim);
  }
  Stmt visit(const LetStmt *op, const Stmt &) override {
    Expr value = mutate(op->value);
    std::string v = rename(op->var);
    return LetStmt::make(v, value, mutate(op->body));
  }
  Stmt visit(const Allocate *op, const Stmt &) override {
    std::string b = rename(op->buffer);
    return Allocate::make(b, op->type, op->size, op->local, mutate(op->body));
  }

 private:
  std::string rename(const std::string &name) {
    auto [it, inserted] = names_.try_emplace(name, "");
    if (inserted) it->second = "v" + std::to_string(next_++);
    return it->second;
  }
  std::map<std::string, std::string> names_;
  int next_ = 0;
};

}  // namespace

std::string canonical_text(const ContractionNest &nest, const std::vector<BufferParam> &params) {
  return canonical_text(Kernel{"kernel", params, apply_schedule(nest, default_schedule(nest))});
}

std::string canonical_text(const Kernel &kernel) {
  Renamer renamer(kernel.params);
  Kernel k{"kernel", kernel.params, renamer.mutate(kernel.body)};
  for (size_t i = 0; i < k.params.size(); ++i) k.params[i].name = "p" + std::to_string(i);
  return print_kernel(k) + (renamer.gpu_dims.empty() ? "" : "gpu dims:" + renamer.gpu_dims + "\n");
}

}  // namespace tessera::compiler::tune
