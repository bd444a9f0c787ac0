// Element types of Tile tensors, their names, sizes and the promotion rules.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace tessera::tile {

enum class DType {
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  Float32,
  Float64,
};

/// The Tile spelling: "bool", "int8" ... "float64" (also numpy's names).
std::string_view dtype_name(DType t);
/// Short CLI spelling: "b1", "i8".."i64", "u8".."u64", "f16", "f32", "f64".
std::string_view dtype_short_name(DType t);
/// Accepts both spellings; nullopt when unknown.
std::optional<DType> parse_dtype(std::string_view name);

size_t dtype_size(DType t);
int dtype_bits(DType t);
bool is_float(DType t);
bool is_signed_int(DType t);
bool is_unsigned_int(DType t);
inline bool is_integer(DType t) { return is_signed_int(t) || is_unsigned_int(t); }

DType signed_int_of_bits(int bits);    // 8, 16, 32, 64
DType unsigned_int_of_bits(int bits);  // 8, 16, 32, 64
DType float_of_bits(int bits);         // 16, 32, 64

/// A type as inference sees it. Literals and dimension values are "weak": they take the type of
/// the strong operand they meet (`X * 0.5` stays float16 for a float16 X), as in numpy and PlaidML.
/// A weak type that never meets a strong one becomes int32 or float32.
struct ValueType {
  DType dtype = DType::Float32;
  bool weak = false;
  bool operator==(const ValueType &) const = default;
};

/// The type of `a op b` for arithmetic ops (add, mul, max, cond branches, ...).
ValueType promote(ValueType a, ValueType b);

}  // namespace tessera::tile
