#!/usr/bin/env bash
# `make sanitize`: builds everything with AddressSanitizer and UndefinedBehaviorSanitizer into
# build-asan (GCC, -O1 -g) and runs CTest there: the unit suites and tests/e2e (every compiled device
# against interp, through the sanitized Python extension). Any report fails the run. Arguments go
# to ctest (e.g. -R Parser). Not part of `make test`: it takes about an hour on 2 cores.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$REPO/build-asan"

"$REPO/scripts/setup.sh"
cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DTESSERA_SANITIZE=ON -DTESSERA_BENCH=OFF -DPython_EXECUTABLE="$REPO/.venv/bin/python" \
  --log-level=WARNING
ninja -C "$BUILD" -j2

# allocator_may_return_null: the size checks' tests ask for terabytes on purpose and expect the
# device's own error, not ASan's abort. Leaks are checked in the C++ binaries; the OpenCL and Vulkan
# drivers (PoCL, lavapipe) and LLVM keep process-lifetime allocations that lsan.supp names.
export ASAN_OPTIONS="allocator_may_return_null=1:detect_leaks=1:abort_on_error=1:strict_string_checks=1"
export LSAN_OPTIONS="suppressions=$REPO/tests/sanitize/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export POCL_CACHE_DIR="$BUILD/pocl-cache"
cd "$BUILD"
ctest --output-on-failure --no-tests=error -j2 --timeout 7200 "$@"
