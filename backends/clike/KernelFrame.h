// What the OpenCL C and GLSL kernel frames share: the launch, the declarations of the mapped loop
// variables, the printed body, the helper functions it calls and the dtypes it uses. Each dialect
// wraps these in its own signature, buffer declarations and launch-specific lines.
#pragma once

#include <set>
#include <string>

#include "backends/clike/CLikePrinter.h"
#include "backends/clike/GpuLaunch.h"
#include "compiler/IR.h"

namespace tessera::clike {

/// The dtypes of a kernel's loop IR, from which a device's optional features (float64, int8, ...)
/// are decided. The printer and the helpers compute only in these types and in those every device
/// has (bool, int, uint, float).
struct KernelTypes {
  std::set<tile::DType> values;  // of every expression
  std::set<tile::DType> arrays;  // of the elements of its params and allocations
  bool uses(tile::DType t) const { return values.count(t) || arrays.count(t); }
};

struct KernelFrame {
  GpuLaunch launch;
  /// One declaration per mapped loop variable (indented one level): the dialect's built-in id
  /// (Dialect::gpu_id) converted to the variable's type, plus the loop's first value.
  std::string ids;
  PrintedBody body;     // what each work-item runs, inside the mapped loops (indented one level)
  std::string helpers;  // definitions of the helpers that `ids` and `body` call, callees first
  KernelTypes types;
};

/// The frame of finished kernel `kernel` (compiler/Finish.h) in `dialect`. Throws tile::Error for
/// GPU loops gpu_launch cannot map and for what the dialect cannot print.
KernelFrame kernel_frame(Dialect &dialect, const compiler::Kernel &kernel);

}  // namespace tessera::clike
