// The `tessera` binary: CLI11 subcommands (Commands.h); every error ends here as one message.
#include <iostream>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

#include "frontends/cli/Commands.h"
#include "tile/Diagnostics.h"

namespace {

// Messages that name no file ("error: unknown device ...") get the program's name in front.
std::string user_message(const std::string &what) {
  if (what.rfind("error: ", 0) == 0) return "tessera: " + what;
  return what;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"Tessera: a tensor compiler and runtime for Tile programs", "tessera"};
  app.set_version_flag("--version", std::string("tessera ") + TESSERA_VERSION);
  app.require_subcommand(1);
  tessera::cli::add_run_command(app);
  tessera::cli::add_devices_command(app);
  tessera::cli::add_lower_command(app);
  tessera::cli::add_grad_command(app);
  tessera::cli::add_tune_command(app);
  tessera::cli::add_cache_command(app);
  tessera::cli::add_bench_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    // --help and --version arrive as "errors" with exit code 0.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "tessera: error: " << e.what() << "\n";
    return 1;
  } catch (const tessera::tile::Error &e) {
    std::cerr << user_message(e.what()) << "\n";
    return 1;
  } catch (const std::logic_error &e) {
    std::cerr << "tessera: " << e.what() << "\n";
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "tessera: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
