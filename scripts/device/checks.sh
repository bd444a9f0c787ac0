#!/usr/bin/env bash
# The checks that need a real GPU, run on the lent GPU machine from the repository root with the
# archive scripts/device/bundle.sh packed: the device-vs-interp suites on the GPU's OpenCL and Vulkan
# devices, the zoo's bench there with the cost model's schedules and with the tuner's, and PyTorch
# on CUDA as the peer. Each step has its own time limit, so one slow step leaves the rest their time.
# Logs and JSON go to $OUT/checks.tar.gz, brought up to date after each step (the device tool
# brings back only a few files).   Usage: scripts/device/checks.sh BUNDLE.tar.xz [SHARED_DIR]
# As run on 2026-11-26 (an H200, 166 s): here, `echo /.gpu/ >>.git/info/exclude`, bundle.sh
# .gpu/bundle.tar.xz, `cp -r ../shared .gpu/shared`, and in .gpu/gl the Debian packages of the
# Vulkan and GL loaders (apt-get download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0
# libgles2); then the device command, carrying .gpu:
#   for f in .gpu/gl/*.deb; do dpkg -x $f /; done; ldconfig
#   bash scripts/device/checks.sh .gpu/bundle.tar.xz .gpu/shared
set -u
source "$(dirname "$0")/common.sh"

e2e_suites

bench() { # bench NAME SECONDS ARGS...
  local name=$1 limit=$2; shift 2
  step "bench-$name" "$limit" "${T[@]}" "$g/bin/tessera" bench "$@" --json "$out/bench-$name.json"
}
for model in resnet50 mobilenet_v2; do
  for dev in opencl:0 vulkan:0; do
    bench "$model-${dev%:0}-model" "${BENCH_SECONDS:-40}" "$model" --device "$dev" --tune off \
      --iterations 10
  done
done

# The tuner against the cost model on the real GPU: ResNet-50's kernels tuned for a minute on
# opencl:0, the speed-up per kernel from the cache, then the whole network on the tuned schedules.
"${T[@]}" "$g/bin/tessera" bench resnet50 --emit-tile /tmp/zoo >/dev/null 2>&1
export TESSERA_CACHE=/tmp/tuned.db
step tune-resnet50-opencl "${TUNE_SECONDS:-70}" "${T[@]}" "$g/bin/tessera" tune /tmp/zoo/resnet50.tile \
  --spec /tmp/zoo/resnet50.spec.json --device opencl:0 --total-seconds "${TUNE_TOTAL:-50}"
"${T[@]}" "$g/bin/tessera" cache list >"$out/tuned-schedules.log" 2>&1
bench resnet50-opencl-tuned "${BENCH_SECONDS:-40}" resnet50 --device opencl:0 --tune cached \
  --cache /tmp/tuned.db --iterations 10
unset TESSERA_CACHE

# PyTorch on CUDA running the same networks with the same weights (torch_zoo.py).
for model in resnet50 mobilenet_v2; do
  "${T[@]}" "$g/bin/tessera" bench "$model" --emit-tile "/tmp/zoo/$model-b1" >/dev/null 2>&1
done
step torch-cuda 60 python3 "$(dirname "$0")/torch_zoo.py" /tmp/zoo/resnet50-b1 /tmp/zoo/mobilenet_v2-b1
