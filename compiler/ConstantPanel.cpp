#include "compiler/ConstantPanel.h"

#include <cstring>

#include "tile/Diagnostics.h"

namespace tessera::compiler {

int64_t ConstantPanel::points() const {
  int64_t n = 1;
  for (const auto &d : dims) n *= d.extent;
  return n;
}

const ConstantPanel &ConstantPanels::add(ConstantPanel p) {
  // The name spells the whole layout: kernels compiled apart that read the same panel name the
  // same buffer, and two layouts never share one (a hash of it could).
  auto num = [](int64_t v) { return v < 0 ? "m" + std::to_string(-v) : std::to_string(v); };
  p.name = p.source + "@panel" + num(p.tiles) + "x" + num(p.width) + "+" + num(p.base);
  for (const auto &d : p.dims) p.name += "_" + num(d.extent) + ":" + num(d.stride);
  for (const auto &q : panels)
    if (q.name == p.name) return q;
  panels.push_back(std::move(p));
  return panels.back();
}

std::vector<std::byte> fill_constant_panel(const ConstantPanel &p, const std::byte *source,
                                           size_t source_bytes, size_t elem) {
  std::vector<std::byte> out(static_cast<size_t>(p.elements()) * elem);
  const int64_t points = p.points();
  std::vector<int64_t> at(p.dims.size(), 0);
  for (int64_t point = 0; point < points; ++point) {
    int64_t offset = p.base;
    for (size_t d = 0; d < p.dims.size(); ++d) offset += at[d] * p.dims[d].stride;
    for (int64_t t = 0; t < p.tiles; ++t) {
      int64_t from = offset + t * p.width;
      TESSERA_INTERNAL_ASSERT(from >= 0 &&
                                  static_cast<size_t>(from + p.width) * elem <= source_bytes,
                              "constant panel " + p.name + " reads past its source");
      std::memcpy(out.data() + static_cast<size_t>((t * points + point) * p.width) * elem,
                  source + static_cast<size_t>(from) * elem, static_cast<size_t>(p.width) * elem);
    }
    for (size_t d = p.dims.size(); d-- > 0;) {  // row-major: the last dimension fastest
      if (++at[d] < p.dims[d].extent) break;
      at[d] = 0;
    }
  }
  return out;
}

}  // namespace tessera::compiler
