#include "frontends/cli/ConstantInputs.h"

#include <set>

#include <CLI/CLI.hpp>

#include "frontends/cli/RandomInput.h"
#include "tile/Diagnostics.h"

namespace tessera::cli {

void add_constant_options(CLI::App &cmd, ConstantNames &names) {
  CLI::Option *only =
      cmd.add_option("--const", names.only,
                     "Inputs whose values are compiled in (inference weights): what depends on "
                     "them alone is computed once, batch norm is folded into the weights")
          ->delimiter(',');
  cmd.add_option("--const-except", names.except,
                 "Compile every input as a constant but these (e.g. --const-except X)")
      ->delimiter(',')
      ->excludes(only);
}

TensorMap take_constants(const ConstantNames &names, const tile::BoundProgram &bound,
                         TensorMap &inputs) {
  auto fail = [](const std::string &message) { throw tile::Error("tessera: error: " + message); };
  std::set<std::string> chosen(names.only.begin(), names.only.end());
  std::set<std::string> except(names.except.begin(), names.except.end());
  for (const auto &[name, type] : bound.inputs)
    if (!names.except.empty() && !except.erase(name)) chosen.insert(name);
  for (const auto &n : except) fail("--const-except names '" + n + "', which is not an input");
  TensorMap constants;
  for (const auto &n : chosen) {
    auto it = inputs.find(n);
    if (it == inputs.end()) fail("--const names '" + n + "', which is not an input");
    constants[n] = std::move(it->second);
    inputs.erase(it);
  }
  return constants;
}

TensorMap random_constants(const ConstantNames &names, const tile::BoundProgram &bound) {
  TensorMap values;
  for (const auto &[name, type] : bound.inputs) {
    HostTensor t(type);
    fill_random(t, 1, name);
    values[name] = std::move(t);
  }
  return take_constants(names, bound, values);
}

}  // namespace tessera::cli
