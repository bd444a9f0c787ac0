# Sourced by the scripts run on the lent GPU machine (checks.sh, tuning.sh) with the archive
# bundle.sh packed as $1 and, optionally, the shared folder as $2: unpacks the bundle, names the
# NVIDIA driver's OpenCL and Vulkan ICDs, and defines T (the environment Tessera's processes run
# in), $g (the unpacked bundle), $out (the logs), `step` and `e2e_suites`.
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

# Only Tessera's processes see the bundle's libraries (PyTorch keeps the machine's own).
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

e2e_suites() { # the device-vs-interp suites on the GPU's OpenCL and Vulkan devices
  for dev in opencl vulkan; do
    step "e2e-$dev" "${E2E_SECONDS:-90}" "${T[@]}" TESSERA_TUNE=off TESSERA_CACHE=/tmp/e2e.db \
      "$g/bin/python3.11" -m pytest -q -p no:cacheprovider -rf tests/e2e -m "not slow" -k "$dev"
  done
}
