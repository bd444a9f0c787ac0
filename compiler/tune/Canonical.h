// The canonical text of a kernel: what the kernel cache keys by. Two kernels that compute the same
// thing over buffers and indices of other names (ResNet's repeated blocks) have the same text.
#pragma once

#include <string>

#include "compiler/IR.h"
#include "compiler/Nest.h"

namespace tessera::compiler::tune {

/// The nest unscheduled over `params` (the kernel's buffers, in its parameter order), with buffers
/// renamed by parameter position and every other name by order of first appearance.
std::string canonical_text(const ContractionNest &nest, const std::vector<BufferParam> &params);

/// A kernel (scheduled, finished, any kernel) renamed the same way, its own name dropped: twins of
/// repeated layers have the same text, and a device builds their code once.
std::string canonical_text(const Kernel &kernel);

}  // namespace tessera::compiler::tune
