#!/usr/bin/env bash
# Fetches the tests of Keras 2.3.1's source distribution (never committed) into build/keras-tests
# and links tests/keras/conftest.py and pytest.ini there; `make keras-test` runs them on
# tessera.keras.backend. Idempotent; prints nothing when the tests are already there.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="$REPO/build/keras-tests"
PYTHON="$REPO/.venv/bin/python"
VERSION=2.3.1
# sha256 of Keras-2.3.1.tar.gz as PyPI lists it.
SHA256=321d43772006a25a1d58eea17401ef2a34d388b588c9f7646c34796151ebc8cc

stamp="$DEST/.sdist.sha256"
if [[ "$(cat "$stamp" 2>/dev/null || true)" != "$SHA256" ]]; then
  echo "keras-tests: fetching the tests of Keras $VERSION into $DEST"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-binary :all: --no-deps \
    --dest "$tmp" "keras==$VERSION"
  sdist="$tmp/Keras-$VERSION.tar.gz"
  if ! echo "$SHA256  $sdist" | sha256sum --check --status; then
    echo "keras-tests: $(basename "$sdist") does not have the pinned sha256 $SHA256" >&2
    exit 1
  fi
  rm -rf "$DEST"
  mkdir -p "$DEST"
  tar -xzf "$sdist" -C "$DEST" --strip-components=1 "Keras-$VERSION/tests"
  echo "$SHA256" >"$stamp"
fi
# Relative links, so that edits in tests/keras take effect without fetching again.
for file in conftest.py pytest.ini; do
  ln -sfr "$REPO/tests/keras/$file" "$DEST/$file"
done
