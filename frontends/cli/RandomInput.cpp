#include "frontends/cli/RandomInput.h"

#include <cmath>

namespace tessera::cli {

namespace {

uint64_t fnv1a64(const std::string &text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int significand_bits(tile::DType t) {
  return t == tile::DType::Float16 ? 11 : t == tile::DType::Float32 ? 24 : 53;
}

}  // namespace

void fill_random(HostTensor &tensor, uint64_t seed, const std::string &name) {
  if (!tile::is_float(tensor.dtype())) {
    for (int64_t i = 0; i < tensor.elements(); ++i) tensor.set_int(i, 1);
    return;
  }
  int p = significand_bits(tensor.dtype());
  uint64_t state = seed ^ fnv1a64(name);
  for (int64_t i = 0; i < tensor.elements(); ++i) {
    uint64_t x = splitmix64(state);
    tensor.set_double(i, 0.5 + std::ldexp(static_cast<double>(x >> (65 - p)), 1 - p));
  }
}

}  // namespace tessera::cli
