// The SGEMM operands the OpenCL and Vulkan benchmarks share: an n x n float32 matrix of uniform
// values in [-1, 1) from a fixed seed.
#pragma once

#include <random>

#include "runtime/HostTensor.h"

namespace tessera::bench {

inline HostTensor random_matrix(int64_t n, uint32_t seed) {
  HostTensor t(tile::TensorType{tile::DType::Float32, {n, n}});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t i = 0; i < t.elements(); ++i) t.as<float>()[i] = u(rng);
  return t;
}

}  // namespace tessera::bench
