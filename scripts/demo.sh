#!/usr/bin/env bash
# The demo. Part 1: Keras trains a small ResNet on Tessera (examples/keras/train_resnet.py).
# Part 2: each program of examples/demo on the compiled `cpu` device and on the reference
# interpreter with the same seeded random inputs: the cpu outputs' shapes and checksums and the
# largest difference from interp per output; it fails when one exceeds its dtype's tolerance
# (float32: rtol 1e-4, atol 1e-5; float64: 1e-10, 1e-12; float16: 2e-3; others exactly). Then the
# tuner and the kernel cache on a conv net's forward and backward pass.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESSERA="${TESSERA_BIN:-$REPO/.venv/bin/tessera}"  # installed by make build (pip install .)
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# Part 1, the mission's first user: unchanged Keras code trains a small ResNet on the default
# device, then ResNet50 predicts. Its kernel cache is kept in build/, so a second `make demo` finds
# every kernel there (epoch 1 then as fast as epoch 3, no tuning).
echo "== Keras 2.3.1 on tessera.keras.backend (examples/keras/train_resnet.py)"
KERAS_BACKEND=tessera.keras.backend KERAS_HOME="$out/keras-home" \
  TESSERA_CACHE="${TESSERA_CACHE:-$REPO/build/demo-cache.db}" "$PYTHON" "$REPO/examples/keras/train_resnet.py"

# Part 2, the command line on Tile programs.

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

# Tuning between runs and the kernel cache: a small conv net's forward and backward pass (its
# gradient from `tessera grad`), 1500 training-like runs in one process with a fresh cache (policy
# online: the first run waits for no tuning; hot kernels are tuned between runs within 20% of the
# run time and swapped in when faster in the runs), then 300 more in a second process, which starts
# from what the first stored. At 7 ms a run, 300 runs' 20% does not cover a search's four trials
# (OnlineTuner::may_spend): the first process would tune nothing.
echo "== convnet (examples/demo/convnet.tile): forward + backward from tessera grad, 1500 runs, then 300 in a second process, from a fresh kernel cache"
"$TESSERA" grad "$REPO/examples/demo/convnet.tile" --wrt K1,B1,K2,B2,D --of L -o "$out/convnet_grad.tile"
"$PYTHON" - "$REPO/examples/demo/convnet.json" "$out/convnet_grad.json" <<'EOF'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["inputs"]["d_L"] = {"dtype": "float32", "shape": []}  # the seed of the backward pass
json.dump(spec, open(sys.argv[2], "w"))
EOF
for pass in first second; do
  runs=$([[ $pass == first ]] && echo 1500 || echo 300)
  TESSERA_CACHE="$out/cache.db" TESSERA_TUNE=online "$TESSERA" run "$out/convnet_grad.tile" \
    --spec "$out/convnet_grad.json" --random 1 --repeat "$runs" --out-dir "$out/convnet/$pass" \
    --stats "$out/$pass.json" > /dev/null
  "$PYTHON" - "$out/$pass.json" "$pass" "$runs" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
o = s["online"]
print(f"   {sys.argv[2]} process: {s['kernels']} kernels, {s['cache_hits']} from the cache; compile "
      f"{s['compile_seconds']:.2f} s; {sys.argv[3]} runs {o['run_seconds']:.2f} s (median {s['run_seconds'] * 1e3:.1f} ms), "
      f"tuning between them {o['tune_seconds']:.2f} s ({o['tune_seconds'] / o['run_seconds']:.0%})")
for k in o["kernels"]:
    after = f"{k['seconds_after'] * 1e3:.3f} ms" if k["seconds_after"] else "-"
    when = f", from run {k['first_run']}" if k["outcome"] == "swapped" else ""
    print(f"     {k['kernel']:<10} {k['trials']} trials, in the run {k['seconds_before'] * 1e3:.3f} ms -> {after}: "
          f"{k['outcome'].split(':')[0]}{when}")
EOF
done
"$PYTHON" - "$out/convnet" <<'EOF'
import pathlib, sys
import numpy as np
root = pathlib.Path(sys.argv[1])
names = sorted(f.stem for f in (root / "first").glob("*.npy"))
for name in names:
    a, b = np.load(root / "first" / f"{name}.npy"), np.load(root / "second" / f"{name}.npy")
    if not np.allclose(a, b, rtol=1e-4, atol=1e-6):
        sys.exit(f"   {name}: the second process's gradients differ from the first's")
print("   both processes give the same gradients: " + ", ".join(names))
EOF
