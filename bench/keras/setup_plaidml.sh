#!/usr/bin/env bash
# Makes the PlaidML 0.7 + Keras 2.2.4 venv the Keras bench compares against, outside the project
# venv: build/bench-venvs/plaidml (or $1), from Debian's /usr/bin/python3 (3.11). A venv made from
# the same requirements file is kept. Prints the venv's python on the last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
venv=${1:-$repo/build/bench-venvs/plaidml}
reqs=$here/requirements-plaidml.txt
stamp=$venv/.requirements.sha256

if [[ ! -f $stamp || $(cat "$stamp") != $(sha256sum <"$reqs") ]]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  # --no-deps: plaidml's metadata asks for enum34 (which breaks Python 3) and plaidml-keras for a
  # Keras stack without 3.11 wheels; the requirements file lists what they need instead.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$reqs" >&2
  sha256sum <"$reqs" >"$stamp"
fi

# Python 3.11 aliases and the device choice, loaded at every start of the venv's python.
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cp "$here/plaidml_bench_site.py" "$site/plaidml_bench_site.py"
echo 'import plaidml_bench_site' >"$site/plaidml_bench_site.pth"
echo '{}' >"$site/plaidml-bench-settings.json"

# PlaidML must list the LLVM CPU device under those settings, with no plaidml-setup run.
"$venv/bin/python" - <<'PY' >&2
import os, plaidml, plaidml.settings
plaidml.settings.experimental = os.environ["PLAIDML_EXPERIMENTAL"] == "1"
devices = [d.id.decode() for d in plaidml.devices(plaidml.Context(), limit=100)]
if os.environ["PLAIDML_DEVICE_IDS"] not in devices:
    raise SystemExit(f"PlaidML lists {devices}, not {os.environ['PLAIDML_DEVICE_IDS']}")
print(f"PlaidML {plaidml.__version__}: devices {devices}")
PY
echo "$venv/bin/python"
