// The subcommands of the `tessera` binary; each adds itself to the CLI11 app it is given.
#pragma once

#include <string>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace tessera::cli {

/// `tessera run PROG.tile ...`: runs a Tile program on .npy inputs (RunCommand.cpp).
void add_run_command(CLI::App &app);
/// `tessera devices [--json]`: lists the devices this build has (DevicesCommand.cpp).
void add_devices_command(CLI::App &app);
/// Adds `--device NAME` to `cmd` (DevicesCommand.cpp): an empty name is an error, never the
/// default device.
CLI::Option *add_device_option(CLI::App &cmd, std::string &device, const std::string &help);
/// `tessera lower PROG.tile ...`: prints the loop IR the compiler makes (LowerCommand.cpp).
void add_lower_command(CLI::App &app);
/// `tessera grad PROG.tile --wrt A,B [--of C] [-o OUT.tile]`: the gradient as Tile
/// (GradCommand.cpp).
void add_grad_command(CLI::App &app);

/// `tessera tune PROG.tile ...`: tunes every kernel into the kernel cache (TuneCommand.cpp).
void add_tune_command(CLI::App &app);
/// `tessera bench MODEL [--batch 1,8] [--train] [--json FILE] ...`: times a zoo model
/// (BenchCommand.cpp).
void add_bench_command(CLI::App &app);
/// `tessera cache stats|list|export FILE|import FILE|clear [--json]` (CacheCommand.cpp).
void add_cache_command(CLI::App &app);

}  // namespace tessera::cli
