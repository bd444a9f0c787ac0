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
out=/tmp/tessera-checks
mkdir -p "$out" "${OUT:=$out.tar}"
g=/tmp/tessera-bundle
mkdir -p "$g"
if command -v xz >/dev/null; then
  xz -dc "$1" | tar -C "$g" -xf -
else
  python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$1" "$g"
fi
[[ -e ../shared || -z ${2:-} ]] || cp -r "$2" ../shared
# A newer libstdc++ of the machine serves our binaries too, and the driver's libraries may need it.
host_cxx=/usr/lib/x86_64-linux-gnu/libstdc++.so.6
! grep -qa GLIBCXX_3.4.30 "$host_cxx" 2>/dev/null || rm -f "$g/lib/"{libstdc++.so.6,libgcc_s.so.1}

# The NVIDIA driver brings its ICDs but no registry entries for them in this image: name them.
driver_dirs=(/usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/share/vulkan /etc/vulkan)
find_driver() { find "${driver_dirs[@]}" -name "$1" 2>/dev/null | head -1; }
icd=$(find_driver 'libnvidia-opencl.so.1')
if [[ -n $icd ]]; then
  mkdir -p "$g/icd" && echo "$icd" >"$g/icd/nvidia.icd" && export OCL_ICD_VENDORS=$g/icd
fi
vk=$(find_driver 'nvidia_icd.json')
[[ -z $vk ]] || export VK_DRIVER_FILES=$vk VK_ICD_FILENAMES=$vk

# Only Tessera's processes see the bundle's libraries (PyTorch below keeps the machine's own).
T=(env LD_LIBRARY_PATH="$g/lib:${LD_LIBRARY_PATH:-}" PYTHONHOME="$g/py"
  PYTHONPATH="$g/py/lib/python3.11/site-packages" TESSERA_BIN="$g/bin/tessera")
step() { # step NAME SECONDS COMMAND...: the command's output to $out/NAME.log, with its time
  local name=$1 limit=$2; shift 2
  local t0=$SECONDS
  timeout -k 5 "$limit" "$@" >"$out/$name.log" 2>&1
  echo "$name: exit $? in $((SECONDS - t0)) s" | tee -a "$out/steps.log"
  tar -C "$out" -czf "$OUT/checks.tar.gz" .
}

{ nvidia-smi -L; echo "opencl icd: ${icd:-none}; vulkan icd: ${vk:-none}"; "${T[@]}" "$g/bin/tessera" devices; } \
  >"$out/devices.log" 2>&1
cat "$out/devices.log"

for dev in opencl vulkan; do
  step "e2e-$dev" "${E2E_SECONDS:-90}" "${T[@]}" TESSERA_TUNE=off TESSERA_CACHE=/tmp/e2e.db \
    "$g/bin/python3.11" -m pytest -q -p no:cacheprovider -rf tests/e2e -m "not slow" -k "$dev"
done

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

step torch-cuda 45 python3 "$(dirname "$0")/torch_peer.py"
