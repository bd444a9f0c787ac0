// Binding: a tile::Program plus the concrete types of its inputs gives a BoundProgram, where every
// name has a dtype and a shape, dimensions are numbers and index polynomials are affine forms.
// It is what the interpreter and the compiler consume.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tile/Affine.h"
#include "tile/DataType.h"
#include "tile/Program.h"

namespace tessera::tile {

struct TensorType {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  bool operator==(const TensorType &) const = default;
  /// Its element count; the type must have passed checked_bytes (an overflow is a Tessera bug).
  int64_t elements() const;
  /// Its size in bytes, or nullopt where the element or byte count overflows int64.
  std::optional<int64_t> checked_bytes() const;
  std::string str() const;  // "float32[2, 3]"
};

/// The bytes of tensor `name` of `type`. Throws tile::Error (message without location: "tensor 'C'
/// float32[4294967296, 4294967296] needs more than 9223372036854775807 bytes; no device holds
/// that much") where they overflow int64.
int64_t tensor_bytes(const std::string &name, const TensorType &type);
/// The one message for a tensor that does not fit a device: "tensor 'T' float32[1000000, 1000000]
/// needs 4000000000000 bytes; device cpu holds at most 25769803776".
std::string too_large_message(const std::string &name, const TensorType &type,
                              const std::string &device, int64_t limit);

/// An elementwise expression with its inferred type and broadcast shape. Dimension names and scalar
/// arguments that must be constant (reshape sizes, cast bits, axes) are folded to Int nodes.
struct BoundExpr;
using BoundExprPtr = std::shared_ptr<const BoundExpr>;
struct BoundExpr {
  Expr::Kind kind = Expr::Kind::Int;
  ValueType type;
  std::vector<int64_t> shape;
  int64_t int_value = 0;
  double float_value = 0;
  std::string name;  // Ref: a tensor name (an input or an earlier statement)
  Intrinsic op = Intrinsic::Ident;
  std::vector<BoundExprPtr> args;
  SourceRange range;
};

struct BoundAccess {
  std::string tensor;
  std::vector<Affine> dims;  // one affine form per tensor dimension
};

/// 0 <= poly < bound.
struct BoundConstraint {
  Affine poly;
  int64_t bound = 0;
};

struct BoundContraction {
  AggOp agg = AggOp::Sum;
  CombOp comb = CombOp::None;
  std::vector<std::string> indices;  // output indices first (in order of appearance), then the rest
  BoundAccess output;
  std::vector<BoundAccess> inputs;
  std::vector<BoundConstraint> constraints;
  std::optional<std::string> default_tensor;
  bool no_defract = false;
};

struct BoundStatement {
  std::string output;
  TensorType type;
  std::variant<BoundExprPtr, BoundContraction> body;
  SourceRange range;

  bool is_contraction() const { return std::holds_alternative<BoundContraction>(body); }
  const BoundContraction &contraction() const { return std::get<BoundContraction>(body); }
  const BoundExprPtr &expr() const { return std::get<BoundExprPtr>(body); }
};

struct BoundProgram {
  SourcePtr source;
  std::vector<std::pair<std::string, TensorType>> inputs;   // declaration order
  std::vector<std::pair<std::string, TensorType>> outputs;  // declaration order
  std::vector<BoundStatement> statements;
  std::map<std::string, TensorType> types;  // every tensor name: inputs and statements
  std::map<std::string, int64_t> dims;      // every dimension name and its size

  const TensorType &type_of(const std::string &name) const;
};

/// Binds `program` to concrete input types. Throws tile::Error, with the source location, for a
/// missing or unknown input, a rank that does not match the declaration, a dimension bound to two
/// sizes, a size that is not a non-negative integer, an access of the wrong rank, a type error
/// (bit operations on floats, ...) and an index polynomial that is not affine.
BoundProgram bind(const Program &program, const std::map<std::string, TensorType> &inputs);

}  // namespace tessera::tile
