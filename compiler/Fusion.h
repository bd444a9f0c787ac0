// Which statements of a bound program get their own kernel and which are computed inside
// another's: elementwise chains inline into their single consumer, and a contraction whose only
// consumer is an elementwise kernel of its shape becomes that kernel's body (its epilogue).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tile/Bind.h"

namespace tessera::compiler {

struct FusionPlan {
  /// Statement name -> the kernel (root statement) that computes it; roots map to themselves.
  std::map<std::string, std::string> owner;
  /// Root elementwise statement -> the contraction computed as its prologue, if any.
  std::map<std::string, std::string> contraction_of;
  /// Statement name -> its position in the program's statements (lookups stay logarithmic in
  /// programs of 100,000 statements).
  std::map<std::string, size_t> position;
  bool inlined(const std::string &name) const {
    auto it = owner.find(name);
    return it != owner.end() && it->second != name;
  }
};

FusionPlan plan_fusion(const tile::BoundProgram &program);

/// Tensors `s` reads directly (inputs of contractions, defaults, every Ref in an expression).
std::vector<std::string> statement_reads(const tile::BoundStatement &s);

}  // namespace tessera::compiler
