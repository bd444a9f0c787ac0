// A kernel before scheduling: its index space (outputs first), guards and the per-point value,
// aggregation and epilogue. Lowering builds nests; apply_schedule turns a nest into loop IR.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/Bounds.h"
#include "compiler/IR.h"
#include "tile/Program.h"

namespace tessera::compiler {

struct NestIndex {
  std::string name;
  int64_t lo = 0, extent = 0;
  bool output = false;  // output index d is indices[d]
};

/// For every output element (the output indices), aggregate `value` over the reduction indices
/// at the points where all guards hold, in `acc_type` starting from the aggregation's identity;
/// then store `epilogue` (which reads the result as Var kAccName of `result_type`) to
/// out_buffer[out_index]. Elements no point reaches take `unwritten` (0 or the default) instead.
struct ContractionNest {
  std::string name;
  std::vector<NestIndex> indices;
  std::vector<Inequality> guards;
  std::vector<Divisibility> divisibility;
  tile::AggOp agg = tile::AggOp::Assign;
  Type acc_type;
  Expr value;        // over Var(index name, i64)
  Type result_type;  // the contraction's dtype: the accumulator is cast to it
  Expr unwritten;    // in result_type; null means 0
  Expr epilogue;     // in the stored dtype; null means Var kAccName itself
  std::string out_buffer;
  Expr out_index;      // flat, over the output index vars
  bool empty = false;  // no valid point: every element is unwritten
  // One block of a reduction cut into blocks (apply_schedule's reduction blocks): the accumulator
  // starts from the output element unless `first_block` holds, and the epilogue runs only where
  // `last_block` holds; before that the output element holds the partial sum. Null: the nest is the
  // whole reduction.
  Expr first_block, last_block;
  /// Where a guard involves the innermost reduction loop, guards stay conditions of the
  /// reduction's updates instead of bounds of its loops (Target::guards_in_taps): one condition
  /// around a register tile's updates where it involves none of the tile's indices.
  bool guards_in_taps = false;

  size_t outputs() const;
  /// Whether an element can be unwritten and its unwritten value differs from the identity.
  bool needs_written_flag() const;
  /// Whether the nest's kernel stores every element of its output buffer (of `shape`) whatever the
  /// inputs: the output box is the whole tensor (elements no point reaches are stored as
  /// unwritten). A device need not zero-fill such a buffer first.
  bool stores_every_element(const std::vector<int64_t> &shape) const;
  /// Whether no guard or divisibility condition involves index `j` (it can be tiled and
  /// vectorized freely).
  bool guard_free(size_t j) const;
};

inline constexpr const char *kAccName = "#acc";

/// The aggregation's identity in `t` (0 for +, 1 for *, lowest for >, highest for <).
Expr identity_of(tile::AggOp agg, Type t);
/// acc `agg` v (acc + v, max(acc, v), ...); Assign gives v.
Expr aggregate(tile::AggOp agg, Expr acc, Expr v);

/// An integer expression `sum coeffs[j] * index_j + constant` over the nest's index vars.
Expr linear_expr(const std::vector<int64_t> &coeffs, int64_t constant,
                 const std::vector<NestIndex> &indices);

}  // namespace tessera::compiler
