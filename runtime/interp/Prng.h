// The counter-based generator behind prng_step / prng_state / prng_value: Philox4x32-10.
#pragma once

#include <array>
#include <cstdint>

#include "runtime/HostTensor.h"

namespace tessera::interp {

/// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3",
/// SC'11): ten rounds of the 4x32 bijection keyed by `key`.
std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

/// A 64-bit key from every element of a PRNG state tensor: splitmix64 folded over its elements
/// (as unsigned integers) in C order, so any change of the state changes the stream.
uint64_t prng_key(const HostTensor &state);

/// 32 random bits for element `index` of stream `stream`: word 0 of Philox applied to the counter
/// (index low, index high, stream, 0) with the key's two halves. Stream 0 gives prng_step's bits,
/// stream 1 the next state, so the two never share a counter.
uint32_t prng_bits(uint64_t key, uint64_t index, uint32_t stream);

}  // namespace tessera::interp
