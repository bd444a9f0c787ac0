// The reference interpreter of bound Tile programs: exactly the semantics of DESIGN.md §3,
// favouring obviousness over speed. The `interp` device runs whole programs with it, every other
// device the statements it leaves to the host, and the tests hold every device against it.
#pragma once

#include <string>
#include <vector>

#include "runtime/HostTensor.h"
#include "tile/Bind.h"

namespace tessera {

/// Evaluates `program` on `inputs` and returns its outputs.
TensorMap interpret(const tile::BoundProgram &program, const TensorMap &inputs);

/// The tensors statement `s` of `program` reads (for a prng_state, also what its prng_step reads).
std::vector<std::string> statement_reads(const tile::BoundProgram &program,
                                         const tile::BoundStatement &s);

/// Evaluates one statement of `program` over `env` (which holds every tensor it reads).
HostTensor evaluate_statement(const tile::BoundProgram &program, const tile::BoundStatement &s,
                              const TensorMap &env);

}  // namespace tessera
