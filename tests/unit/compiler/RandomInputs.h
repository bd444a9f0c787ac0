// Inputs for a bound program's oracle checks: each element uniform in [lo, hi), from `seed`.
#pragma once

#include <random>

#include "runtime/HostTensor.h"
#include "tile/Bind.h"

namespace tessera::test {

inline TensorMap random_inputs(const tile::BoundProgram &p, unsigned seed, double lo = -1,
                               double hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  TensorMap out;
  for (const auto &[name, type] : p.inputs) {
    HostTensor t(type);
    for (int64_t i = 0; i < t.elements(); ++i) t.set_double(i, u(rng));
    out[name] = std::move(t);
  }
  return out;
}

}  // namespace tessera::test
