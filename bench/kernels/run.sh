#!/usr/bin/env bash
# Kernel benchmarks side by side: Tessera's cpu, opencl:0 and vulkan:0 kernels and their peers
# (OpenBLAS, oneDNN, CLBlast, an FMA roofline shader) in one process, repetitions interleaved at
# random so that a change in the shared machine's load moves both sides of a ratio alike; then a
# table of medians, shares of the measured FMA peak and ratios (summarize.py).
#   bench/kernels/run.sh [REPETITIONS] [extra Google Benchmark flags, e.g. --benchmark_filter=Conv]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=$repo/build
reps=${1:-5}
shift || true
# The main build with bench/ switched on (it stays on in that build folder's cache).
cmake -S "$repo" -B "$build" -DTESSERA_BENCH=ON --log-level=WARNING >/dev/null
ninja -C "$build" -j2 kernel_bench >/dev/null
out=$build/kernel-bench.json
OPENBLAS_NUM_THREADS=2 POCL_CACHE_DIR=$build/pocl-cache "$build/bench/kernel_bench" \
  --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true --benchmark_out="$out" --benchmark_out_format=json "$@"
"$repo/.venv/bin/python" "$repo/bench/kernels/summarize.py" "$out"
