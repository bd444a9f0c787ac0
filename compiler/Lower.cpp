// The lowering pipeline's compiler half: fusion plan, then per kernel its nest, the cost model's
// schedule, and the loop IR under a schedule.
#include "compiler/Lower.h"

#include <algorithm>
#include <set>

#include "compiler/ApplySchedule.h"
#include "compiler/ConcatInPlace.h"
#include "compiler/CostModel.h"
#include "compiler/Finish.h"
#include "compiler/Fusion.h"
#include "compiler/GpuCostModel.h"
#include "compiler/GpuMapping.h"
#include "compiler/IRPrinter.h"
#include "compiler/IRVisitor.h"
#include "compiler/LowerContraction.h"
#include "compiler/LowerElementwise.h"
#include "compiler/LowerSpecial.h"
#include "compiler/MergeSmallSteps.h"
#include "tile/Diagnostics.h"

namespace tessera::compiler {

namespace {

Kernel make_kernel(const tile::BoundProgram &p, const std::string &name, Stmt body,
                   const ConstantPanels *constants = nullptr) {
  BufferUses uses;
  uses.visit_stmt(body);
  Kernel k{name, {}, body};
  std::set<std::string> all = uses.read;
  all.insert(uses.written.begin(), uses.written.end());
  // Outputs first, then inputs, each in name order: a deterministic signature.
  for (bool out : {true, false})
    for (const auto &b : all) {
      if (uses.local.count(b) || uses.written.count(b) != out) continue;
      const ConstantPanel *panel = nullptr;
      if (constants)
        for (const auto &c : constants->panels)
          if (c.name == b) panel = &c;
      if (panel) {
        k.params.push_back({b, panel->dtype, panel->elements(), false});
        k.params.back().constant_panel = true;
        if (auto it = constants->prefetch_ahead.find(b); it != constants->prefetch_ahead.end())
          k.params.back().prefetch_ahead = it->second;
        continue;
      }
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

std::vector<BufferInfo> buffers_of(const tile::BoundProgram &program,
                                   std::set<std::string> touched) {
  std::set<std::string> inputs, outputs;
  for (const auto &[name, t] : program.inputs) inputs.insert(name);
  for (const auto &[name, t] : program.outputs) outputs.insert(name), touched.insert(name);
  std::vector<BufferInfo> buffers;
  for (const auto &name : touched) {
    const auto &t = program.type_of(name);
    auto role = outputs.count(name)  ? BufferInfo::Role::Output
                : inputs.count(name) ? BufferInfo::Role::Input
                                     : BufferInfo::Role::Temp;
    buffers.push_back({name, t.dtype, t.elements(), role});
  }
  return buffers;
}

// The buffers a kernel step's loops will read and write, whatever its schedule.
void touch_kernel_buffers(const PlannedStep &step, std::set<std::string> &touched) {
  BufferUses uses;
  if (step.kind == PlannedStep::Kind::Fixed) {
    uses.visit_stmt(step.body);
  } else {
    for (const Expr &e : {step.nest.value, step.nest.epilogue, step.nest.unwritten})
      if (e) uses.visit_expr(e);
    touched.insert(step.nest.out_buffer);
  }
  for (const auto *names : {&uses.read, &uses.written})
    for (const auto &b : *names)
      if (!uses.local.count(b)) touched.insert(b);
}

void touch_host_statement(const tile::BoundStatement &s, std::set<std::string> &touched) {
  touched.insert(s.output);
  for (const auto &r : statement_reads(s)) touched.insert(r);
}

}  // namespace

ProgramPlan plan_program(const tile::BoundProgram &program, const Target &target,
                         const LowerLog &log) {
  ProgramPlan out;
  FusionPlan plan = plan_fusion(program);
  if (log) {
    std::string fusion_text;
    for (const auto &[name, owner] : plan.owner)
      if (owner != name) fusion_text += name + " -> " + owner + "\n";
    for (const auto &[name, viewed] : plan.view_of) fusion_text += name + " views " + viewed + "\n";
    for (const auto &[name, where] : plan.placed) {
      std::string at;
      for (int64_t o : where.offset) at += (at.empty() ? "" : ", ") + std::to_string(o);
      fusion_text += name + " stored in " + where.buffer + " at [" + at + "]\n";
    }
    if (!fusion_text.empty()) log("fusion", fusion_text);
  }

  ElementwiseContext ctx{program, plan, ""};
  std::set<std::string> touched;
  std::map<std::string, std::vector<std::string>> fused;  // root -> its statements, by name
  for (const auto &[name, owner] : plan.owner) fused[owner].push_back(name);
  for (const auto &[name, roots] : plan.recomputed_in)
    for (size_t i = 1; i < roots.size(); ++i) fused[roots[i]].push_back(name);
  for (auto &[root, names] : fused) std::sort(names.begin(), names.end());
  for (const auto &s : program.statements) {
    if (plan.inlined(s.output) || plan.view_of.count(s.output) || plan.assembled_in.count(s.output))
      continue;
    PlannedStep step;
    step.name = s.output;
    step.fused = std::move(fused[s.output]);
    const bool special = is_special(s);
    std::optional<ContractionNest> special_loops =
        special ? special_nest(program, s, plan) : std::nullopt;
    if ((special && !special_loops) || assign_may_write_twice(program, s)) {
      auto body = special ? lower_special(program, s) : std::nullopt;
      if (!body) {
        step.kind = PlannedStep::Kind::Host;
        touch_host_statement(s, touched);
        out.steps.push_back(std::move(step));
        continue;
      }
      step.kind = PlannedStep::Kind::Fixed;
      step.body = *body;
      step.writes_whole_output =
          true;  // every special stores each element (scatter clears its output first)
      if (log) log("lower " + s.output, print_stmt(step.body));
    } else {
      auto fused = plan.contraction_of.find(s.output);
      if (special_loops)
        step.nest = std::move(*special_loops);
      else if (s.is_contraction())
        step.nest = contraction_nest(s, s, ctx);
      else if (fused != plan.contraction_of.end())
        step.nest = contraction_nest(statement(program, fused->second), s, ctx);
      else
        step.nest = elementwise_nest(s, ctx);
      step.kind = PlannedStep::Kind::Scheduled;
      if (log)
        log("lower " + s.output,
            print_stmt(apply_schedule(step.nest, default_schedule(step.nest))));
      step.writes_whole_output =
          step.nest.stores_every_element(program.type_of(step.nest.out_buffer).shape);
      if (auto placed = plan.placed.find(step.nest.out_buffer); placed != plan.placed.end()) {
        // Its box of the concatenation; the parts' boxes fill the buffer (ConcatInPlace.h).
        TESSERA_INTERNAL_ASSERT(step.writes_whole_output, "part " + s.output + " not stored whole");
        store_in_place(step.nest, placed->second, program.type_of(placed->second.buffer).shape);
      }
      step.nest.guards_in_taps = target.guards_in_taps;
      step.model = choose_schedule(step.nest, target);
    }
    touch_kernel_buffers(step, touched);
    out.steps.push_back(std::move(step));
  }
  out.buffers = buffers_of(program, std::move(touched));
  if (target.merge_small_steps) out = merge_small_steps(std::move(out));
  return out;
}

Kernel step_kernel(const tile::BoundProgram &program, const PlannedStep &step,
                   const Schedule &schedule, ConstantPanels *constants) {
  TESSERA_INTERNAL_ASSERT(step.kind != PlannedStep::Kind::Host,
                          "host step " + step.name + " has no kernel");
  Stmt body = step.kind == PlannedStep::Kind::Fixed
                  ? step.body
                  : apply_schedule(step.nest, schedule, constants);
  return make_kernel(program, step.name, body, constants);
}

Step finished_step(const tile::BoundProgram &program, const PlannedStep &planned,
                   const Schedule &schedule, const Target &target,
                   const std::set<std::string> &constants) {
  Step step;
  step.fused = planned.fused;
  step.writes_whole_output = planned.writes_whole_output;
  if (planned.kind == PlannedStep::Kind::Host) {
    step.kind = Step::Kind::Host;
    step.host_statement = planned.name;
    return step;
  }
  step.kind = Step::Kind::Kernel;
  Schedule in_network = schedule;
  if (planned.kind == PlannedStep::Kind::Scheduled) {
    in_network = in_network_order(planned.nest, schedule, target);
    step.schedule = in_network;
  }
  // Constants' filled panels serve the CPU's schedules and the wide-vector devices' GPU ones
  // (PoCL): a work-item there reads its vector tile's panel straight through. A SIMT GPU's
  // neighbouring work-items read neighbouring columns of the weights as they are (coalesced).
  bool filled = !constants.empty() && (!is_gpu_schedule(in_network) || wide_vector_target(target));
  ConstantPanels panels{constants, {}, {}, target.cores};
  step.kernel =
      finish_kernel(step_kernel(program, planned, in_network, filled ? &panels : nullptr), target);
  step.panels = std::move(panels.panels);
  return step;
}

LoweredProgram host_program(const tile::BoundProgram &program) {
  LoweredProgram out;
  std::set<std::string> touched;
  for (const auto &s : program.statements) {
    Step step;
    step.kind = Step::Kind::Host;
    step.host_statement = s.output;
    touch_host_statement(s, touched);
    out.steps.push_back(std::move(step));
  }
  out.buffers = buffers_of(program, std::move(touched));
  return out;
}

LoweredProgram lower(const tile::BoundProgram &program, const Target &target,
                     const LowerOptions &options) {
  ProgramPlan plan = plan_program(program, target, options.log);
  LoweredProgram out{plan.buffers, {}};
  for (const auto &planned : plan.steps) {
    Schedule schedule = planned.model;
    if (planned.kind == PlannedStep::Kind::Scheduled && options.choose)
      schedule =
          options.choose(planned.nest, step_kernel(program, planned, planned.model), planned.model);
    Step step = finished_step(program, planned, schedule, target, options.constants);
    if (options.log && step.kind == Step::Kind::Kernel) {
      std::string scheduled = print_stmt(step_kernel(program, planned, schedule).body);
      if (planned.kind == PlannedStep::Kind::Scheduled &&
          scheduled != print_stmt(apply_schedule(planned.nest, default_schedule(planned.nest))))
        options.log("schedule " + planned.name, scheduled);
      std::string finished = print_stmt(step.kernel.body);
      if (finished != scheduled) options.log("finish " + planned.name, finished);
    }
    out.steps.push_back(std::move(step));
  }
  return out;
}

std::set<std::string> written_whole_first(const LoweredProgram &lowered) {
  std::set<std::string> seen, whole;
  for (const auto &step : lowered.steps) {
    if (step.kind == Step::Kind::Host) {
      seen.insert(step.host_statement);  // its reads were written by earlier steps
      continue;
    }
    for (const auto &p : step.kernel.params)
      if (seen.insert(p.name).second && p.is_output && step.writes_whole_output)
        whole.insert(p.name);
  }
  return whole;
}

std::string print_lowered(const LoweredProgram &lowered) {
  std::string out;
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    const auto &step = lowered.steps[i];
    if (step.kind == Step::Kind::Host) {
      out += "// step " + std::to_string(i) + ": host " + step.host_statement + "\n";
      continue;
    }
    std::string note;
    for (const auto &f : step.fused)
      if (f != step.kernel.name) note += (note.empty() ? "" : ", ") + f;
    out += "// step " + std::to_string(i) + ": " + step.kernel.name +
           (note.empty() ? "" : " (fuses " + note + ")") + "\n";
    if (!step.schedule.tile_sizes.empty()) out += "// schedule " + step.schedule.to_json() + "\n";
    out += print_kernel(step.kernel);
  }
  return out;
}

}  // namespace tessera::compiler
