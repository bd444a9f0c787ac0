#!/usr/bin/env bash
# Two builds of Tessera on the lent GPU's devices, alternating on one machine: the bundle's
# `tessera` (B, the change) against another binary (A, the baseline: an xz-compressed `tessera`
# built before the change), `tessera bench MODEL --device D --tune off` for each model and device
# in $AB_MODELS and $AB_DEVICES, $AB_ROUNDS times in the order A B B A ...; then every model's
# per-kernel profile under B on each device. AB_E2E=1 runs the device-vs-interp suites first. Set up and run like checks.sh; logs and JSON in
# $OUT/checks.tar.gz.   Usage: scripts/device/ab.sh BUNDLE.tar.xz BASELINE.xz [SHARED_DIR]
set -u
baseline=$2
source "$(dirname "$0")/common.sh" "$1" "${3:-}"
xz -dc "$baseline" >"$g/bin/tessera-a" && chmod +x "$g/bin/tessera-a"
[[ -z ${AB_E2E:-} ]] || e2e_suites
rounds=${AB_ROUNDS:-2}
for model in ${AB_MODELS:-resnet50 inception_v3 bert_base mobilenet_v2}; do
  for dev in ${AB_DEVICES:-opencl:0 vulkan:0}; do
    for ((r = 0; r < rounds; ++r)); do
      order="a b" && ((r % 2)) && order="b a"
      for bin in $order; do
        exe=$g/bin/tessera && [[ $bin == a ]] && exe=$g/bin/tessera-a
        step "bench-$model-${dev%:0}-$bin$r" 60 "${T[@]}" "$exe" bench "$model" --device "$dev" \
          --tune off --iterations 10 --json "$out/bench-$model-${dev%:0}-$bin$r.json"
      done
    done
  done
done
# One table: per model and device, each binary's median over the rounds.
"${T[@]}" "$g/bin/python3.11" - "$out" <<'PY' | tee "$out/ab.txt"
import glob, json, os, re, statistics, sys
runs = {}
for f in glob.glob(os.path.join(sys.argv[1], "bench-*.json")):
    m = re.match(r"bench-(.+)-(opencl|vulkan)-([ab])\d+\.json", os.path.basename(f))
    rows = json.load(open(f)).get("results") or []
    if m and rows:
        runs.setdefault((m[1], m[2]), {}).setdefault(m[3], []).append(rows[0]["latency_median_ms"])
print("model device A_ms B_ms B/A")
for (model, dev), t in sorted(runs.items()):
    a, b = (statistics.median(t[k]) if t.get(k) else float("nan") for k in "ab")
    print(f"{model} {dev} {a:.2f} {b:.2f} {b / a:.2f}")
PY
zoo=/tmp/zoo
for model in ${AB_MODELS:-resnet50 inception_v3 bert_base mobilenet_v2}; do
  "${T[@]}" "$g/bin/tessera" bench "$model" --emit-tile "$zoo" >/dev/null
  for dev in ${AB_DEVICES:-opencl:0 vulkan:0}; do
    step "profile-$model-${dev%:0}" 60 "${T[@]}" TESSERA_TUNE=off "$g/bin/tessera" run \
      "$zoo/$model.tile" --spec "$zoo/$model.spec.json" --random 1 --device "$dev" --repeat 5 \
      --out-dir /tmp/outs --profile "$out/profile-$model-${dev%:0}.json"
  done
done
