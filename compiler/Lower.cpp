// The lowering pipeline: fusion plan, then per kernel nest -> loops -> scheduled loops.
#include "compiler/Lower.h"

#include <set>

#include "compiler/ApplySchedule.h"
#include "compiler/CostModel.h"
#include "compiler/Fusion.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/LowerContraction.h"
#include "compiler/LowerElementwise.h"
#include "compiler/LowerSpecial.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

class BufferUses : public IRVisitor {
 public:
  std::set<std::string> read, written, local;
  using IRVisitor::visit;
  void visit(const Load *op) override {
    read.insert(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const Store *op) override {
    written.insert(op->buffer);
    IRVisitor::visit(op);
  }
  void visit(const Allocate *op) override {
    local.insert(op->buffer);
    IRVisitor::visit(op);
  }
};

Kernel make_kernel(const tile::BoundProgram &p, const std::string &name, Stmt body) {
  BufferUses uses;
  uses.visit_stmt(body);
  Kernel k{name, {}, body};
  std::set<std::string> all = uses.read;
  all.insert(uses.written.begin(), uses.written.end());
  // Outputs first, then inputs, each in name order: a deterministic signature.
  for (bool out : {true, false})
    for (const auto &b : all) {
      if (uses.local.count(b) || uses.written.count(b) != out) continue;
      const auto &t = p.type_of(b);
      k.params.push_back({b, t.dtype, t.elements(), out});
    }
  return k;
}

const tile::BoundStatement &statement(const tile::BoundProgram &p, const std::string &name) {
  for (const auto &s : p.statements)
    if (s.output == name) return s;
  throw tile::Error("error: no statement defines '" + name + "'");
}

}  // namespace

std::set<std::string> written_whole_first(const LoweredProgram &lowered) {
  std::set<std::string> seen, whole;
  for (const auto &step : lowered.steps) {
    if (step.kind == Step::Kind::Host) {
      seen.insert(step.host_statement);  // its reads were written by earlier steps
      continue;
    }
    for (const auto &p : step.kernel.params)
      if (seen.insert(p.name).second && p.is_output && step.writes_whole_output) whole.insert(p.name);
  }
  return whole;
}

LoweredProgram lower(const tile::BoundProgram &program, const TargetInfo &target, const LowerOptions &options) {
  auto log = [&](const std::string &pass, const std::string &before, const std::string &after) {
    if (options.log && before != after) options.log(pass, after);
  };
  LoweredProgram out;
  FusionPlan plan = plan_fusion(program);
  std::string fusion_text;
  for (const auto &[name, owner] : plan.owner)
    if (owner != name) fusion_text += name + " -> " + owner + "\n";
  log("fusion", "", fusion_text);

  ElementwiseContext ctx{program, plan, ""};
  std::set<std::string> touched;
  for (const auto &s : program.statements) {
    if (plan.inlined(s.output)) continue;
    Step step;
    for (const auto &[name, owner] : plan.owner)
      if (owner == s.output) step.fused.push_back(name);
    const bool special = !s.is_contraction() && s.expr()->kind == tile::Expr::Kind::Call && tile::is_special(s.expr()->op);
    if (special || assign_may_write_twice(program, s)) {
      auto body = special ? lower_special(program, s) : std::nullopt;
      if (!body) {
        step.kind = Step::Kind::Host;
        step.host_statement = s.output;
        touched.insert(s.output);
        for (const auto &r : statement_reads(s)) touched.insert(r);
        out.steps.push_back(std::move(step));
        continue;
      }
      step.kind = Step::Kind::Kernel;
      step.kernel = make_kernel(program, s.output, *body);
      step.writes_whole_output = true;  // every special stores each element (scatter clears its output first)
      log("lower " + s.output, "", print_kernel(step.kernel));
    } else {
      ContractionNest nest;
      auto fused = plan.contraction_of.find(s.output);
      if (s.is_contraction()) nest = contraction_nest(s, s, ctx);
      else if (fused != plan.contraction_of.end()) nest = contraction_nest(statement(program, fused->second), s, ctx);
      else nest = elementwise_nest(s, ctx);
      Stmt body = apply_schedule(nest, default_schedule(nest));
      std::string before = print_stmt(body);
      log("lower " + s.output, "", before);
      step.schedule = choose_schedule(nest, target);
      body = apply_schedule(nest, step.schedule);
      step.kind = Step::Kind::Kernel;
      step.kernel = make_kernel(program, s.output, body);
      step.writes_whole_output = nest.stores_every_element(program.type_of(nest.out_buffer).shape);
      if (options.choose) {
        Schedule chosen = options.choose(nest, step.kernel, step.schedule);
        if (chosen != step.schedule) {
          step.schedule = chosen;
          body = apply_schedule(nest, chosen);
          step.kernel = make_kernel(program, s.output, body);
        }
      }
      log("schedule " + s.output, before, print_stmt(body));
    }
    for (const auto &prm : step.kernel.params) touched.insert(prm.name);
    out.steps.push_back(std::move(step));
  }

  std::set<std::string> inputs, outputs;
  for (const auto &[name, t] : program.inputs) inputs.insert(name);
  for (const auto &[name, t] : program.outputs) outputs.insert(name), touched.insert(name);
  for (const auto &name : touched) {
    const auto &t = program.type_of(name);
    auto role = outputs.count(name) ? BufferInfo::Role::Output
                : inputs.count(name) ? BufferInfo::Role::Input
                                     : BufferInfo::Role::Temp;
    out.buffers.push_back({name, t.dtype, t.elements(), role});
  }
  return out;
}

}  // namespace tessera::compiler
