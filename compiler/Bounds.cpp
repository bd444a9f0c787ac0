#include "compiler/Bounds.h"

#include <algorithm>
#include <numeric>

#include "tile/Diagnostics.h"
#include "tile/IndexRanges.h"

namespace tessera::compiler {

DomainBounds compute_bounds(const tile::BoundProgram &program, const tile::BoundStatement &s,
                            const tile::BoundContraction &c,
                            const std::vector<Divisibility> &extra) {
  DomainBounds b;
  b.divisibility = extra;
  auto ineqs = domain_inequalities(c, s.type.shape, program.types, &b.divisibility);
  size_t n = c.indices.size();
  b.lo.assign(n, 0);
  b.hi.assign(n, -1);
  // Output variables span their whole dimension.
  std::vector<bool> is_output(n, false);
  for (size_t d = 0; d < c.output.dims.size(); ++d) {
    const auto &a = c.output.dims[d];
    if (!a.constant.is_integer() || a.constant.num != 0) continue;
    int nz = -1, count = 0;
    for (size_t j = 0; j < n; ++j)
      if (a.coeffs[j].num != 0) nz = static_cast<int>(j), ++count;
    if (count == 1 && a.coeffs[nz] == tile::Rational(1) && !is_output[nz]) {
      is_output[nz] = true;
      b.lo[nz] = 0, b.hi[nz] = s.type.shape[d] - 1;
    }
  }
  std::vector<std::optional<tile::IndexRange>> fallback;
  for (size_t v = 0; v < n; ++v) {
    if (is_output[v]) continue;
    int64_t lo = 0, hi = -1;
    bool empty = false;
    if (!project(ineqs, v, lo, hi, empty)) {
      if (fallback.empty()) fallback = tile::index_ranges(c, s.type.shape, program.types);
      if (!fallback[v])
        tile::user_error(program.source, s.range,
                         "index '" + c.indices[v] + "' of '" + s.output +
                             "' is unbounded: no access or constraint limits it");
      lo = fallback[v]->lo, hi = fallback[v]->hi;
    }
    b.empty |= empty || lo > hi;
    b.lo[v] = lo, b.hi[v] = hi;
  }
  // An inequality the box implies is dropped; the rest become guards.
  for (const auto &q : ineqs) {
    int64_t min = q.constant;
    for (size_t j = 0; j < n; ++j) min += q.coeffs[j] * (q.coeffs[j] > 0 ? b.lo[j] : b.hi[j]);
    if (min >= 0) continue;
    if (std::find(b.guards.begin(), b.guards.end(), q) == b.guards.end()) b.guards.push_back(q);
  }
  return b;
}

}  // namespace tessera::compiler
