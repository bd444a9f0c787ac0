// The `interp` device: the reference interpreter of bound Tile programs, the oracle every other
// device is tested against. It favours obviousness over speed.
#pragma once

#include <memory>

#include "runtime/Device.h"

namespace tessera {

std::unique_ptr<Device> make_interp_device();

/// Evaluates `program` on `inputs` exactly by the semantics of DESIGN.md §3 and returns its outputs.
TensorMap interpret(const tile::BoundProgram &program, const TensorMap &inputs);

}  // namespace tessera
