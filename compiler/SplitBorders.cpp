#include "compiler/SplitBorders.h"

#include <algorithm>

#include "tile/Affine.h"

namespace tessera::compiler {

namespace {

using tile::ceil_div;
using tile::floor_div;

// The least value of `g` over the box, leaving out variable `skip`.
int64_t min_without(const Inequality &g, const std::vector<NestIndex> &ix, size_t skip) {
  int64_t m = g.constant;
  for (size_t j = 0; j < ix.size(); ++j) {
    if (j == skip || g.coeffs[j] == 0) continue;
    m += g.coeffs[j] * (g.coeffs[j] > 0 ? ix[j].lo : ix[j].lo + ix[j].extent - 1);
  }
  return m;
}

// Drops the guards the region's box implies (their least value over the box is >= 0).
void prune(ContractionNest &n) {
  std::vector<Inequality> keep;
  for (const auto &g : n.guards)
    if (min_without(g, n.indices, n.indices.size()) < 0) keep.push_back(g);
  n.guards = std::move(keep);
}

ContractionNest restricted(const ContractionNest &n, size_t v, int64_t lo, int64_t end) {
  ContractionNest r = n;
  r.indices[v].lo = lo;
  r.indices[v].extent = end - lo;
  prune(r);
  return r;
}

}  // namespace

std::vector<ContractionNest> split_borders(const ContractionNest &n) {
  if (n.empty || n.guards.empty()) return {n};
  std::vector<ContractionNest> borders;
  ContractionNest interior = n;
  for (size_t v = 0; v < n.outputs(); ++v) {
    const NestIndex &ix = interior.indices[v];
    if (ix.extent < 3) continue;
    // Where every guard on v holds whatever the other indices are.
    int64_t a = ix.lo, b = ix.lo + ix.extent - 1;
    bool any = false;
    for (const auto &g : interior.guards) {
      int64_t c = g.coeffs[v];
      if (c == 0) continue;
      any = true;
      int64_t rest = min_without(g, interior.indices, v);
      if (c > 0)
        a = std::max(a, ceil_div(-rest, c));
      else
        b = std::min(b, floor_div(rest, -c));
    }
    // A narrow interior (a cumulative sum's triangle) is not worth the extra code.
    if (!any || b - a + 1 < 2 || 2 * (b - a + 1) < ix.extent) continue;
    int64_t lo = ix.lo, end = ix.lo + ix.extent;
    if (a > lo) borders.push_back(restricted(interior, v, lo, a));
    if (b + 1 < end) borders.push_back(restricted(interior, v, b + 1, end));
    interior = restricted(interior, v, a, b + 1);
  }
  std::vector<ContractionNest> out = {interior};
  out.insert(out.end(), borders.begin(), borders.end());
  return out;
}

}  // namespace tessera::compiler
