// Inputs known when compiling (an inference network's weights): what depends on them alone is
// computed once, at compile time, and a per-channel affine epilogue of a contraction with constant
// weights (bias, batch norm) is folded into those weights, as inference engines do.
#pragma once

#include "runtime/HostTensor.h"
#include "tile/Bind.h"

namespace tessera {

struct FoldedProgram {
  /// The program to compile: statements computed from constants alone are gone, and the tensors
  /// they made that other statements read are inputs of it; so are the folded weights and shifts.
  tile::BoundProgram program;
  /// The values of every input of `program` that is a constant (the rest are the run's inputs).
  TensorMap constants;
  int folded_statements = 0;  // evaluated at compile time
  int folded_epilogues = 0;   // contractions whose affine epilogue went into their weights
};

/// Folds `constants` (inputs of `program`, each of its bound type) into `program`. The result
/// computes the same outputs up to float rounding: scaling weights reassociates products. Throws
/// tile::Error for a name that is not an input, or a value of another type.
FoldedProgram fold_constants(const tile::BoundProgram &program, const TensorMap &constants);

}  // namespace tessera
