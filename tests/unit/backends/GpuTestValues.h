// Operands the OpenCL and Vulkan device tests share: a bound matmul, small-integer float values
// (every product and sum exact, so results compare with ==), their bytes, and the hand product.
#pragma once

#include <cstring>
#include <random>
#include <vector>

#include "tile/Bind.h"
#include "tile/Parser.h"

namespace tessera::test {

inline tile::BoundProgram matmul(int64_t m, int64_t k, int64_t n) {
  auto p = tile::parse_program(
      "function (A[M, K], B[K, N]) -> (C) { C[i, j : M, N] = +(A[i, k] * B[k, j]); }");
  return tile::bind(p,
                    {{"A", {tile::DType::Float32, {m, k}}}, {"B", {tile::DType::Float32, {k, n}}}});
}

inline std::vector<float> values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(-4, 4);
  std::vector<float> v(n);
  for (auto &x : v) x = static_cast<float>(u(rng));
  return v;
}

inline std::vector<std::byte> bytes_of(const std::vector<float> &v) {
  std::vector<std::byte> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

inline std::vector<float> hand_matmul(const std::vector<float> &a, const std::vector<float> &b,
                                      int64_t m, int64_t k, int64_t n) {
  std::vector<float> c(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t r = 0; r < k; ++r) c[i * n + j] += a[i * k + r] * b[r * n + j];
  return c;
}

}  // namespace tessera::test
