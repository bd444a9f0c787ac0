// Which statements of a bound program get their own kernel and which are computed inside
// another's: an elementwise statement inlines into the kernel that computes all its readers (a
// contraction among them when it reads each element at most once: a reduction's input), or into
// each of a few such kernels when it is cheap (no division or math function), a
// contraction read only by an elementwise kernel of its shape becomes that kernel's body (the
// kernel is its epilogue), an `=` copy that permutes dimensions and keeps the innermost one is
// read in place by the contractions that read it (attention's heads split from the hidden
// dimension), a reshape is no kernel at all: its readers read its input, the parts of a
// concatenation are stored in place by their own kernels (ConcatInPlace.h), and so is the input
// of such a permuting copy that nothing else reads (PermuteInPlace.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tile/Bind.h"

namespace tessera::compiler {

struct FusionPlan {
  /// Statement name -> the kernel (root statement) that computes it; roots map to themselves.
  std::map<std::string, std::string> owner;
  /// Root elementwise statement -> the contraction computed as its prologue, if any.
  std::map<std::string, std::string> contraction_of;
  /// Inlined permutations (permutation_of) -> their `from`: their readers load their input in
  /// place, element x of the copy being the input's element y with y[from[d]] = x[d].
  std::map<std::string, std::vector<size_t>> permutations;
  /// Statement name -> its position in the program's statements (lookups stay logarithmic in
  /// programs of 100,000 statements).
  std::map<std::string, size_t> position;
  /// Reshape statement -> the tensor whose elements it is, in the same order (never itself a
  /// view). Such a reshape has no step and no buffer.
  std::map<std::string, std::string> view_of;
  /// Where a part of a concatenation done in place (ConcatInPlace.h), or the input of a
  /// permutation done in place (PermuteInPlace.h), lives: its element x is element y of
  /// `buffer`'s tensor, y[d] = x[from[d]] + offset[d] (from empty: x[d]), which its own kernel
  /// stores it into.
  struct Placement {
    std::string buffer;
    std::vector<int64_t> offset;
    std::vector<size_t> from;
  };
  std::map<std::string, Placement> placed;
  /// The `=` links of those concatenations -> the buffer that holds them. They run no step.
  std::map<std::string, std::string> assembled_in;
  /// Cheap elementwise statements whose readers are in several kernels, each of which computes
  /// them again (a layer norm's x - mean, read by the variance's sum and by the normalization)
  /// -> those kernels' roots; `owner` names the first. They have no buffer.
  std::map<std::string, std::vector<std::string>> recomputed_in;
  bool inlined(const std::string &name) const {
    auto it = owner.find(name);
    return it != owner.end() && it->second != name;
  }
  /// The buffer that holds `name`'s elements.
  const std::string &storage(const std::string &name) const {
    auto it = view_of.find(name);
    return it == view_of.end() ? name : it->second;
  }
};

FusionPlan plan_fusion(const tile::BoundProgram &program);

/// Where `s` is an `=` copy of one input of its own dtype and rank, without constraints, over as
/// many indices as dimensions (a default allowed): that input's access (the start of a
/// permutation's check and of a concatenation link's); else null.
const tile::BoundAccess *same_rank_copy(const tile::BoundProgram &program,
                                        const tile::BoundStatement &s);

/// Where `s` is an `=` copy P[...] = =(T[...]) that only permutes T's dimensions (each dimension of
/// both one index of its own, over the same extents: every element of both once) and keeps the
/// innermost one innermost (vector loads and stores stay contiguous): per dimension d of P, the
/// dimension of T whose coordinate it takes.
std::optional<std::vector<size_t>> permutation_of(const tile::BoundProgram &program,
                                                  const tile::BoundStatement &s);

/// Whether `s` is a special (reshape, gather, prng_*, ...): lowered on its own, never fused.
/// `index` is not: the compiler lowers it as elementwise code.
bool is_special(const tile::BoundStatement &s);

/// Tensors `s` reads directly (inputs of contractions, defaults, every Ref in an expression).
std::vector<std::string> statement_reads(const tile::BoundStatement &s);

}  // namespace tessera::compiler
