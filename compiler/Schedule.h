// How one kernel is scheduled: tiles, loop order, vectorization, unrolling, parallel mapping.
// A plain struct with a stable JSON form (the tuner and the kernel cache store it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera::compiler {

struct Schedule {
  /// Per index variable of the kernel (in the kernel's index order): tile size (1 = untiled).
  std::vector<int64_t> tile_sizes;
  /// Loop order outermost first, by index position; tiles of all indices precede points.
  std::vector<int> loop_order;
  int vector_index = -1;  // index vectorized in the innermost loop, -1 = none
  int vector_width = 1;
  int unroll = 1;          // unroll factor of the innermost point loop
  int parallel_loops = 0;  // how many outermost tile loops are parallel (CPU threads / work-groups)
  std::vector<int64_t> workgroup;  // GPU work-group shape (up to 3), empty on CPUs
  bool use_local_memory = false;   // GPU: stage input tiles in local memory
  /// GPU on wide-vector devices: consecutive row tiles each work-item computes after copying its
  /// vector tile's panel of the vector operand once (1: one register tile, no copy).
  int64_t tiles_per_item = 1;
  /// GPU: each work-group computes one output element, its workgroup[0] work-items splitting the
  /// outermost reduction loop and combining their partial results in local memory (GpuMapping.h).
  bool split_reduction = false;

  bool operator==(const Schedule &) const = default;
  /// Stable JSON: keys in a fixed order, no whitespace variations.
  std::string to_json() const;
  /// Throws tile::Error on malformed JSON.
  static Schedule from_json(const std::string &json);
};

}  // namespace tessera::compiler
