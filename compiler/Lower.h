// Lowering a bound Tile program for a target: which statements become kernels (fusion), each
// kernel's loop nest with the cost model's schedule, and a nest's loop IR under a chosen schedule.
// runtime/Compile.cpp runs the whole pipeline for a device; lower() here is its cost-model form,
// for tests and `tessera lower --target generic`.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "compiler/ConstantPanel.h"
#include "compiler/IR.h"
#include "compiler/Nest.h"
#include "compiler/Schedule.h"
#include "compiler/Target.h"
#include "tile/Bind.h"

namespace tessera::compiler {

/// Where a tensor of the program lives during a run.
struct BufferInfo {
  std::string name;
  tile::DType dtype;
  int64_t elements;
  enum class Role { Input, Output, Temp } role;
};

/// One step of a program planned for a target, in launch order: a kernel whose loop nest is yet
/// to be scheduled, a kernel lowered without a schedule (a special), or a statement the device
/// runs on the host with the reference interpreter (specials not lowered yet, e.g. prng).
struct PlannedStep {
  enum class Kind { Scheduled, Fixed, Host } kind = Kind::Host;
  std::string name;                // the root statement: the kernel's name, or the host statement
  std::vector<std::string> fused;  // the statements its kernel computes (for `tessera lower`)
  ContractionNest nest;            // Scheduled
  Schedule model;                  // Scheduled: the cost model's schedule for the target
  Stmt body;                       // Fixed: the special's loops
  /// A kernel that stores every element of its output whatever the inputs, so a device need not
  /// zero-fill the output before it (Tile's unwritten elements are 0 only where it does not). A
  /// part of a concatenation done in place stores its box, and the parts together the whole.
  bool writes_whole_output = false;
};

struct ProgramPlan {
  std::vector<BufferInfo> buffers;  // every tensor the steps touch
  std::vector<PlannedStep> steps;
};

/// One step of a lowered program: a finished loop IR kernel, or a host statement.
struct Step {
  enum class Kind { Kernel, Host } kind;
  Kernel kernel;                   // Kernel
  std::string host_statement;      // Host: the name of the bound statement to interpret
  Schedule schedule;               // Kernel: how it was scheduled (empty for a special)
  std::vector<std::string> fused;  // the statements this kernel computes (for `tessera lower`)
  bool writes_whole_output = false;
  std::vector<ConstantPanel> panels;  // Kernel: the filled constant panels among its params
};

struct LoweredProgram {
  std::vector<BufferInfo> buffers;  // every tensor the steps touch
  std::vector<Step> steps;
};

/// Receives (pass name, IR text) after each pass that changed the IR.
using LowerLog = std::function<void(const std::string &pass, const std::string &ir)>;

/// Fusion, then per kernel its loop nest and the cost model's schedule for `target`. Throws
/// tile::Error for a program the compiler cannot handle (with the statement's source location).
ProgramPlan plan_program(const tile::BoundProgram &program, const Target &target,
                         const LowerLog &log = {});

/// The kernel of a Scheduled step under `schedule`, or of a Fixed step: its loops, and its params
/// (outputs first, then inputs, each in name order) from the buffers the loops touch. Not finished
/// (compiler/Finish.h).
/// With `constants`, constant vector operands are read from filled panels (ConstantPanel.h).
Kernel step_kernel(const tile::BoundProgram &program, const PlannedStep &step,
                   const Schedule &schedule = {}, ConstantPanels *constants = nullptr);

/// A finished step of `planned` under `schedule`: what a device runs.
/// `constants`: the inputs whose values the runtime has at compile time; the kernel reads the
/// panels of those it packs from buffers filled once (Step::panels).
Step finished_step(const tile::BoundProgram &program, const PlannedStep &planned,
                   const Schedule &schedule, const Target &target,
                   const std::set<std::string> &constants = {});

/// Every statement a host step: the interpreter's program.
LoweredProgram host_program(const tile::BoundProgram &program);

/// Options of lower(): `choose`, when set, replaces the cost model's schedule of each Scheduled
/// step (tests force schedules with it).
struct LowerOptions {
  LowerLog log;
  std::function<Schedule(const ContractionNest &nest, const Kernel &model_kernel,
                         const Schedule &model)>
      choose;
  std::set<std::string> constants;  // inputs whose panels are read filled (finished_step)
};

/// The whole pipeline with the cost model's schedules (or `options.choose`'s), finished for
/// `target`.
LoweredProgram lower(const tile::BoundProgram &program, const Target &target,
                     const LowerOptions &options = {});

/// The outputs and temporaries that the first step touching them overwrites whole: a device need
/// not zero-fill them before a run (every other one starts at 0, Tile's unwritten value).
std::set<std::string> written_whole_first(const LoweredProgram &lowered);

/// The steps as `tessera lower --emit loops` prints them: per step its name, what it fuses, its
/// schedule and its loop IR.
std::string print_lowered(const LoweredProgram &lowered);

}  // namespace tessera::compiler
