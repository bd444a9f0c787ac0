#!/usr/bin/env bash
# Runs each program of examples/demo on the compiled `cpu` device and on the reference
# interpreter with the same seeded random inputs, prints the cpu outputs' shapes and checksums and
# the largest difference from interp per output, and fails when one exceeds its dtype's tolerance
# (float32: rtol 1e-4, atol 1e-5; float64: 1e-10, 1e-12; float16: 2e-3; others exactly).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESSERA="${TESSERA_BIN:-$REPO/build/frontends/cli/tessera}"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

for program in matmul conv2d_same max_pool softmax; do
  echo "== $program (examples/demo/$program.tile on cpu, checked against interp; inputs uniform in [0.5, 1.5), seed 1)"
  for device in cpu interp; do
    mkdir -p "$out/$program/$device"
    # The CLI prints `NAME: dtype[shape] sum=S -> FILE`; the files are scratch, so drop the path.
    "$TESSERA" run "$REPO/examples/demo/$program.tile" --device "$device" \
      --spec "$REPO/examples/demo/$program.json" --random 1 --out-dir "$out/$program/$device" |
      sed -e 's/ -> .*$//' -e 's/^/   /' > "$out/$program/$device.txt"
  done
  cat "$out/$program/cpu.txt"
  "$PYTHON" - "$out/$program" <<'EOF'
import pathlib, sys
import numpy as np

TOL = {"float16": (2e-3, 2e-3), "float32": (1e-4, 1e-5), "float64": (1e-10, 1e-12)}
root = pathlib.Path(sys.argv[1])
names = sorted(p.name for p in (root / "interp").glob("*.npy"))
if names != sorted(p.name for p in (root / "cpu").glob("*.npy")):
    sys.exit("   cpu and interp give different outputs")
bad = False
for name in names:
    want, got = np.load(root / "interp" / name), np.load(root / "cpu" / name)
    if got.dtype != want.dtype or got.shape != want.shape:
        sys.exit(f"   {name}: cpu gives {got.dtype}{list(got.shape)}, interp {want.dtype}{list(want.shape)}")
    diff = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0))
    rtol, atol = TOL.get(str(want.dtype), (0.0, 0.0))
    ok = np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    bad |= not ok
    print(f"   {name[:-4]}: max |cpu - interp| = {diff:.3g} ({'ok' if ok else 'MISMATCH'}, rtol {rtol:g}, atol {atol:g})")
sys.exit(1 if bad else 0)
EOF
done
