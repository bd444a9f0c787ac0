#include "backends/clike/GpuLaunch.h"

#include "compiler/IRVisitor.h"
#include "tile/Diagnostics.h"

namespace tessera::clike {

using compiler::as;
using compiler::For;
using compiler::ForKind;

namespace {

// GPU loops below the top chain cannot be mapped to ids: a malformed schedule, caught here rather
// than printed as a serial loop with the wrong meaning.
class FindGpuLoops : public compiler::IRVisitor {
 public:
  bool found = false;
  using IRVisitor::visit;
  void visit(const For *op) override {
    found |= op->for_kind == ForKind::GpuBlock || op->for_kind == ForKind::GpuThread;
    IRVisitor::visit(op);
  }
};

}  // namespace

GpuLaunch gpu_launch(const compiler::Stmt &body) {
  GpuLaunch l;
  l.body = body;
  bool seen[2][3] = {};
  while (auto *f = as<For>(l.body)) {
    bool block = f->for_kind == ForKind::GpuBlock;
    if (!block && f->for_kind != ForKind::GpuThread) break;
    auto *extent = as<compiler::IntImm>(f->extent);
    auto *min = as<compiler::IntImm>(f->min);
    if (!extent || !min || min->value != 0 || f->gpu_dim < 0 || f->gpu_dim > 2 ||
        seen[block][f->gpu_dim])
      throw tile::Error("error: GPU loop '" + f->var +
                        "' must start at 0, have a constant extent and be the only " +
                        std::string(block ? "block" : "thread") + " loop of dimension " +
                        std::to_string(f->gpu_dim));
    seen[block][f->gpu_dim] = true;
    (block ? l.groups : l.local)[f->gpu_dim] = extent->value;
    l.dims = std::max(l.dims, f->gpu_dim + 1);
    l.ids.push_back({block ? GpuId::Kind::Group : GpuId::Kind::Local, f->gpu_dim, f->var,
                     f->min->type, nullptr});
    l.body = f->body;
  }
  FindGpuLoops inner;
  inner.visit_stmt(l.body);
  if (inner.found) throw tile::Error("error: GPU loops must form the chain at the top of a kernel");
  if (l.dims > 0) return l;
  auto *f = as<For>(l.body);
  auto *extent = f ? as<compiler::IntImm>(f->extent) : nullptr;
  if (f && extent && f->for_kind == ForKind::Parallel) {
    l.dims = 1;
    l.driver_local = true;
    l.groups = {extent->value, 1, 1};
    l.ids.push_back({GpuId::Kind::Global, 0, f->var, f->min->type, f->min});
    l.body = f->body;
  }
  return l;
}

}  // namespace tessera::clike
