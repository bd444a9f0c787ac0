#!/usr/bin/env bash
# Installs what Tessera needs to build and test: Debian packages and a project venv (.venv) with
# the pinned PyPI packages of scripts/requirements.txt. Idempotent; prints nothing when all is done.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
REQUIREMENTS="$REPO/scripts/requirements.txt"
# Debian's interpreter, not the pyenv python3 on PATH: Debian's numpy/torch belong to it.
PYTHON=/usr/bin/python3

PACKAGES=(
  cmake ninja-build g++ ccache
  libboost-dev libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev googletest
  libsqlite3-dev                                # the kernel cache (runtime/KernelCache)
  clang-14 libclang-rt-14-dev                   # the libFuzzer build (scripts/fuzz.sh)
  llvm-15-dev                                   # the CPU backend's JIT (shared libLLVM-15)
  llvm-15-tools                                 # FileCheck and lit for the golden tests (tests/golden)
  clang-format                                  # scripts/format.sh (clang-format-14)
  libbenchmark-dev libopenblas-dev libdnnl-dev  # bench/ (-DTESSERA_BENCH=ON): Tessera vs peers
  libclblast-dev                                # bench/: SGEMM on opencl:0 beside CLBlast
  python3-venv python3-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo  # the OpenCL backend, PoCL as its test device
  libvulkan-dev mesa-vulkan-drivers vulkan-tools  # the Vulkan backend, lavapipe as its test device
  vulkan-validationlayers                       # the Vulkan suite runs once under the validation layer
  libshaderc-dev glslang-dev glslang-tools spirv-tools  # GLSL -> SPIR-V at run time (glslang's CMake package needs glslang-tools)
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

if ((${#missing[@]})); then
  if [[ "$(id -u)" != 0 ]]; then
    echo "setup: missing Debian packages (${missing[*]}); run scripts/setup.sh as root" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A venv made from another interpreter (e.g. pyenv's) is rebuilt from Debian's.
if [[ -x "$VENV/bin/python" ]] && ! grep -qx "home = /usr/bin" "$VENV/pyvenv.cfg"; then
  echo "setup: $VENV was not made from $PYTHON; recreating it"
  rm -rf "$VENV"
fi
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
fi

# The stamp holds the hash of the requirements that were installed; pip runs only when it changes.
stamp="$VENV/.requirements.sha256"
want="$(sha256sum "$REQUIREMENTS" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]]; then
  echo "setup: installing Python packages from scripts/requirements.txt"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQUIREMENTS"
  echo "$want" >"$stamp"
fi

# Keras 2.3.1's own tests, from its source distribution (never committed), for `make keras-test`.
"$REPO/scripts/keras-tests.sh"
