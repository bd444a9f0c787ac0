// The op library's parts; builtin_ops() (tessera/ops.h) registers all of them.
#pragma once

#include "tessera/ops.h"

namespace tessera::ops {

void register_elementwise_ops(OpRegistry &registry);  // Elementwise.cpp

}  // namespace tessera::ops
