// `tessera devices [--json]`: one line per device, or a JSON array with each device's facts.
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backends/Registry.h"
#include "frontends/cli/Commands.h"
#include "tile/Diagnostics.h"

namespace tessera::cli {

namespace {

// A device that cannot be set up (a bad TESSERA_CPU) is left out and its error reported after the
// others are listed, so that one device's error does not hide the rest; the exit status is 1.
void list_devices(bool json) {
  DeviceRegistry registry = builtin_devices();
  nlohmann::json array = nlohmann::json::array();
  std::string errors;
  for (const auto &name : registry.names()) {
    DeviceInfo info;
    try {
      info = registry.create(name)->info();
    } catch (const tile::Error &e) {
      errors += (errors.empty() ? "" : "\ntessera: ") + std::string(e.what());
      continue;
    }
    if (!json) {
      std::cout << info.name << "  " << info.backend << "  " << info.description << "\n";
      continue;
    }
    array.push_back({{"name", info.name},
                     {"backend", info.backend},
                     {"description", info.description},
                     {"max_tensor_bytes", info.max_tensor_bytes},
                     {"facts", info.facts}});
  }
  if (json) std::cout << array.dump(2) << "\n";
  if (!errors.empty()) throw tile::Error(errors);
}

}  // namespace

CLI::Option *add_device_option(CLI::App &cmd, std::string &device, const std::string &help) {
  return cmd.add_option("--device", device, help)
      ->check(CLI::Validator(
          [](std::string &name) {
            return name.empty()
                       ? std::string("no device is named '' (`tessera devices` lists them)")
                       : std::string();
          },
          "DEVICE"));
}

void add_devices_command(CLI::App &app) {
  CLI::App *cmd = app.add_subcommand("devices", "List the devices this machine has");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print a JSON array with each device's facts");
  cmd->callback([json] { list_devices(*json); });
}

}  // namespace tessera::cli
