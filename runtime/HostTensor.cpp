#include "runtime/HostTensor.h"

#include <cmath>
#include <limits>

#include "tile/Diagnostics.h"

namespace tessera {

using tile::DType;

HostTensor::HostTensor(tile::TensorType type) : HostTensor(uninitialized(std::move(type))) {
  if (!data_.empty()) std::memset(data_.data(), 0, data_.size());
}

HostTensor HostTensor::uninitialized(tile::TensorType type) {
  HostTensor t;
  t.data_.resize(static_cast<size_t>(type.elements()) * tile::dtype_size(type.dtype));
  t.type_ = std::move(type);
  return t;
}

namespace {
template <typename T>
T load(const std::byte *p, int64_t i) {
  T v;
  std::memcpy(&v, p + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
  return v;
}
template <typename T>
void store(std::byte *p, int64_t i, T v) {
  std::memcpy(p + i * static_cast<int64_t>(sizeof(T)), &v, sizeof(T));
}

// Float to integer: truncate toward zero, saturate at the type's limits, NaN gives 0 (the C
// conversion is undefined there; every device must agree with this).
template <typename T>
T saturate(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}
}  // namespace

double HostTensor::get_double(int64_t i) const {
  const std::byte *p = data_.data();
  switch (type_.dtype) {
    case DType::Bool: return load<uint8_t>(p, i) != 0;
    case DType::Int8: return load<int8_t>(p, i);
    case DType::Int16: return load<int16_t>(p, i);
    case DType::Int32: return load<int32_t>(p, i);
    case DType::Int64: return static_cast<double>(load<int64_t>(p, i));
    case DType::UInt8: return load<uint8_t>(p, i);
    case DType::UInt16: return load<uint16_t>(p, i);
    case DType::UInt32: return load<uint32_t>(p, i);
    case DType::UInt64: return static_cast<double>(load<uint64_t>(p, i));
    case DType::Float16: return static_cast<double>(load<_Float16>(p, i));
    case DType::Float32: return load<float>(p, i);
    case DType::Float64: return load<double>(p, i);
  }
  TESSERA_INTERNAL_ASSERT(false, "bad dtype");
  return 0;
}

int64_t HostTensor::get_int(int64_t i) const {
  const std::byte *p = data_.data();
  switch (type_.dtype) {
    case DType::Bool: return load<uint8_t>(p, i) != 0;
    case DType::Int8: return load<int8_t>(p, i);
    case DType::Int16: return load<int16_t>(p, i);
    case DType::Int32: return load<int32_t>(p, i);
    case DType::Int64: return load<int64_t>(p, i);
    case DType::UInt8: return load<uint8_t>(p, i);
    case DType::UInt16: return load<uint16_t>(p, i);
    case DType::UInt32: return load<uint32_t>(p, i);
    case DType::UInt64: return static_cast<int64_t>(load<uint64_t>(p, i));  // two's complement
    case DType::Float16:
    case DType::Float32:
    case DType::Float64: return saturate<int64_t>(get_double(i));
  }
  TESSERA_INTERNAL_ASSERT(false, "bad dtype");
  return 0;
}

uint64_t HostTensor::get_uint(int64_t i) const {
  switch (type_.dtype) {
    case DType::UInt64: return load<uint64_t>(data_.data(), i);
    case DType::Float16:
    case DType::Float32:
    case DType::Float64: return saturate<uint64_t>(get_double(i));
    case DType::Bool:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8:
    case DType::UInt16:
    case DType::UInt32: return static_cast<uint64_t>(get_int(i));
  }
  TESSERA_INTERNAL_ASSERT(false, "bad dtype");
  return 0;
}

void HostTensor::set_double(int64_t i, double v) {
  std::byte *p = data_.data();
  switch (type_.dtype) {
    case DType::Bool: return store<uint8_t>(p, i, v != 0);
    case DType::Int8: return store(p, i, saturate<int8_t>(v));
    case DType::Int16: return store(p, i, saturate<int16_t>(v));
    case DType::Int32: return store(p, i, saturate<int32_t>(v));
    case DType::Int64: return store(p, i, saturate<int64_t>(v));
    case DType::UInt8: return store(p, i, saturate<uint8_t>(v));
    case DType::UInt16: return store(p, i, saturate<uint16_t>(v));
    case DType::UInt32: return store(p, i, saturate<uint32_t>(v));
    case DType::UInt64: return store(p, i, saturate<uint64_t>(v));
    case DType::Float16: return store(p, i, static_cast<_Float16>(v));
    case DType::Float32: return store(p, i, static_cast<float>(v));
    case DType::Float64: return store(p, i, v);
  }
  TESSERA_INTERNAL_ASSERT(false, "bad dtype");
}

// Integer to integer wraps modulo 2^bits (C++20 conversions); bool stores v != 0.
void HostTensor::set_int(int64_t i, int64_t v) {
  std::byte *p = data_.data();
  switch (type_.dtype) {
    case DType::Bool: return store<uint8_t>(p, i, v != 0);
    case DType::Int8: return store(p, i, static_cast<int8_t>(v));
    case DType::Int16: return store(p, i, static_cast<int16_t>(v));
    case DType::Int32: return store(p, i, static_cast<int32_t>(v));
    case DType::Int64: return store(p, i, v);
    case DType::UInt8: return store(p, i, static_cast<uint8_t>(v));
    case DType::UInt16: return store(p, i, static_cast<uint16_t>(v));
    case DType::UInt32: return store(p, i, static_cast<uint32_t>(v));
    case DType::UInt64: return store(p, i, static_cast<uint64_t>(v));
    case DType::Float16:
    case DType::Float32:
    case DType::Float64: return set_double(i, static_cast<double>(v));
  }
  TESSERA_INTERNAL_ASSERT(false, "bad dtype");
}

void HostTensor::set_uint(int64_t i, uint64_t v) {
  if (tile::is_float(type_.dtype)) return set_double(i, static_cast<double>(v));
  set_int(i, static_cast<int64_t>(v));
}

}  // namespace tessera
