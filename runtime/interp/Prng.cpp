#include "runtime/interp/Prng.h"

namespace tessera::interp {

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> k) {
  constexpr uint32_t kM0 = 0xD2511F53, kM1 = 0xCD9E8D57;  // round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9, kW1 = 0xBB67AE85;  // Weyl key increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k = {k[0] + kW0, k[1] + kW1};
    uint64_t p0 = static_cast<uint64_t>(kM0) * c[0];
    uint64_t p1 = static_cast<uint64_t>(kM1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k[1], static_cast<uint32_t>(p0)};
  }
  return c;
}

namespace {
uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t prng_key(const HostTensor &state) {
  uint64_t h = 0;
  for (int64_t i = 0; i < state.elements(); ++i) h = splitmix64(h ^ state.get_uint(i));
  return h;
}

uint32_t prng_bits(uint64_t key, uint64_t index, uint32_t stream) {
  auto out =
      philox4x32_10({static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32), stream, 0},
                    {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)});
  return out[0];
}

}  // namespace tessera::interp
