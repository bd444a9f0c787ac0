// The helper functions kernels call beyond their language's own (Tile's integer division and
// shifts, saturating conversions, NaN-propagating max, ...): each written once as source text with
// placeholders, and the definitions one kernel uses, each once and after the helpers it calls.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tile/DataType.h"

namespace tessera::clike {

class Dialect;

/// The dtypes a definition is written for, as a bit set.
enum HelperTypes : unsigned {
  kSigned = 1,    // int8 .. int64
  kUnsigned = 2,  // uint8 .. uint64
  kFloat = 4,     // float16 and float32: both compute in the dialect's float
  kDouble = 8,    // float64
  kFloats = kFloat | kDouble,
  kIntegers = kSigned | kUnsigned,
};

/// One helper's definition for some dtypes. `text` is the function in the dialect's language (a
/// leading newline is dropped), with placeholders `$X`, or `${X}` before a letter or digit:
///   $NAME   the function's name, tsr_<name>_<T> (tsr_<name>_<T>_<F> for a conversion)
///   $T      the dtype's compute type (Dialect::compute_type)
///   $U      the compute type of the unsigned integer of the dtype's width
///   $BITS   the dtype's width in bits; $TOP, its highest bit (BITS - 1)
///   $f      the suffix of the dtype's float literals (Dialect::literal_suffix)
/// and, for a conversion from a float type:
///   $F      the compute type converted from
///   $LIMIT  the least magnitude that saturates T, a literal of F: 2^BITS unsigned, 2^TOP signed
/// Other helpers are called by their names (tsr_exp_double), and listed in `calls`.
struct HelperDefinition {
  const char *name;
  unsigned types;                   // HelperTypes
  std::vector<const char *> calls;  // helpers it calls, for the same dtype
  const char *text;
};

/// The helpers of one kernel, defined as `dialect` prints types, from `definitions`.
class HelperLibrary {
 public:
  HelperLibrary(const Dialect &dialect, const std::vector<HelperDefinition> &definitions)
      : dialect_(dialect), definitions_(definitions) {}
  /// The name of helper `name` for values of `dtype`; its definition joins text().
  std::string use(const std::string &name, tile::DType dtype);
  /// The name of conversion helper `name` from `from` (a float type) to `to`.
  std::string use(const std::string &name, tile::DType from, tile::DType to);
  /// The name of helper `name` on the dialect's vectors of `lanes` x `dtype` ($T the vector type;
  /// the definition's text must mean the same on vectors, component by component).
  std::string use_vector(const std::string &name, tile::DType dtype, int lanes);
  /// The definitions used so far, each once and after the helpers it calls.
  const std::string &text() const { return text_; }

 private:
  std::string define(const std::string &name, tile::DType dtype, std::optional<tile::DType> from,
                     int lanes = 1);

  const Dialect &dialect_;
  const std::vector<HelperDefinition> &definitions_;
  std::set<std::string> defined_;
  std::string text_;
};

}  // namespace tessera::clike
