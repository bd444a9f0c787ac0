// Elementwise Tile expressions as loop IR values, with numpy broadcasting index math and the
// interpreter's typing (each node computes in its bound dtype); fused producers are inlined.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "compiler/Fusion.h"
#include "compiler/IR.h"
#include "compiler/Nest.h"
#include "tile/Bind.h"

namespace tessera::compiler {

struct ElementwiseContext {
  const tile::BoundProgram &program;
  const FusionPlan &plan;
  std::string acc_tensor;  // the fused contraction, read as Var kAccName
};

/// Flat C-order index of `coords` into a tensor of `shape`, broadcasting from the right against
/// coordinates of a (larger or equal rank) iteration space.
Expr broadcast_index(const std::vector<int64_t> &shape, const std::vector<Expr> &coords);

/// The element of the tensor `name` at `coords` (one i64 expression per dimension of its shape)
/// as a kernel reads it: the contraction fused as its prologue (ctx.acc_tensor), the value of a
/// statement inlined into the kernel, or a load from the tensor's storage.
Expr value_at(const std::string &name, const std::vector<Expr> &coords,
              const ElementwiseContext &ctx);

/// The value of `e` at `coords` (one i64 expression per dimension of e.shape), in e's dtype.
Expr lower_value(const tile::BoundExpr &e, const std::vector<Expr> &coords,
                 const ElementwiseContext &ctx);

/// `e` converted as the interpreter converts (bool targets test != 0).
Expr convert_value(Expr e, tile::DType to);

/// A kernel nest over `s`'s shape storing value(coords) at each element (i64 coordinate vars).
ContractionNest assign_nest(const tile::BoundStatement &s,
                            const std::function<Expr(const std::vector<Expr> &)> &value);

/// A kernel nest over `s`'s shape computing its expression (with fusion).
ContractionNest elementwise_nest(const tile::BoundStatement &s, const ElementwiseContext &ctx);

}  // namespace tessera::compiler
