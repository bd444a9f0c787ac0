// The C++ EDSL: tensor programs written with operator overloading, producing tile::Program.
//
//   Tensor matmul(const Tensor &A, const Tensor &B) {
//     TensorDim M, K, N;
//     TensorIndex m, k, n;
//     A.bind_dims(M, K);
//     B.bind_dims(K, N);
//     Tensor C = TensorOutput(M, N);
//     C(m, n) += A(m, k) * B(k, n);
//     return C;
//   }
//
// Shapes are concrete: a Placeholder has a dtype and a shape, every Tensor knows its own, and a
// mismatch is reported when the expression is built (tessera::EdslError), not when it runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/Device.h"
#include "tile/DataType.h"
#include "tile/Program.h"

namespace tessera {

using tile::DType;

/// A bad EDSL call: wrong ranks, mismatched dimensions, bad arguments. Ops prefix their name.
class EdslError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace edsl_detail {
struct TensorNode;
struct IndexNode;
}  // namespace edsl_detail

/// A dimension size. Unbound until bind_dims (or constructed from a number); arithmetic on bound
/// dimensions gives bound dimensions.
class TensorDim {
 public:
  TensorDim();
  TensorDim(int64_t size);  // NOLINT: a number is a dimension
  bool is_bound() const;
  int64_t value() const;  // throws EdslError when unbound

  friend TensorDim operator+(const TensorDim &a, const TensorDim &b);
  friend TensorDim operator-(const TensorDim &a, const TensorDim &b);
  friend TensorDim operator*(const TensorDim &a, const TensorDim &b);
  friend TensorDim operator/(const TensorDim &a, const TensorDim &b);  // floor division

 private:
  friend class Tensor;
  std::shared_ptr<std::optional<int64_t>> size_;
};

class TensorIndex;

/// An affine expression of index variables, as used in tensor accesses: `2 * x + k - 1`.
class IndexExpr {
 public:
  IndexExpr(int64_t value);             // NOLINT
  IndexExpr(const TensorIndex &index);  // NOLINT
  const tile::PolyPtr &poly() const { return poly_; }
  const std::vector<std::shared_ptr<edsl_detail::IndexNode>> &index_nodes() const {
    return indices_;
  }

 private:
  friend IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator-(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator*(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator/(const IndexExpr &a, const IndexExpr &b);
  friend IndexExpr operator-(const IndexExpr &a);
  explicit IndexExpr(tile::PolyPtr p, std::vector<std::shared_ptr<edsl_detail::IndexNode>> indices);
  friend class TensorIndex;
  friend class Tensor;
  friend struct IndexedTensor;
  friend struct Constraint;
  tile::PolyPtr poly_;
  std::vector<std::shared_ptr<edsl_detail::IndexNode>> indices_;  // the variables it mentions
};

// Free functions (not hidden friends) so that `i + j` works on two TensorIndex values.
IndexExpr operator+(const IndexExpr &a, const IndexExpr &b);
IndexExpr operator-(const IndexExpr &a, const IndexExpr &b);
IndexExpr operator*(const IndexExpr &a, const IndexExpr &b);
IndexExpr operator/(const IndexExpr &a, const IndexExpr &b);  // gives rational coefficients (`i/2`)
IndexExpr operator-(const IndexExpr &a);

/// `0 <= expr < bound`, written `expr < bound`.
struct Constraint {
  IndexExpr expr;
  int64_t bound;
};
Constraint operator<(const IndexExpr &expr, const TensorDim &bound);

/// An index variable of a contraction. The name is a hint; clashes are renamed.
class TensorIndex {
 public:
  explicit TensorIndex(std::string name = "");
  friend IndexExpr;

 private:
  friend class IndexExpr;
  std::shared_ptr<edsl_detail::IndexNode> node_;
};

class Tensor;

struct ContractionInput;

/// A tensor access in a contraction, `A(i, k)`. On a TensorOutput it is also the left-hand side:
/// `O(i, j) += ...` (sum), `*=` (product), `>=` (max), `<=` (min), `=` (assign).
struct IndexedTensor {
  std::shared_ptr<edsl_detail::TensorNode> tensor;
  std::vector<IndexExpr> indices;

  IndexedTensor(std::shared_ptr<edsl_detail::TensorNode> t, std::vector<IndexExpr> i)
      : tensor(std::move(t)), indices(std::move(i)) {}
  IndexedTensor(const IndexedTensor &) = default;

  void operator+=(const ContractionInput &in) { define(tile::AggOp::Sum, in); }
  void operator*=(const ContractionInput &in) { define(tile::AggOp::Prod, in); }
  void operator>=(const ContractionInput &in) { define(tile::AggOp::Max, in); }
  void operator<=(const ContractionInput &in) { define(tile::AggOp::Min, in); }
  void operator=(const ContractionInput &in) { define(tile::AggOp::Assign, in); }
  // Assignment from another access is an `=` contraction too, not a copy.
  void operator=(const IndexedTensor &in);

 private:
  void define(tile::AggOp agg, const ContractionInput &in);
};

/// The right-hand side of a contraction: one access, or two or three combined.
struct ContractionInput {
  tile::CombOp comb = tile::CombOp::None;
  std::vector<IndexedTensor> accesses;
  ContractionInput(const IndexedTensor &a);  // NOLINT: a single access
  ContractionInput(tile::CombOp c, std::vector<IndexedTensor> a)
      : comb(c), accesses(std::move(a)) {}
};
ContractionInput operator*(const IndexedTensor &a, const IndexedTensor &b);
ContractionInput operator+(const IndexedTensor &a, const IndexedTensor &b);
ContractionInput operator==(const IndexedTensor &a, const IndexedTensor &b);
/// `cond(A(i) == B(j), C(k))`: C where the comparison holds, else nothing.
ContractionInput cond(const ContractionInput &eq, const IndexedTensor &value);

/// A tensor value: a placeholder, a constant, or the result of an operation.
class Tensor {
 public:
  Tensor() = default;
  Tensor(double value);   // NOLINT: a weakly typed float literal
  Tensor(int value);      // NOLINT: a weakly typed integer literal
  Tensor(int64_t value);  // NOLINT

  bool defined() const { return node_ != nullptr; }
  DType dtype() const;
  const std::vector<int64_t> &shape() const;
  size_t rank() const { return shape().size(); }
  const std::string &name() const;

  /// Binds each TensorDim to the size of the matching dimension (or checks it when already bound).
  template <typename... Dims>
  void bind_dims(Dims &...dims) const {
    bind_dim_list({&dims...});
  }
  void bind_dim_list(const std::vector<TensorDim *> &dims) const;
  std::vector<TensorDim> dims() const;

  /// An access for a contraction: `A(i, k + 1)`.
  template <typename... Index>
  IndexedTensor operator()(const Index &...idx) const {
    return IndexedTensor(node_, {IndexExpr(idx)...});
  }
  IndexedTensor operator()(const std::vector<IndexExpr> &idx) const {
    return IndexedTensor(node_, idx);
  }

  /// Contraction options; valid on a TensorOutput before or after it is defined.
  Tensor &add_constraint(const Constraint &c);
  Tensor &use_default(const Tensor &d);
  Tensor &no_defract();

  const std::shared_ptr<edsl_detail::TensorNode> &node() const { return node_; }
  explicit Tensor(std::shared_ptr<edsl_detail::TensorNode> n) : node_(std::move(n)) {}

 private:
  std::shared_ptr<edsl_detail::TensorNode> node_;
};

Tensor Placeholder(DType dtype, const std::vector<int64_t> &shape, const std::string &name = "");
/// The output of a contraction to be defined by `O(i, j) += ...`.
Tensor TensorOutput(const std::vector<TensorDim> &sizes);
template <typename... Dims>
Tensor TensorOutput(const Dims &...sizes) {
  return TensorOutput(std::vector<TensorDim>{TensorDim(sizes)...});
}

// Elementwise arithmetic with numpy broadcasting and Tile's type promotion.
Tensor operator+(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a, const Tensor &b);
Tensor operator*(const Tensor &a, const Tensor &b);
Tensor operator/(const Tensor &a, const Tensor &b);
Tensor operator-(const Tensor &a);
Tensor operator==(const Tensor &a, const Tensor &b);
Tensor operator!=(const Tensor &a, const Tensor &b);
Tensor operator<(const Tensor &a, const Tensor &b);
Tensor operator>(const Tensor &a, const Tensor &b);
Tensor operator<=(const Tensor &a, const Tensor &b);
Tensor operator>=(const Tensor &a, const Tensor &b);
Tensor operator&(const Tensor &a, const Tensor &b);
Tensor operator|(const Tensor &a, const Tensor &b);
Tensor operator^(const Tensor &a, const Tensor &b);
Tensor operator<<(const Tensor &a, const Tensor &b);
Tensor operator>>(const Tensor &a, const Tensor &b);
Tensor operator~(const Tensor &a);

/// Any elementwise intrinsic or special by its Tile name: call("exp", {x}), call("reshape", {x, 2,
/// 3}).
Tensor call(tile::Intrinsic op, const std::vector<Tensor> &args);
Tensor exp(const Tensor &x);
Tensor log(const Tensor &x);
Tensor sqrt(const Tensor &x);
Tensor pow(const Tensor &x, const Tensor &y);
Tensor tanh(const Tensor &x);
Tensor sigmoid(const Tensor &x);
Tensor abs(const Tensor &x);
Tensor max(const Tensor &a, const Tensor &b);
Tensor min(const Tensor &a, const Tensor &b);
Tensor select(const Tensor &c, const Tensor &a, const Tensor &b);  // Tile's cond
Tensor cast(const Tensor &x, DType to);
Tensor reshape(const Tensor &x, const std::vector<int64_t> &shape);
Tensor index(const Tensor &x, int axis);  // int32 coordinates along `axis`
Tensor gather(const Tensor &x, const Tensor &indices);
Tensor scatter(const Tensor &x, const Tensor &indices, const Tensor &like);
/// Counter-based random numbers: a step from a uint32 state makes values of `shape` in [0, 1)
/// (prng_value) and the next state (prng_state).
Tensor prng_step(const Tensor &state, const std::vector<int64_t> &shape);
Tensor prng_value(const Tensor &step);
Tensor prng_state(const Tensor &step);

/// A program built from EDSL tensors, with the types of its inputs.
struct Function {
  tile::Program program;
  std::map<std::string, tile::TensorType> input_types;
  std::string tile_text() const;  // the program as Tile
};

/// The program computing `outputs` (named) from placeholders. Its inputs are the placeholders the
/// outputs depend on, in creation order, unless `inputs` gives them (and their order).
Function build(const std::vector<std::pair<std::string, Tensor>> &outputs,
               const std::vector<Tensor> &inputs = {});

/// Binds `fn` to its input types and compiles it for `device` ("" = the default device), with
/// `options` (CompileOptions::constants: inputs whose values are compiled in, for inference).
std::unique_ptr<Executable> compile(const Function &fn, const std::string &device = "",
                                    const CompileOptions &options = {});

}  // namespace tessera
