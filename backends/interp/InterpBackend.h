// The `interp` device: the reference interpreter (runtime/interp) runs every statement as a host
// step on tensors in host memory. The oracle every other device is tested against.
#pragma once

#include "runtime/Backend.h"

namespace tessera {

/// The interpreter's backend (one per process).
Backend &interp_backend();

}  // namespace tessera
