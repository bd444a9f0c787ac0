// `--const NAMES` / `--const-except NAMES` of `tessera run`, `tessera lower` and `tessera tune`:
// which inputs are compiled in as constants (inference weights; runtime/Constants.h folds what
// depends on them).
#pragma once

#include <string>
#include <vector>

#include "runtime/HostTensor.h"
#include "tile/Bind.h"

namespace CLI {
class App;
}

namespace tessera::cli {

struct ConstantNames {
  std::vector<std::string> only;    // --const: these inputs
  std::vector<std::string> except;  // --const-except: every input but these
  bool any() const { return !only.empty() || !except.empty(); }
};

/// Adds --const and --const-except (comma-separated or repeated; one excludes the other).
void add_constant_options(CLI::App &cmd, ConstantNames &names);

/// The inputs `names` selects, moved out of `inputs`. Throws tile::Error for a name that is not
/// an input of `bound`.
TensorMap take_constants(const ConstantNames &names, const tile::BoundProgram &bound,
                         TensorMap &inputs);

/// The constants `names` selects, with `tessera run --random 1`'s values: for commands that
/// compile a program as `run --const` would without its values (`lower`, `tune`). What folds, and
/// so every kernel and its key in the kernel cache, depends on the program, not on the values.
TensorMap random_constants(const ConstantNames &names, const tile::BoundProgram &bound);

}  // namespace tessera::cli
