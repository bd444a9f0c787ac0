#include "compiler/Finish.h"

#include <set>
#include <string>

#include "compiler/AlignedLoads.h"
#include "compiler/GpuCostModel.h"
#include "compiler/HoistLoads.h"
#include "compiler/NarrowIndices.h"
#include "compiler/UnswitchGuards.h"

namespace tessera::compiler {

Kernel finish_kernel(Kernel kernel, const Target &target) {
  if (target.panel_prefetch_bytes > 0)
    for (auto &p : kernel.params)
      if (p.constant_panel && !p.is_output)
        p.prefetch_ahead = target.panel_prefetch_bytes / tile::dtype_size(p.dtype);
  if (target.narrow_indices) kernel = narrow_indices(kernel);
  if (target.unswitch_guards)
    kernel.body = unswitch_invariant_guards(kernel.body, wide_vector_target(target));
  if (target.grouped_read_limit > 0) {
    std::set<std::string> grouped;
    for (auto &p : kernel.params) {
      p.grouped_reads = !p.is_output && p.dtype == tile::DType::Float32 &&
                        (p.elements + 3) / 4 <= target.grouped_read_limit;
      if (p.grouped_reads) grouped.insert(p.name);
    }
    kernel.body = unroll_for_aligned_loads(
        kernel.body, [&](const std::string &b) { return grouped.count(b) > 0; });
  }
  if (target.hoist_loads) {
    std::set<std::string> read_only;
    for (const auto &p : kernel.params)
      if (!p.is_output) read_only.insert(p.name);
    kernel.body = hoist_loads(kernel.body, read_only);
  }
  return kernel;
}

}  // namespace tessera::compiler
