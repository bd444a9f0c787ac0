#!/usr/bin/env bash
# The demo's epoch times on Tessera (cpu, opencl:0) and PlaidML 0.7 (llvm_cpu.0), side by side.
#
#   bench/keras/run.sh [--rounds 3] [--images 3000] [--epochs 3] [--tune-seconds 60]
#                      [--engines "tessera:cpu tessera:opencl:0 plaidml:llvm_cpu.0"]
#
# Each round runs every engine in turn, so that a slow spell of a shared machine hits them alike:
# first a process with empty kernel caches ("cold": its epoch 1 compiles and tunes), then a second
# process on the caches the first one left ("second run", epoch 1 only). A table of medians over the
# rounds, with ratios against PlaidML, ends the output; results.jsonl and the logs stay in --out.
#
# Tessera: KERAS_BACKEND=tessera.keras.backend, Keras 2.3.1, in the project venv ($TESSERA_PYTHON,
# else .venv/bin/python of this checkout); its kernel cache is TESSERA_CACHE and, on opencl:0,
# PoCL's own cache POCL_CACHE_DIR: both start empty and are kept for the second run.
# PlaidML: Keras 2.2.4 in the venv setup_plaidml.sh makes. PlaidML 0.7 keeps compiled programs in
# memory only, so its second run compiles everything again; PLAIDML_TILE_CACHE (tile-size scan
# timings, used by its OpenCL code generator only) is given a file all the same and kept likewise.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
rounds=3 images=3000 epochs=3 tune_seconds=60
engines="tessera:cpu tessera:opencl:0 plaidml:llvm_cpu.0"
out=$repo/build/bench-keras/$(date +%Y%m%d-%H%M%S)
while [[ $# -gt 0 ]]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --images) images=$2; shift 2 ;;
    --epochs) epochs=$2; shift 2 ;;
    --tune-seconds) tune_seconds=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
  esac
done
tessera_python=${TESSERA_PYTHON:-$repo/.venv/bin/python}
plaidml_python=
if [[ $engines == *plaidml* ]]; then
  plaidml_python=$("$here/setup_plaidml.sh" | tail -n 1)
fi
mkdir -p "$out/logs" "$out/keras-home"
results=$out/results.jsonl
: >"$results"

# run_one ENGINE DEVICE ROUND PHASE EPOCHS: one training process; its JSON line, or one saying why
# it failed, goes to results.jsonl.
run_one() {
  local engine=$1 device=$2 round=$3 phase=$4 n=$5
  local tag=$engine-${device//:/_}
  local cache=$out/cache/$tag log=$out/logs/$tag-r$round-$phase.log
  local python env=(KERAS_HOME="$out/keras-home")
  if [[ $phase == cold ]]; then rm -rf "$cache"; fi
  mkdir -p "$cache"
  if [[ $engine == tessera ]]; then
    python=$tessera_python
    env+=(KERAS_BACKEND=tessera.keras.backend TESSERA_DEVICE="$device"
          TESSERA_CACHE="$cache/kernels.db" POCL_CACHE_DIR="$cache/pocl")
  else
    python=$plaidml_python
    env+=(KERAS_BACKEND=plaidml.keras.backend PLAIDML_EXPERIMENTAL=1 PLAIDML_DEVICE_IDS="$device"
          PLAIDML_TILE_CACHE="$cache/tile-cache.jsonl")
  fi
  echo "round $round: $engine $device, $phase ($n epochs of $images images)" >&2
  local line
  if line=$(env "${env[@]}" "$python" "$here/train_epochs.py" --images "$images" --epochs "$n" \
              --tune-seconds "$tune_seconds" --label "$round $phase" 2>"$log" | tail -n 1) &&
     [[ $line == "{"* ]]; then
    echo "$line" >>"$results"
  else
    local why
    why=$(grep -v '^\s*$' "$log" | tail -n 1)
    echo "  failed: $why (log: $log)" >&2
    /usr/bin/python3 -c 'import json, sys; print(json.dumps(dict(zip(
        ["engine", "device", "label", "error"], sys.argv[1:]))))' \
        "$engine" "$device" "$round $phase" "${why:-no output}" >>"$results"
  fi
}

for ((round = 1; round <= rounds; round++)); do
  for spec in $engines; do
    engine=${spec%%:*} device=${spec#*:}
    run_one "$engine" "$device" "$round" cold "$epochs"
    run_one "$engine" "$device" "$round" second 1
  done
done

/usr/bin/python3 "$here/summarize.py" "$results" --images "$images"
echo "results: $results" >&2
