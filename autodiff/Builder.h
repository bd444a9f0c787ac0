// GradientBuilder: the state of one gradient computation — the statements being emitted, the
// symbolic shape and kind of every name, fresh names, and the gradient contributions per value.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tile/Program.h"

namespace tessera::autodiff {

/// Symbolic dimensions: integer expressions over the program's dimension names.
using Dims = std::vector<tile::ExprPtr>;

/// What autodiff needs to know of an element type before binding: Unknown is an input whose
/// type the caller did not give (treated as float: differentiable).
enum class Kind { Bool, Int, Float, Unknown };
Kind promote_kind(Kind a, Kind b);
inline bool differentiable(Kind k) { return k == Kind::Float || k == Kind::Unknown; }

class GradientBuilder;

/// Writes the gradients of a statement's inputs given the name of the gradient of its output
/// (PlaidML's OverrideGrads). Returns input name -> name of a tensor of that input's shape; names
/// it leaves out receive nothing from this statement.
using GradientOverride = std::function<std::map<std::string, std::string>(
    GradientBuilder &b, const tile::Statement &stmt, const std::string &d_out)>;
/// Statement name -> its override.
using GradientOverrides = std::map<std::string, GradientOverride>;

class GradientBuilder {
 public:
  GradientBuilder(const tile::Program &src, const std::map<std::string, Kind> &input_kinds);

  const tile::Program &source() const { return src_; }

  /// Symbolic shape of a tensor name (input, forward statement or emitted statement).
  const Dims &dims(const std::string &name) const;
  Kind kind(const std::string &name) const;
  bool is_tensor(const std::string &name) const { return dims_.count(name) != 0; }
  /// Shape and kind of an elementwise expression (numpy broadcasting over symbolic dims).
  Dims shape_of(const tile::ExprPtr &e) const;
  Kind kind_of(const tile::ExprPtr &e) const;

  /// A name no source or emitted name uses, built from `hint`.
  std::string fresh(const std::string &hint);
  /// Appends `NAME = e;` and returns NAME (`name` empty: a fresh one).
  std::string emit(const tile::ExprPtr &e, const std::string &hint, const std::string &name = "");
  /// Appends the contraction (its output tensor is set here) and returns its name.
  std::string emit(tile::Contraction c, const std::string &hint, const std::string &name = "");
  /// A Ref to `e` as a named tensor (emits a statement unless `e` is already a tensor Ref).
  std::string name_of(const tile::ExprPtr &e, const std::string &hint);

  /// Sums `g` (an expression of shape `from`) down to `to`, undoing numpy broadcasting.
  tile::ExprPtr unbroadcast(const tile::ExprPtr &g, const Dims &from, const Dims &to,
                            const std::string &hint);

  /// Adds a gradient contribution (a tensor of `name`'s shape) to value `name`.
  void add_grad(const std::string &name, const std::string &grad);
  /// The summed gradient of `name`, or "" when nothing flowed into it.
  std::string total_grad(const std::string &name);

  /// Index variable names no contraction of this gradient uses.
  std::string fresh_index();

  std::vector<tile::Statement> &statements() { return out_; }
  /// Registers a tensor the gradient program adds as an input (the seed).
  void declare(const std::string &name, Dims dims, Kind kind);

  /// Set by the driver: whether a name depends on a `wrt` name through differentiable values.
  std::set<std::string> active;

 private:
  void infer_source();
  Dims special_shape(const tile::ExprPtr &e) const;
  Kind special_kind(const tile::ExprPtr &e) const;
  Dims builtin_shape(const tile::BuiltinCall &call) const;
  Kind builtin_kind(const tile::BuiltinCall &call) const;

  const tile::Program &src_;
  std::map<std::string, Dims> dims_;
  std::map<std::string, Kind> kinds_;
  std::set<std::string> unshaped_;  // bare inputs `X` without declared dims
  std::set<std::string> used_;
  std::map<std::string, std::vector<std::string>> grads_;
  std::vector<tile::Statement> out_;
  int counter_ = 0;
  int index_counter_ = 0;
};

/// Expression helpers used by the rules.
namespace ex {
tile::ExprPtr ref(const std::string &name);
tile::ExprPtr lit(double v);
tile::ExprPtr int_lit(int64_t v);
tile::ExprPtr call(tile::Intrinsic op, std::vector<tile::ExprPtr> args);
tile::ExprPtr add(tile::ExprPtr a, tile::ExprPtr b);
tile::ExprPtr sub(tile::ExprPtr a, tile::ExprPtr b);
tile::ExprPtr mul(tile::ExprPtr a, tile::ExprPtr b);
tile::ExprPtr div(tile::ExprPtr a, tile::ExprPtr b);
tile::ExprPtr neg(tile::ExprPtr a);
tile::ExprPtr select(tile::ExprPtr c, tile::ExprPtr a, tile::ExprPtr b);
bool same_dims(const Dims &a, const Dims &b);
bool is_int(const tile::ExprPtr &e, int64_t v);
/// A size expression as an index polynomial (for bounds and coefficients); null if it has a call
/// other than add, sub, mul, div, neg.
tile::PolyPtr to_poly(const tile::ExprPtr &e);
}  // namespace ex

}  // namespace tessera::autodiff
