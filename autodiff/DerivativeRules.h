// DerivativeRules: the backward rule of each kind of statement, one named function per case.
// Each rule reads the gradient of a statement's output (`d_out`, a tensor of the output's shape)
// and adds gradient contributions to the statement's active inputs through the builder.
#pragma once

#include <string>
#include <vector>

#include "autodiff/Builder.h"
#include "tile/Program.h"

namespace tessera::autodiff {

// ---- contractions (ContractionRules.cpp) ----
/// `O = +(A[..] * B[..])`, `+(I)`, `=(I)`: dI[acc_I] = +(dO[out] * other[acc]), same constraints.
void sum_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);
/// `O = +(A[..] + B[..])`: dA[acc_A] = +(dO[out]), B's access range kept as constraints.
void sum_of_sum_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);
/// `O = >(I[..])`, `<(I[..])`: dI[in] = +(I[in] == O[out] ? dO[out]); every tied element gets it.
void max_min_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);
/// `O = *(I[..])`: exact with zeros (count of zeros and product of the non-zeros per output).
void product_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);
/// `O = agg(A == B ? C)`: the gradient flows to C only, where A == B.
void ternary_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);
/// `default T`: T receives dO where no point wrote.
void default_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);
/// Dispatches on agg/comb; `==` combinations are not differentiable (nothing flows).
void contraction_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);

// ---- elementwise (ElementwiseRules.cpp) ----
/// Given a call's arguments `a`, its value `y` and its gradient `g` (the call's broadcast shape),
/// the gradient for each argument before unbroadcasting; null for none (not differentiable).
using ElementwiseRule = std::vector<tile::ExprPtr> (*)(const std::vector<tile::ExprPtr> &a,
                                                       const tile::ExprPtr &y,
                                                       const tile::ExprPtr &g);
/// The rule for an intrinsic, or null when it is not differentiable (comparisons, bit ops,
/// integer casts, specials).
ElementwiseRule elementwise_rule(tile::Intrinsic op);

// ---- builtins (BuiltinRules.cpp) ----
/// PlaidML's own derivative of each builtin (its DerivDefines), not the derivative of the
/// statements it expands into: reverse_grad scales by -X2, binary crossentropy divides by X3.
void builtin_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);

// ---- expressions and specials (ExpressionGradient.cpp) ----
/// Walks an elementwise statement's expression tree (or a special at its root: gather -> scatter,
/// scatter -> gather, reshape -> reshape) and adds contributions to the active tensors it reads.
void expression_rule(GradientBuilder &b, const tile::Statement &s, const std::string &d_out);

}  // namespace tessera::autodiff
