// What the OpenCL C and GLSL kernel frames share: the launch, the declarations of the mapped loop
// variables, the printed body and the helper functions it calls. Each dialect wraps these in its
// own signature, buffer declarations and launch-specific lines.
#pragma once

#include <string>

#include "backends/clike/CLikePrinter.h"
#include "backends/clike/GpuLaunch.h"
#include "compiler/IR.h"

namespace tessera::clike {

struct KernelFrame {
  GpuLaunch launch;
  /// One declaration per mapped loop variable (indented one level): the dialect's built-in id
  /// (Dialect::gpu_id) converted to the variable's type, plus the loop's first value.
  std::string ids;
  PrintedBody body;     // what each work-item runs, inside the mapped loops (indented one level)
  std::string helpers;  // definitions of the helpers that `ids` and `body` call, callees first
};

/// The frame of finished kernel `kernel` (compiler/Finish.h) in `dialect`. Throws tile::Error for
/// GPU loops gpu_launch cannot map and for what the dialect cannot print.
KernelFrame kernel_frame(Dialect &dialect, const compiler::Kernel &kernel);

}  // namespace tessera::clike
