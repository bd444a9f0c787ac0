// A small persistent thread pool that parallel loops of JIT-compiled kernels run on.
#pragma once

#include <cstdint>

extern "C" {
/// The body of a parallel loop: runs iterations [begin, end) with the captured values in `ctx`.
using tessera_loop_body = void (*)(void *ctx, int64_t begin, int64_t end);
/// Runs body over [0, n) split into contiguous ranges, a few per thread, on the threads
/// (std::thread::hardware_concurrency of them, the caller included): each runs its own share
/// (the same part of every loop of the same extent) and then claims what the others have left,
/// and the call returns when all are done. A call from inside a parallel body runs serially on the
/// calling thread.
void tessera_parallel_for(tessera_loop_body body, void *ctx, int64_t n);
}

namespace tessera::llvm_backend {
/// The number of threads parallel loops use.
int pool_threads();
}  // namespace tessera::llvm_backend
