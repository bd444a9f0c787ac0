// Philox4x32-10 against the known-answer vectors of Random123 (kat_vectors).
#include <gtest/gtest.h>

#include "runtime/interp/Prng.h"

namespace tessera::interp {
namespace {

using Words = std::array<uint32_t, 4>;

TEST(Philox, KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(
      philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
      (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
      (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, StreamsAndKeysDiffer) {
  EXPECT_NE(prng_bits(1, 0, 0), prng_bits(1, 0, 1));
  EXPECT_NE(prng_bits(1, 0, 0), prng_bits(2, 0, 0));
  EXPECT_NE(prng_bits(1, 0, 0), prng_bits(1, 1, 0));
  EXPECT_EQ(prng_bits(5, 9, 0), prng_bits(5, 9, 0));
}

}  // namespace
}  // namespace tessera::interp
