#include "compiler/MergeSmallSteps.h"

#include <algorithm>
#include <set>

#include "compiler/ApplySchedule.h"
#include "compiler/IRMutator.h"
#include "compiler/IRVisitor.h"

namespace tessera::compiler {

namespace {

// A step of at most this many iteration points runs on one thread in less time than a launch
// costs where Target::merge_small_steps is set.
constexpr int64_t kSmallStepPoints = 8192;
// A merged kernel's points are at most this many times a small step's: one thread runs them all,
// where the steps' own kernels would have spread the larger ones over every core (lavapipe's
// merged softmax over 1000 classes: about 100 us of arithmetic in one invocation).
constexpr int64_t kRunPoints = 4;
// Buffers a merged kernel binds at most: Vulkan devices bind few storage buffers to a kernel
// (lavapipe 32; one with 41 crashed it), and a kernel of the steps alone binds up to a dozen.
constexpr size_t kMaxBuffers = 16;

// One work-item runs the merged kernel, so no loop of it may be mapped to threads or work-items.
class SerialLoops : public IRMutator {
 public:
  using IRMutator::visit;
  Stmt visit(const For *op, const Stmt &self) override {
    Stmt body = mutate(op->body);
    bool mapped = op->for_kind == ForKind::Parallel || op->for_kind == ForKind::GpuBlock ||
                  op->for_kind == ForKind::GpuThread;
    if (!mapped && body == op->body) return self;
    return For::make(op->var, op->min, op->extent, mapped ? ForKind::Serial : op->for_kind, body,
                     mapped ? 0 : op->gpu_dim);
  }
};

int64_t points(const ContractionNest &nest) {
  int64_t n = 1;
  for (const auto &index : nest.indices) n *= std::max<int64_t>(index.extent, 1);
  return n;
}

// A small step as one thread runs it, and the buffers its loops touch.
struct Serial {
  PlannedStep step;
  Stmt body;
  std::set<std::string> buffers;
  int64_t points = 0;
};

Serial serial(PlannedStep step) {
  Serial s;
  s.points = points(step.nest);
  s.body = SerialLoops().mutate(apply_schedule(step.nest, default_schedule(step.nest)));
  BufferUses uses;
  uses.visit_stmt(s.body);
  for (const auto *names : {&uses.read, &uses.written})
    for (const auto &b : *names)
      if (!uses.local.count(b)) s.buffers.insert(b);
  s.step = std::move(step);
  return s;
}

PlannedStep merged(std::vector<Serial> run) {
  if (run.size() == 1) return std::move(run.front().step);
  PlannedStep out;
  out.kind = PlannedStep::Kind::Fixed;
  out.name = run.back().step.name;
  out.writes_whole_output = true;
  std::vector<Stmt> bodies;
  for (auto &s : run) {
    bodies.push_back(s.body);
    out.fused.insert(out.fused.end(), s.step.fused.begin(), s.step.fused.end());
  }
  out.body = Block::make(std::move(bodies));
  return out;
}

}  // namespace

ProgramPlan merge_small_steps(ProgramPlan plan) {
  std::vector<PlannedStep> steps;
  std::vector<Serial> run;
  std::set<std::string> run_buffers;
  int64_t run_points = 0;
  auto close_run = [&] {
    if (!run.empty()) steps.push_back(merged(std::move(run)));
    run.clear();
    run_buffers.clear();
    run_points = 0;
  };
  for (auto &step : plan.steps) {
    if (step.kind != PlannedStep::Kind::Scheduled || !step.writes_whole_output ||
        points(step.nest) > kSmallStepPoints) {
      close_run();
      steps.push_back(std::move(step));
      continue;
    }
    Serial s = serial(std::move(step));
    std::set<std::string> buffers = run_buffers;
    buffers.insert(s.buffers.begin(), s.buffers.end());
    if (buffers.size() > kMaxBuffers || run_points + s.points > kRunPoints * kSmallStepPoints) {
      close_run();
      buffers = s.buffers;
    }
    run_buffers = std::move(buffers);
    run_points += s.points;
    run.push_back(std::move(s));
  }
  close_run();
  plan.steps = std::move(steps);
  return plan;
}

}  // namespace tessera::compiler
