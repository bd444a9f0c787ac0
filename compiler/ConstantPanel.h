// Panels of constant operands, filled once: where a contraction's vector operand is an input whose
// values are fixed at compile time (inference weights), the kernel reads its panels from a buffer
// the runtime fills once from the values, instead of copying each tile's panel on every run. The
// copy read the operand in pieces of one tile's width, a row apart (ResNet-50's 1x1 convolution
// 512 -> 2048: 64 bytes every 8 KB), which on weights that come from memory, not cache, cost more
// than the arithmetic; the filled buffer is read straight through.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tile/DataType.h"

namespace tessera::compiler {

/// panel[t][p][lane] = source[base + t * width + lane + sum_d p_d * stride_d] for every tile t of
/// `width` lanes and point p = (p_0, ...) of `dims` (row-major, p_d < extent_d).
struct ConstantPanel {
  std::string name;    // the buffer the kernel reads: "<source>@panel<layout>" (add())
  std::string source;  // the constant input
  tile::DType dtype;
  int64_t tiles = 0, width = 0, base = 0;
  struct Dim {
    int64_t extent, stride;
  };
  std::vector<Dim> dims;

  int64_t points() const;
  int64_t elements() const { return tiles * points() * width; }
};

/// What apply_schedule may read from filled panels: the names of the constant inputs, the panels
/// it chose (one per distinct layout), and how far ahead the kernel prefetches a panel it reads by
/// reduction blocks (elements; BufferParam::prefetch_ahead).
struct ConstantPanels {
  std::set<std::string> constants;
  std::vector<ConstantPanel> panels;
  std::map<std::string, int64_t> prefetch_ahead;
  /// The device's cores (0: not known): kernels reading panels choose between splitting vector
  /// tiles and rows among them (apply_shared_panel).
  int cores = 0;

  /// The panel of `p`'s layout (named here), added unless an equal one is there.
  const ConstantPanel &add(ConstantPanel p);
};

/// The panel's bytes from the source's (`elem` bytes an element, at least the highest index read).
std::vector<std::byte> fill_constant_panel(const ConstantPanel &p, const std::byte *source,
                                           size_t source_bytes, size_t elem);

}  // namespace tessera::compiler
