#!/usr/bin/env bash
# What the cost model leaves to the tuner on a real GPU, run on the lent GPU machine like
# checks.sh (same arguments and set-up): for each MODEL:DEVICE:SECONDS in $TUNING (default below),
# the zoo program's per-kernel profile with the cost model's schedules (`tessera run --profile`),
# the tuner's pass over every kernel in the given seconds, the kernel cache's schedules and times
# (`cache export`), and the whole network with the cost model's and with the tuned schedules;
# SECONDS 0: the profile alone.
# Usage: scripts/device/tuning.sh BUNDLE.tar.xz [SHARED_DIR]; logs in $OUT/checks.tar.gz.
set -u
source "$(dirname "$0")/common.sh"

zoo=/tmp/zoo
for job in ${TUNING:-resnet50:opencl:0:45 resnet50:vulkan:0:45 bert_base:vulkan:0:40}; do
  IFS=: read -r model backend index seconds <<<"$job"
  dev=$backend:$index name=$model-$backend
  [[ -e $zoo/$model.tile ]] || "${T[@]}" "$g/bin/tessera" bench "$model" --emit-tile "$zoo" >/dev/null
  db=/tmp/tuned-$name.db
  step "profile-$name" 60 "${T[@]}" TESSERA_CACHE="$db" TESSERA_TUNE=off "$g/bin/tessera" run \
    "$zoo/$model.tile" --spec "$zoo/$model.spec.json" --random 1 --device "$dev" --repeat 5 \
    --out-dir /tmp/outs --profile "$out/profile-$name.json"
  ((seconds > 0)) || continue
  step "tune-$name" $((seconds + 30)) "${T[@]}" TESSERA_CACHE="$db" "$g/bin/tessera" tune \
    "$zoo/$model.tile" --spec "$zoo/$model.spec.json" --device "$dev" --total-seconds "$seconds"
  "${T[@]}" TESSERA_CACHE="$db" "$g/bin/tessera" cache export "$out/cache-$name.json" \
    >/dev/null 2>&1
  for tune in off cached; do
    step "bench-$name-$tune" 40 "${T[@]}" "$g/bin/tessera" bench "$model" --device "$dev" \
      --tune "$tune" --cache "$db" --iterations 10 --json "$out/bench-$name-$tune.json"
  done
done
