// `tessera grad PROG.tile --wrt A,B [--of C] [-o OUT.tile]`: prints the gradient program as Tile.
// Its inputs are PROG's inputs plus d_C (the seed, C's shape); its outputs d_A, d_B.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "autodiff/Gradient.h"
#include "frontends/cli/Commands.h"
#include "tile/Diagnostics.h"
#include "tile/Parser.h"
#include "tile/Printer.h"

namespace tessera::cli {

namespace {

struct GradOptions {
  std::string program;
  std::vector<std::string> wrt;
  std::string of;
  std::string out;
};

void run_grad(const GradOptions &o) {
  tile::Program p = tile::parse_program(tile::read_source_file(o.program));
  std::string of = o.of;
  if (of.empty()) {
    if (p.outputs.size() != 1)
      throw tile::Error("tessera: error: the program has " + std::to_string(p.outputs.size()) +
                        " outputs; say which one to differentiate with --of");
    of = p.outputs[0].name;
  }
  std::string text = tile::print_program(autodiff::gradient(p, of, o.wrt));
  if (o.out.empty()) {
    std::cout << text;
    return;
  }
  std::ofstream f(o.out);
  f << text;
  if (!f.flush()) throw tile::Error("tessera: error: cannot write '" + o.out + "'");
}

}  // namespace

void add_grad_command(CLI::App &app) {
  auto options = std::make_shared<GradOptions>();
  CLI::App *cmd =
      app.add_subcommand("grad", "Print the gradient of a Tile program as a Tile program");
  cmd->add_option("program", options->program, "The Tile program")->required();
  cmd->add_option("--wrt", options->wrt, "Tensors to differentiate with respect to (A,B)")
      ->required()
      ->delimiter(',');
  cmd->add_option("--of", options->of, "The output to differentiate (default: the only output)");
  cmd->add_option("-o,--output", options->out, "Write the gradient program here instead of stdout");
  cmd->callback([options] { run_grad(*options); });
}

}  // namespace tessera::cli
