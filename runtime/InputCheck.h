// The one check of a run's inputs, for every device and the interpreter: each input of the
// program is given, with the type the program was bound to.
#pragma once

#include <string>

#include "tile/Bind.h"
#include "tile/Diagnostics.h"

namespace tessera {

/// Throws tile::Error unless `inputs` (host or device tensors by name) holds every input of
/// `program` with its bound type.
template <class TensorsByName>
void check_inputs(const tile::BoundProgram &program, const TensorsByName &inputs) {
  for (const auto &[name, type] : program.inputs) {
    auto it = inputs.find(name);
    if (it == inputs.end()) throw tile::Error("error: no value for input '" + name + "'");
    if (it->second.type() != type)
      throw tile::Error("error: input '" + name + "' is " + it->second.type().str() +
                        " but the program was compiled for " + type.str());
  }
}

}  // namespace tessera
