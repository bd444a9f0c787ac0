#include "tile/Intrinsics.h"

namespace tessera::tile {

namespace {
constexpr IntrinsicInfo kIntrinsics[] = {
#define TILE_INTRINSIC(E, name, lo, hi, kind) {Intrinsic::E, name, lo, hi, IntrinsicKind::kind},
#include "tile/Intrinsics.def"
#undef TILE_INTRINSIC
};
}  // namespace

const IntrinsicInfo &intrinsic_info(Intrinsic op) { return kIntrinsics[static_cast<int>(op)]; }

std::optional<Intrinsic> lookup_intrinsic(std::string_view name) {
  for (const auto &i : kIntrinsics)
    if (i.name == name) return i.op;
  return std::nullopt;
}

}  // namespace tessera::tile
