// Building a program's kernels on every core: GPU drivers (and PoCL, shaderc) compile one program
// or pipeline on the thread that asks for it, so a compile of hundreds of kernels asks from many.
#pragma once

#include <cstddef>
#include <functional>

namespace tessera::clike {

/// Calls `build(i)` for every i in [0, n), on up to one thread per core, the caller's among them;
/// returns when all have returned. `build` must not throw (record errors per i instead).
void build_on_all_cores(size_t n, const std::function<void(size_t)> &build);

}  // namespace tessera::clike
