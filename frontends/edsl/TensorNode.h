// The EDSL's expression graph: what a tessera::Tensor points at. Internal to frontends/edsl.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/edsl.h"
#include "tile/Bind.h"

namespace tessera::edsl_detail {

struct IndexNode {
  std::string hint;  // the name the user gave, if any
  std::string key;   // "%<serial>": how polynomials refer to it until a program names it
};

struct ContractionSpec {
  tile::AggOp agg = tile::AggOp::Sum;
  tile::CombOp comb = tile::CombOp::None;
  std::vector<IndexExpr> output;
  std::vector<IndexedTensor> inputs;
};

struct TensorNode {
  enum class Kind { Placeholder, Literal, Call, Contraction };
  Kind kind = Kind::Placeholder;
  tile::ValueType type;
  std::vector<int64_t> shape;
  std::string name;    // placeholders; others get names when a program is built
  int64_t serial = 0;  // creation order: placeholders become inputs in this order

  // Literal
  bool is_float = false;
  double float_value = 0;
  int64_t int_value = 0;

  // Call: elementwise intrinsics and specials. Literal arguments (sizes, axes, bits) are Literal
  // nodes.
  tile::Intrinsic op = tile::Intrinsic::Ident;
  std::vector<std::shared_ptr<TensorNode>> args;

  // Contraction
  std::optional<ContractionSpec> contraction;
  std::vector<Constraint> constraints;
  std::shared_ptr<TensorNode> default_value;
  bool no_defract = false;
};

using NodePtr = std::shared_ptr<TensorNode>;

NodePtr make_node(TensorNode::Kind kind);

/// Converts a graph to a Program: one statement per Call or Contraction node, literals inlined.
/// `inputs` are the nodes that become program inputs (placeholders, or any node when inferring).
class ProgramBuilder {
 public:
  tile::Program build(const std::vector<std::pair<std::string, NodePtr>> &outputs,
                      std::vector<NodePtr> inputs);

 private:
  std::string name_of(const NodePtr &n);
  tile::ExprPtr operand(const NodePtr &n);
  void emit(const NodePtr &n);
  tile::Statement contraction_statement(const NodePtr &n);

  tile::Program program_;
  std::vector<std::pair<const TensorNode *, std::string>> names_;
  std::vector<const TensorNode *> emitted_;
  std::vector<const TensorNode *> inputs_;
  int next_temp_ = 0;
};

/// Fills in `n`'s type and shape from its operands by binding a one-statement program, so that the
/// EDSL and the Tile front end share one set of typing rules. Throws EdslError.
void infer_type(const NodePtr &n);

}  // namespace tessera::edsl_detail
