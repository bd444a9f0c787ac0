#!/usr/bin/env bash
# Makes the peer engines' venvs for bench/compare under build/bench-venvs/, from Debian's
# /usr/bin/python3 (3.11), one per family because their numpy (2.x) is not the project venv's (1.x):
#   ort    ONNX Runtime, OpenVINO, onnx, matplotlib (requirements-ort.txt; run.py runs here too)
#   torch  PyTorch eager and torch.compile       (requirements-torch.txt; skipped with NO_TORCH=1)
#   plaidml  PlaidML 0.7 + Keras 2.2.4 (bench/keras/setup_plaidml.sh, its requirements-plaidml.txt;
#          skipped with NO_PLAIDML=1), and pocl-as-gpu/libOpenCL.so for its OpenCL device on PoCL
# Tessera's own worker runs in the project venv (.venv, `make build`), not here.
# A venv made from the same requirements file is kept (a stamp holds the file's hash), so a second run
# installs nothing. Prints each venv's python and what it holds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venvs=${BENCH_VENVS:-$repo/build/bench-venvs}
families=(ort)
[[ ${NO_TORCH:-0} == 1 ]] || families+=(torch)

for family in "${families[@]}"; do
  venv=$venvs/$family
  reqs=$here/requirements-$family.txt
  stamp=$venv/.requirements.sha256
  if [[ ! -f $stamp || $(cat "$stamp") != $(sha256sum <"$reqs") ]]; then
    rm -rf "$venv"
    /usr/bin/python3 -m venv "$venv"
    # nice: these installs unpack gigabytes (torch) on machines shared with builds.
    nice -n 10 "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$reqs" >&2
    sha256sum <"$reqs" >"$stamp"
  fi
  echo "$family: $venv/bin/python"
done

if [[ ${NO_PLAIDML:-0} != 1 ]]; then
  # Its own script (the Keras bench's venv): Python 3.11 aliases and the llvm_cpu.0 device settings.
  echo "plaidml: $(nice -n 10 "$repo/bench/keras/setup_plaidml.sh" "$venvs/plaidml" | tail -n 1)"
  # The plaidml-opencl engine's libOpenCL.so, which shows PoCL's device to PlaidML as a GPU.
  mkdir -p "$venvs/plaidml/pocl-as-gpu"
  cc -shared -fPIC -O2 -Wall -o "$venvs/plaidml/pocl-as-gpu/libOpenCL.so" "$here/pocl_as_gpu.c" \
    -Wl,--no-as-needed -l:libOpenCL.so.1 -ldl
fi

"$venvs/ort/bin/python" - <<'PY'
import importlib.metadata as md
print("  ort:", ", ".join(f"{p} {md.version(p)}" for p in ("onnxruntime", "openvino", "onnx", "numpy", "matplotlib")))
PY
if [[ -x $venvs/torch/bin/python && ${NO_TORCH:-0} != 1 ]]; then
  "$venvs/torch/bin/python" -c 'import torch, numpy; print(f"  torch: torch {torch.__version__}, numpy {numpy.__version__}")'
fi
