// Vector math functions for the CPU kernels: glibc's libmvec computes exp, erf, tanh... on a whole
// SSE, AVX2 or AVX-512 register at once. Without it LLVM calls the scalar libm function lane by
// lane, and a transcendental epilogue costs more than the contraction it follows (BERT's GELU:
// erf over 128x3072 took 3.6 ms, its 0.6-GFLOP matrix product 5.5 ms). No LLVM types here.
#pragma once

#include <optional>
#include <string>

#include "tile/DataType.h"

namespace tessera::llvm_backend {

/// The vector registers a vector-math call may use (libmvec's ISA letters b, c, d, e).
enum class VectorIsa { Sse, Avx, Avx2, Avx512 };

/// A vector function for `lanes` lanes at once; a wider value is computed in chunks of `lanes`.
struct VectorFunction {
  std::string symbol;  // "_ZGVdN8v_erff"
  int lanes = 0;
};

/// The libmvec function for the libm function `name` ("erf", "pow") with `arity` arguments of
/// `dtype` (Float32 or Float64) over a vector of `lanes` lanes, on a host whose widest vector
/// math is `isa`: the widest libmvec variant whose lanes divide `lanes`. None when libmvec has no
/// such function or no variant fits (two float lanes, a dtype it does not cover).
std::optional<VectorFunction> vector_function(const std::string &name, tile::DType dtype, int arity,
                                              int lanes, VectorIsa isa);

/// The host's vector math: its ISA, and whether libmvec could be loaded into this process (its
/// symbols are then found by the JIT's search of the process). None when it is not there (not
/// glibc, or a glibc older than 2.35, which lacks erf and tanh): kernels then call libm per lane.
std::optional<VectorIsa> host_vector_math();

/// A short text naming the host's vector math ("libmvec avx2", "scalar libm"), part of the key of
/// stored object code: an object built to call libmvec is not reused where it is not loaded.
std::string host_vector_math_name();

}  // namespace tessera::llvm_backend
