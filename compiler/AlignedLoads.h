// Loads of aligned groups of four elements, for dialects that read a buffer a group at a time
// (GLSL through texel buffer views: llvmpipe fetches a 16-byte texel per lane for about the cost of
// one storage-buffer element, which it reads lane by lane with a bounds check each).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "compiler/IR.h"

namespace tessera::compiler {

/// A scalar integer index split as `first + component`: `first` provably a multiple of 4 and
/// `component` in [0, 4). Loads of one group get the same `first` (printed alike), so a compiler's
/// common subexpression elimination merges their fetches into one.
struct AlignedIndex {
  Expr first;
  int component = 0;
};

/// `index` split into its group and component, or nothing when its value modulo 4 is not evident
/// from its form (constants, sums, products with a multiple of 4).
std::optional<AlignedIndex> aligned_index(const Expr &index);

/// `body` with innermost Serial loops of constant extent (a multiple of 4) unrolled by 4 where
/// that makes loads of buffers `grouped` accepts aligned (their index modulo 4 known), so each
/// copy reads one element of every group and the four copies read the whole group. Loops that
/// update register accumulators are unrolled by 8 where their extent allows (two groups).
Stmt unroll_for_aligned_loads(const Stmt &body,
                              const std::function<bool(const std::string &)> &grouped);

}  // namespace tessera::compiler
