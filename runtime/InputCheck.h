// The one check of a run's inputs, for every device and the interpreter: each input of the
// program is given, with the type the program was bound to.
#pragma once

#include <set>
#include <string>

#include "tile/Bind.h"
#include "tile/Diagnostics.h"

namespace tessera {

/// Throws tile::Error unless `inputs` (host or device tensors by name) holds every input of
/// `program` with its bound type, but for the `constants` the executable holds, which it must not
/// hold.
template <class TensorsByName>
void check_inputs(const tile::BoundProgram &program, const TensorsByName &inputs,
                  const std::set<std::string> &constants = {}) {
  for (const auto &name : constants)
    if (inputs.count(name))
      throw tile::Error("error: input '" + name +
                        "' was compiled as a constant; a run cannot give it another value");
  for (const auto &[name, type] : program.inputs) {
    if (constants.count(name)) continue;
    auto it = inputs.find(name);
    if (it == inputs.end()) throw tile::Error("error: no value for input '" + name + "'");
    if (it->second.type() != type)
      throw tile::Error("error: input '" + name + "' is " + it->second.type().str() +
                        " but the program was compiled for " + type.str());
  }
}

}  // namespace tessera
