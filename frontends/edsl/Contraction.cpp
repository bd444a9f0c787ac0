// Dimensions, index expressions and contractions of the EDSL.
#include <algorithm>

#include "frontends/edsl/TensorNode.h"

namespace tessera {

using edsl_detail::NodePtr;
using edsl_detail::TensorNode;

// ---- TensorDim --------------------------------------------------------------------------------

TensorDim::TensorDim() : size_(std::make_shared<std::optional<int64_t>>()) {}
TensorDim::TensorDim(int64_t size) : size_(std::make_shared<std::optional<int64_t>>(size)) {}
bool TensorDim::is_bound() const { return size_->has_value(); }
int64_t TensorDim::value() const {
  if (!is_bound()) throw EdslError("a TensorDim is used before bind_dims gave it a size");
  return **size_;
}

TensorDim operator+(const TensorDim &a, const TensorDim &b) { return a.value() + b.value(); }
TensorDim operator-(const TensorDim &a, const TensorDim &b) { return a.value() - b.value(); }
TensorDim operator*(const TensorDim &a, const TensorDim &b) { return a.value() * b.value(); }
TensorDim operator/(const TensorDim &a, const TensorDim &b) {
  int64_t x = a.value(), y = b.value();
  if (y == 0) throw EdslError("TensorDim division by zero");
  int64_t q = x / y;
  return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}

// ---- Index expressions ------------------------------------------------------------------------

TensorIndex::TensorIndex(std::string name) : node_(std::make_shared<edsl_detail::IndexNode>()) {
  static int64_t serial = 0;
  node_->hint = std::move(name);
  node_->key = "%" + std::to_string(++serial);
}

IndexExpr::IndexExpr(int64_t value) : poly_(tile::Poly::make_int(value)) {}
IndexExpr::IndexExpr(const TensorIndex &index)
    : poly_(tile::Poly::make_index(index.node_->key)), indices_{index.node_} {}
IndexExpr::IndexExpr(tile::PolyPtr p, std::vector<std::shared_ptr<edsl_detail::IndexNode>> indices)
    : poly_(std::move(p)), indices_(std::move(indices)) {}

static std::vector<std::shared_ptr<edsl_detail::IndexNode>> merge(const IndexExpr &a,
                                                                  const IndexExpr &b) {
  auto out = a.index_nodes();
  for (const auto &n : b.index_nodes())
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

IndexExpr operator+(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(tile::Poly::make_binary(tile::Poly::Kind::Add, a.poly_, b.poly_), merge(a, b));
}
IndexExpr operator-(const IndexExpr &a, const IndexExpr &b) {
  return IndexExpr(tile::Poly::make_binary(tile::Poly::Kind::Sub, a.poly_, b.poly_), merge(a, b));
}
IndexExpr operator*(const IndexExpr &a, const IndexExpr &b) {
  if (!a.indices_.empty() && !b.indices_.empty())
    throw EdslError("index expressions must be affine: cannot multiply two index variables");
  return IndexExpr(tile::Poly::make_binary(tile::Poly::Kind::Mul, a.poly_, b.poly_), merge(a, b));
}
IndexExpr operator/(const IndexExpr &a, const IndexExpr &b) {
  if (!b.indices_.empty())
    throw EdslError("index expressions must be affine: cannot divide by an index variable");
  return IndexExpr(tile::Poly::make_binary(tile::Poly::Kind::Div, a.poly_, b.poly_), merge(a, b));
}
IndexExpr operator-(const IndexExpr &a) {
  if (a.poly_->kind == tile::Poly::Kind::Int) return IndexExpr(-a.poly_->value);
  return IndexExpr(tile::Poly::make_unary(tile::Poly::Kind::Neg, a.poly_), a.indices_);
}

Constraint operator<(const IndexExpr &expr, const TensorDim &bound) {
  return Constraint{expr, bound.value()};
}

// ---- Contractions -----------------------------------------------------------------------------

ContractionInput::ContractionInput(const IndexedTensor &a) : accesses{a} {}
ContractionInput operator*(const IndexedTensor &a, const IndexedTensor &b) {
  return {tile::CombOp::Mul, {a, b}};
}
ContractionInput operator+(const IndexedTensor &a, const IndexedTensor &b) {
  return {tile::CombOp::Add, {a, b}};
}
ContractionInput operator==(const IndexedTensor &a, const IndexedTensor &b) {
  return {tile::CombOp::Eq, {a, b}};
}
ContractionInput cond(const ContractionInput &eq, const IndexedTensor &value) {
  if (eq.comb != tile::CombOp::Eq)
    throw EdslError("cond() takes a comparison A(..) == B(..) and a value");
  auto accesses = eq.accesses;
  accesses.push_back(value);
  return {tile::CombOp::Cond, accesses};
}

Tensor TensorOutput(const std::vector<TensorDim> &sizes) {
  NodePtr n = edsl_detail::make_node(TensorNode::Kind::Contraction);
  for (const auto &d : sizes) {
    if (d.value() < 0) throw EdslError("TensorOutput: negative size " + std::to_string(d.value()));
    n->shape.push_back(d.value());
  }
  return Tensor(n);
}

void IndexedTensor::operator=(const IndexedTensor &in) {
  define(tile::AggOp::Assign, ContractionInput(in));
}

void IndexedTensor::define(tile::AggOp agg, const ContractionInput &in) {
  NodePtr n = tensor;
  if (!n || n->kind != TensorNode::Kind::Contraction)
    throw EdslError("only a TensorOutput can be the left-hand side of a contraction");
  if (n->contraction) throw EdslError("this TensorOutput's contraction is already defined");
  if (indices.size() != n->shape.size())
    throw EdslError("contraction output has rank " + std::to_string(n->shape.size()) +
                    " but is indexed with " + std::to_string(indices.size()) + " indices");
  for (const auto &a : in.accesses) {
    if (!a.tensor) throw EdslError("a contraction reads an undefined Tensor");
    if (a.indices.size() != a.tensor->shape.size())
      throw EdslError("a tensor of rank " + std::to_string(a.tensor->shape.size()) +
                      " is indexed with " + std::to_string(a.indices.size()) + " indices");
  }
  n->contraction = edsl_detail::ContractionSpec{agg, in.comb, indices, in.accesses};
  edsl_detail::infer_type(n);
}

Tensor &Tensor::add_constraint(const Constraint &c) {
  if (!node_ || node_->kind != TensorNode::Kind::Contraction)
    throw EdslError("constraints belong to a TensorOutput");
  node_->constraints.push_back(c);
  return *this;
}

Tensor &Tensor::use_default(const Tensor &d) {
  if (!node_ || node_->kind != TensorNode::Kind::Contraction)
    throw EdslError("a default belongs to a TensorOutput");
  if (d.shape() != node_->shape)
    throw EdslError("a contraction's default must have the output's shape");
  node_->default_value = d.node();
  return *this;
}

Tensor &Tensor::no_defract() {
  if (!node_ || node_->kind != TensorNode::Kind::Contraction)
    throw EdslError("no_defract belongs to a TensorOutput");
  node_->no_defract = true;
  return *this;
}

}  // namespace tessera
