// Turns a GPU kernel's 64-bit index arithmetic into 32-bit where every value provably fits: GPUs
// and llvmpipe emulate or split 64-bit integer math, which halves the speed of index-heavy kernels.
#pragma once

#include "compiler/IR.h"

namespace tessera::compiler {

/// `kernel` with int64 loop variables, let variables, Load/Store indices, For bounds and index
/// comparisons rewritten to int32 wherever interval analysis (from constant loop bounds) proves
/// that every intermediate value lies in int32. int64 data (loads of int64 tensors and arithmetic
/// on them) stays int64; a narrowed variable used as data is widened back, and a conversion of a
/// narrowed index to another type converts the same value. Anything not provably in range is
/// left as it was, so the result computes exactly what `kernel` does.
Kernel narrow_indices(const Kernel &kernel);

}  // namespace tessera::compiler
