#!/usr/bin/env bash
# Builds the parser fuzzer with clang (ASan + UBSan + libFuzzer) into build-fuzz and runs it for
# FUZZ_SECONDS (default 60) from the Tile programs in the tree and the PlaidML corpus. FUZZ_SEED
# sets libFuzzer's seed (default: a new one each run); the seed is printed, so that a failing run
# can be repeated with its seed and FUZZ_RUNS, its number of executed inputs, instead of a time.
# A crash, a hang (10 s per input), a leak or more than 2 GiB of memory fails the script.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$REPO/build-fuzz"
SECONDS_TO_RUN="${FUZZ_SECONDS:-60}"
limit=(-max_total_time="$SECONDS_TO_RUN")
if [[ -n "${FUZZ_RUNS:-}" ]]; then limit=(-runs="$FUZZ_RUNS"); fi
if [[ -n "${FUZZ_SEED:-}" ]]; then limit+=(-seed="$FUZZ_SEED"); fi

CC=clang-14 CXX=clang++-14 cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTESSERA_FUZZ=ON --log-level=WARNING
ninja -C "$BUILD" -j2 tessera_parser_fuzzer

# The corpus is scratch: libFuzzer adds to it, and generated inputs are not worth keeping.
corpus="$(mktemp -d)"
trap 'rm -rf "$corpus"' EXIT
shopt -s nullglob
seeds=("$REPO"/tests/programs/*.tile "$REPO"/examples/demo/*.tile "$REPO"/../shared/corpus/plaidml/*.tile)
for i in "${!seeds[@]}"; do
  cp "${seeds[$i]}" "$corpus/$i-$(basename "${seeds[$i]}")"  # numbered: names repeat across dirs
done

artifacts="$BUILD/fuzz-artifacts"
mkdir -p "$artifacts"
echo "fuzz: running the parser fuzzer (${limit[*]}) with ${#seeds[@]} seed programs"
if ! "$BUILD/tests/fuzz/tessera_parser_fuzzer" "$corpus" \
    -dict="$REPO/tests/fuzz/tile.dict" "${limit[@]}" -timeout=10 \
    -rss_limit_mb=2048 -max_len=4096 -detect_leaks=1 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" >"$BUILD/fuzz.log" 2>&1; then
  tail -n 60 "$BUILD/fuzz.log"
  grep -m1 -E '^INFO: Seed:' "$BUILD/fuzz.log" || true
  echo "fuzz: FAILED; reproduce with $BUILD/tests/fuzz/tessera_parser_fuzzer $artifacts/<file>" >&2
  exit 1
fi
grep -m1 -E '^INFO: Seed:' "$BUILD/fuzz.log" || true
grep -E '^stat::number_of_executed_units|^Done' "$BUILD/fuzz.log" || true
echo "fuzz: no crash, hang or leak"
