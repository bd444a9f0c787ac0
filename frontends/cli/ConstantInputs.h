// `--const NAMES` / `--const-except NAMES` of `tessera run` and `tessera lower`: which inputs are
// compiled in as constants (inference weights; runtime/Constants.h folds what depends on them).
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

}  // namespace tessera::cli
