// The launch shape of a loop IR kernel on a GPU-style device (OpenCL, Vulkan): work-group counts
// and sizes from its GpuBlock/GpuThread loops, and what each loop variable is in the kernel frame.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/IR.h"

namespace tessera::clike {

/// A loop variable the kernel frame defines from a built-in id instead of printing its loop.
struct GpuId {
  enum class Kind { Group, Local, Global } kind;  // get_group_id / get_local_id / get_global_id
  int dim = 0;
  std::string var;
  compiler::Type type;
  compiler::Expr min;  // Global only: the loop's first value (added to the id)
};

struct GpuLaunch {
  /// Dimensions launched (0: one work-item runs the whole body).
  int dims = 0;
  std::array<int64_t, 3> groups{1, 1, 1};  // work-groups per dimension
  std::array<int64_t, 3> local{1, 1, 1};   // work-items per work-group
  /// A kernel without GpuBlock loops whose outermost loop is Parallel: one work-item per
  /// iteration (a 1-D Global id) and the driver's choice of local size; `groups[0]` is then the
  /// number of work-items and `local` is meaningless.
  bool driver_local = false;
  std::vector<GpuId> ids;
  compiler::Stmt body;  // what each work-item runs, inside the mapped loops

  /// Work-items per dimension.
  std::array<int64_t, 3> global() const {
    if (driver_local) return groups;
    return {groups[0] * local[0], groups[1] * local[1], groups[2] * local[2]};
  }
  int64_t workgroup_size() const { return driver_local ? 0 : local[0] * local[1] * local[2]; }
};

/// The launch of `body`: the chain of GpuBlock/GpuThread loops at its top (each of constant
/// extent, starting at 0, one per kind and dimension) is mapped; else an outermost Parallel loop of
/// constant extent becomes a 1-D range; else a single work-item. Throws tile::Error when GPU loops
/// are malformed (not at the top, repeated, or of non-constant extent).
GpuLaunch gpu_launch(const compiler::Stmt &body);

}  // namespace tessera::clike
