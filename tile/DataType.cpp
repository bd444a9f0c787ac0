#include "tile/DataType.h"

#include <algorithm>

namespace tessera::tile {

namespace {
struct DTypeInfo {
  DType type;
  std::string_view name;
  std::string_view short_name;
  int bits;
};

constexpr DTypeInfo kInfo[] = {
    {DType::Bool, "bool", "b1", 8},         {DType::Int8, "int8", "i8", 8},
    {DType::Int16, "int16", "i16", 16},     {DType::Int32, "int32", "i32", 32},
    {DType::Int64, "int64", "i64", 64},     {DType::UInt8, "uint8", "u8", 8},
    {DType::UInt16, "uint16", "u16", 16},   {DType::UInt32, "uint32", "u32", 32},
    {DType::UInt64, "uint64", "u64", 64},   {DType::Float16, "float16", "f16", 16},
    {DType::Float32, "float32", "f32", 32}, {DType::Float64, "float64", "f64", 64},
};

const DTypeInfo &info(DType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_short_name(DType t) { return info(t).short_name; }

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto &i : kInfo)
    if (i.name == name || i.short_name == name) return i.type;
  if (name == "half") return DType::Float16;
  if (name == "float") return DType::Float32;
  if (name == "double") return DType::Float64;
  return std::nullopt;
}

size_t dtype_size(DType t) { return info(t).bits / 8; }
int dtype_bits(DType t) { return info(t).bits; }

bool is_float(DType t) { return t == DType::Float16 || t == DType::Float32 || t == DType::Float64; }
bool is_signed_int(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}
bool is_unsigned_int(DType t) {
  return t == DType::UInt8 || t == DType::UInt16 || t == DType::UInt32 || t == DType::UInt64;
}

DType signed_int_of_bits(int bits) {
  return bits <= 8    ? DType::Int8
         : bits <= 16 ? DType::Int16
         : bits <= 32 ? DType::Int32
                      : DType::Int64;
}
DType unsigned_int_of_bits(int bits) {
  return bits <= 8    ? DType::UInt8
         : bits <= 16 ? DType::UInt16
         : bits <= 32 ? DType::UInt32
                      : DType::UInt64;
}
DType float_of_bits(int bits) {
  return bits <= 16 ? DType::Float16 : bits <= 32 ? DType::Float32 : DType::Float64;
}

namespace {
// Promotion of two strong types: floats beat integers, wider beats narrower, and mixing signed
// with unsigned gives a signed type wide enough for both (capped at 64 bits), as numpy does.
DType promote_strong(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::Bool) return b;
  if (b == DType::Bool) return a;
  if (is_float(a) || is_float(b)) {
    if (is_float(a) && is_float(b)) return float_of_bits(std::max(dtype_bits(a), dtype_bits(b)));
    return is_float(a) ? a : b;
  }
  if (is_signed_int(a) == is_signed_int(b)) {
    int bits = std::max(dtype_bits(a), dtype_bits(b));
    return is_signed_int(a) ? signed_int_of_bits(bits) : unsigned_int_of_bits(bits);
  }
  DType s = is_signed_int(a) ? a : b, u = is_signed_int(a) ? b : a;
  int bits = dtype_bits(s) > dtype_bits(u) ? dtype_bits(s) : std::min(64, 2 * dtype_bits(u));
  return signed_int_of_bits(bits);
}
}  // namespace

ValueType promote(ValueType a, ValueType b) {
  if (a.weak && b.weak)
    return {is_float(a.dtype) || is_float(b.dtype) ? DType::Float32 : DType::Int32, true};
  if (a.weak != b.weak) {
    ValueType strong = a.weak ? b : a, weak = a.weak ? a : b;
    // A float literal meeting an integer tensor makes the result float; any number meeting a
    // bool makes it a number, as in numpy (`(A < B) + 1` counts).
    if (is_float(weak.dtype) && !is_float(strong.dtype)) return {DType::Float32, false};
    if (strong.dtype == DType::Bool) return {weak.dtype, false};
    return strong;
  }
  return {promote_strong(a.dtype, b.dtype), false};
}

}  // namespace tessera::tile
