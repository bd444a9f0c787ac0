// autodiff::gradient: reverse-mode differentiation of a tile::Program into another tile::Program.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "autodiff/Builder.h"
#include "tile/DataType.h"
#include "tile/Program.h"

namespace tessera::autodiff {

/// The vector-Jacobian product of `of` with respect to each name in `wrt`, as a Program whose
/// inputs are p's inputs plus `d_<of>` (the seed, of's shape) and whose outputs are `d_<x>` (x's
/// shape). Input element types are unknown to an unbound program; `input_types` (optional) lets
/// callers that know them (the EDSL) reject integer `wrt` inputs. Throws tile::Error, located where
/// the program has a location, for an unknown name, a name that is not a tensor, a
/// non-differentiable `of` (bool or integer), an integer `wrt`. A `wrt` that `of` does not depend
/// on gets zeros.
tile::Program gradient(const tile::Program &p, const std::string &of,
                       const std::vector<std::string> &wrt, const GradientOverrides &overrides = {},
                       const std::map<std::string, tile::DType> &input_types = {});

}  // namespace tessera::autodiff
