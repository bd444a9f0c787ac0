// HostTensor: zero fill, alignment and the element converters.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/HostTensor.h"

namespace tessera {
namespace {

using tile::DType;

TEST(HostTensor, ZeroFilledWithTheRightSize) {
  HostTensor t(tile::TensorType{DType::Int16, {2, 3}});
  EXPECT_EQ(t.elements(), 6);
  EXPECT_EQ(t.bytes(), 12u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.get_int(i), 0);
}

TEST(HostTensor, StorageIsCacheLineAligned) {
  // Kernels load whole vectors from inputs and store them to outputs: every tensor, copies
  // included, starts on a 64-byte boundary (malloc alone gives 16 here).
  for (int64_t n : {1, 3, 17, 1000, 100000}) {
    HostTensor t(tile::TensorType{DType::Float32, {n}});
    HostTensor copy = t;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % 64, 0u) << n;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.data()) % 64, 0u) << n;
  }
}

TEST(HostTensor, FloatToIntTruncatesAndSaturates) {
  HostTensor t(tile::TensorType{DType::Int32, {4}});
  t.set_double(0, 3.7);
  t.set_double(1, -3.7);
  t.set_double(2, -1e10);
  t.set_double(3, NAN);
  EXPECT_EQ(t.as<int32_t>()[0], 3);
  EXPECT_EQ(t.as<int32_t>()[1], -3);
  EXPECT_EQ(t.as<int32_t>()[2], INT32_MIN);
  EXPECT_EQ(t.as<int32_t>()[3], 0);
}

TEST(HostTensor, IntToIntWraps) {
  HostTensor t(tile::TensorType{DType::UInt8, {2}});
  t.set_int(0, 300);
  t.set_int(1, -1);
  EXPECT_EQ(t.as<uint8_t>()[0], 44);
  EXPECT_EQ(t.get_int(1), 255);
  HostTensor u(tile::TensorType{DType::UInt64, {1}});
  u.set_uint(0, UINT64_MAX);
  EXPECT_EQ(u.get_uint(0), UINT64_MAX);
  EXPECT_EQ(u.get_int(0), -1);  // the same bits
}

TEST(HostTensor, BoolAndHalf) {
  HostTensor b(tile::TensorType{DType::Bool, {2}});
  b.set_double(0, 0.5);
  b.set_int(1, 0);
  EXPECT_EQ(b.as<uint8_t>()[0], 1);
  EXPECT_EQ(b.get_double(1), 0.0);
  HostTensor h(tile::TensorType{DType::Float16, {2}});
  h.set_double(0, 0.1);
  h.set_double(1, 70000);  // above the largest float16 (65504)
  EXPECT_EQ(h.get_double(0), 0.0999755859375);
  EXPECT_TRUE(std::isinf(h.get_double(1)));
  EXPECT_EQ(h.as<uint16_t>()[0], 0x2E66);  // IEEE binary16 bits of 0.1
}

}  // namespace
}  // namespace tessera
