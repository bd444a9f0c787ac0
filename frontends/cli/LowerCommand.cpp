// `tessera lower PROG.tile --in NAME=f32[2,3]... | --spec FILE.json [--emit tile|loops|source]`:
// shows what the compiler makes of a program: the bound program with its fusion, the loop IR of
// every step with its schedule, or the device's source.
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "compiler/IRPrinter.h"
#include "backends/Registry.h"
#include "compiler/Lower.h"
#include "frontends/cli/Commands.h"
#include "frontends/cli/InputSpec.h"
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
  std::string device = "cpu";
  std::string emit = "loops";
  std::string target = "host";
};

[[noreturn]] void fail(const std::string &message) { throw tile::Error("tessera: error: " + message); }

compiler::TargetInfo target_for(const LowerOptions &o) {
  compiler::TargetInfo t;
  t.backend = "llvm";
  if (o.target == "generic") return t;  // 1 core, 128-bit vectors: deterministic output for tests
  t.cores = std::max(1u, std::thread::hardware_concurrency());
#if defined(__x86_64__)
  __builtin_cpu_init();
  t.vector_bits = __builtin_cpu_supports("avx512f") ? 512 : __builtin_cpu_supports("avx2") ? 256 : 128;
#endif
  return t;
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
  if (o.target != "host" && o.target != "generic") fail("--target must be host or generic");
  tile::Program program = tile::parse_program(tile::read_source_file(o.program));
  tile::BoundProgram bound = tile::bind(program, typed_inputs(program, o.program, o.spec, o.inputs));
  compiler::LoweredProgram lowered = compiler::lower(bound, target_for(o));

  if (o.emit == "source") {
    std::cout << builtin_devices().create(o.device)->source(bound);
    return;
  }
  if (o.emit == "tile") {
    for (const auto &[name, type] : bound.inputs) std::cout << "// input " << name << ": " << type.str() << "\n";
    for (const auto &s : bound.statements) std::cout << "// " << s.output << ": " << s.type.str() << "\n";
    for (const auto &step : lowered.steps) {
      std::string note = fusion_note(step);
      std::string name = step.kind == compiler::Step::Kind::Host ? step.host_statement : step.kernel.name;
      std::cout << "// kernel " << name << (step.kind == compiler::Step::Kind::Host ? " (host)" : "")
                << (note.empty() ? "" : " fuses " + note) << "\n";
    }
    std::cout << tile::print_program(program);
    return;
  }
  for (size_t i = 0; i < lowered.steps.size(); ++i) {
    const auto &step = lowered.steps[i];
    if (step.kind == compiler::Step::Kind::Host) {
      std::cout << "// step " << i << ": host " << step.host_statement << "\n";
      continue;
    }
    std::string note = fusion_note(step);
    std::cout << "// step " << i << ": " << step.kernel.name << (note.empty() ? "" : " (fuses " + note + ")") << "\n";
    if (!step.schedule.tile_sizes.empty()) std::cout << "// schedule " << step.schedule.to_json() << "\n";
    std::cout << compiler::print_kernel(step.kernel);
  }
}

}  // namespace

void add_lower_command(CLI::App &app) {
  auto options = std::make_shared<LowerOptions>();
  CLI::App *cmd = app.add_subcommand("lower", "Show the compiler's lowering of a Tile program");
  cmd->add_option("program", options->program, "The Tile program (PROG.tile)")->required();
  cmd->add_option("--in", options->inputs, "An input type: NAME=DTYPE[D0,D1,...], e.g. A=f32[2,3]");
  cmd->add_option("--spec", options->spec, "Input types as JSON: {\"inputs\": {\"A\": {\"dtype\", \"shape\"}}}");
  cmd->add_option("--device", options->device, "Device whose source --emit source shows (default: cpu)");
  cmd->add_option("--emit", options->emit, "What to print: tile, loops (default) or source");
  cmd->add_option("--target", options->target, "host (default) or generic (1 core, 128-bit vectors)");
  cmd->callback([options] { lower_command(*options); });
}

}  // namespace tessera::cli
