// The functions Tile programs call: elementwise operators, math intrinsics, casts and specials.
#pragma once

#include <optional>
#include <string_view>

namespace tessera::tile {

enum class Intrinsic {
#define TILE_INTRINSIC(E, name, lo, hi, kind) E,
#include "tile/Intrinsics.def"
#undef TILE_INTRINSIC
};

enum class IntrinsicKind { Arith, Compare, Bitwise, Select, FloatMath, SameType, Cast, Special };

struct IntrinsicInfo {
  Intrinsic op;
  std::string_view name;
  int min_args;
  int max_args;  // -1: any number
  IntrinsicKind kind;
};

const IntrinsicInfo &intrinsic_info(Intrinsic op);
inline std::string_view intrinsic_name(Intrinsic op) { return intrinsic_info(op).name; }
std::optional<Intrinsic> lookup_intrinsic(std::string_view name);
inline bool is_special(Intrinsic op) { return intrinsic_info(op).kind == IntrinsicKind::Special; }

}  // namespace tessera::tile
