// `tessera lower PROG.tile --in NAME=f32[2,3]... | --spec FILE.json [--device D] [--emit
// tile|loops|source] [--const NAMES | --const-except NAMES] [--target generic]`: shows what the
// compiler makes of a program for a device: the bound program with its fusion, the finished loop
// IR of every step with its schedule, or the device's source. Schedules are what a run would take
// now (the kernel cache's, else the cost model's); nothing is tuned. With --const the inputs it
// names are compiled in as `tessera run --const` compiles them, with random values: what folds
// depends on the program, not on the values. `--target generic` lowers for a fixed 1-core,
// 128-bit target instead (stable test output).
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "backends/Registry.h"
#include "compiler/Lower.h"
#include "frontends/cli/Commands.h"
#include "frontends/cli/ConstantInputs.h"
#include "frontends/cli/InputSpec.h"
#include "runtime/Compile.h"
#include "tile/Bind.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace tessera::cli {

namespace {

struct LowerOptions {
  std::string program;
  std::vector<std::string> inputs;  // NAME=f32[2,3]
  std::string spec;
  std::string device;
  std::string emit = "loops";
  std::string target = "device";
  ConstantNames constants;
};

[[noreturn]] void fail(const std::string &message) {
  throw tile::Error("tessera: error: " + message);
}

std::string fusion_note(const compiler::Step &step) {
  std::string s;
  for (const auto &f : step.fused)
    if (f != step.kernel.name && f != step.host_statement) s += (s.empty() ? "" : ", ") + f;
  return s;
}

void lower_command(const LowerOptions &o) {
  if (o.emit != "tile" && o.emit != "loops" && o.emit != "source")
    fail("--emit must be tile, loops or source, not '" + o.emit + "'");
  if (o.target != "device" && o.target != "generic") fail("--target must be device or generic");
  if (o.target == "generic" && o.emit == "source")
    fail("--emit source shows a device's code; drop --target generic");
  tile::Program program = tile::parse_program(tile::read_source_file(o.program));
  tile::BoundProgram bound =
      tile::bind(program, typed_inputs(program, o.program, o.spec, o.inputs));
  DeviceRegistry registry = builtin_devices();
  std::unique_ptr<Device> device =
      registry.create(o.device.empty() ? registry.default_name() : o.device);
  CompileOptions options;
  if (o.constants.any()) {
    if (o.target == "generic") fail("--const shows a device's lowering; drop --target generic");
    options.constants = random_constants(o.constants, bound);
  }

  if (o.emit == "source") {
    std::cout << device->source(bound, options);
    return;
  }
  if (o.emit == "loops" && o.target == "device") {
    std::cout << device->loops(bound, options);
    return;
  }
  // 1 core and 128-bit vectors: the same loops on every machine.
  compiler::LoweredProgram lowered = o.target == "generic"
                                         ? compiler::lower(bound, compiler::Target{"llvm"})
                                         : lower_for(bound, device->backend(), options);
  if (o.emit == "loops") {
    std::cout << compiler::print_lowered(lowered);
    return;
  }
  for (const auto &[name, type] : bound.inputs)
    std::cout << "// input " << name << ": " << type.str() << "\n";
  for (const auto &s : bound.statements)
    std::cout << "// " << s.output << ": " << s.type.str() << "\n";
  for (const auto &step : lowered.steps) {
    std::string note = fusion_note(step);
    bool host = step.kind == compiler::Step::Kind::Host;
    std::cout << "// kernel " << (host ? step.host_statement : step.kernel.name)
              << (host ? " (host)" : "") << (note.empty() ? "" : " fuses " + note) << "\n";
  }
  std::cout << tile::print_program(program);
}

}  // namespace

void add_lower_command(CLI::App &app) {
  auto options = std::make_shared<LowerOptions>();
  CLI::App *cmd = app.add_subcommand("lower", "Show the compiler's lowering of a Tile program");
  cmd->add_option("program", options->program, "The Tile program (PROG.tile)")->required();
  cmd->add_option("--in", options->inputs, "An input type: NAME=DTYPE[D0,D1,...], e.g. A=f32[2,3]");
  cmd->add_option("--spec", options->spec,
                  "Input types as JSON: {\"inputs\": {\"A\": {\"dtype\", \"shape\"}}}");
  add_device_option(
      *cmd, options->device,
      "Device whose loops or source to show (default: $TESSERA_DEVICE or the first device)");
  cmd->add_option("--emit", options->emit, "What to print: tile, loops (default) or source");
  cmd->add_option("--target", options->target,
                  "device (default: the device's target) or generic (1 core, 128-bit vectors)");
  add_constant_options(*cmd, options->constants);
  cmd->callback([options] { lower_command(*options); });
}

}  // namespace tessera::cli
