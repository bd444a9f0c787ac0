#!/usr/bin/env bash
# Makes (or keeps) the peers' venvs, then runs the comparison: bench/compare/run.sh [run.py options].
#   bench/compare/run.sh --models resnet50,mobilenet_v2 --batch 1 --engines ort,openvino,torch-eager,tessera-cpu
# Tessera's side uses the project venv (.venv: `make build`) and its `tessera` command; TESSERA_PYTHON and
# TESSERA_BIN point elsewhere. Set NO_TORCH=1 to skip making the torch venv (then leave torch-* out of --engines).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/setup.sh" >&2
venvs=${BENCH_VENVS:-$(cd "$here/../.." && pwd)/build/bench-venvs}
exec "$venvs/ort/bin/python" "$here/run.py" "$@"
