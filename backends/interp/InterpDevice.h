// The `interp` device: the reference interpreter of bound Tile programs, the oracle every other
// device is tested against. It favours obviousness over speed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/Device.h"

namespace tessera {

std::unique_ptr<Device> make_interp_device();

/// Evaluates `program` on `inputs` exactly by the semantics of DESIGN.md §3 and returns its outputs.
TensorMap interpret(const tile::BoundProgram &program, const TensorMap &inputs);

/// The tensors statement `s` of `program` reads (for a prng_state, also what its prng_step reads).
std::vector<std::string> statement_reads(const tile::BoundProgram &program, const tile::BoundStatement &s);

/// Evaluates one statement of `program` over `env` (which holds every tensor it reads): what
/// compiled devices use for the steps they run on the host.
HostTensor evaluate_statement(const tile::BoundProgram &program, const tile::BoundStatement &s, const TensorMap &env);

}  // namespace tessera
