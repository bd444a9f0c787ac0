#!/usr/bin/env bash
# Packs what the device-vs-interp suites and `tessera bench` need into one archive that runs on a
# machine with none of this project's packages (the lent GPU machine: another distribution, no
# registry, its own python3): the CLI, the Python package, a Python 3.11 with numpy and pytest
# (the package is built for 3.11), and every shared library they load except glibc's. The GPU
# drivers' OpenCL and Vulkan ICDs come from that machine; scripts/device/checks.sh finds them.
# Usage: scripts/device/bundle.sh OUT.tar.xz   (after `make build`)
set -euo pipefail
out=$(realpath -m "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
site=$root/.venv/lib/python3.11/site-packages
py=$stage/py/lib/python3.11

mkdir -p "$stage/bin" "$stage/lib" "$py"
cp "$root/build/frontends/cli/tessera" "$stage/bin/"
cp /usr/bin/python3.11 "$stage/bin/"
# The standard library without what tests never import (and without libpython.a).
tar -C /usr/lib/python3.11 --exclude=test --exclude=idlelib --exclude=tkinter --exclude=turtledemo \
  --exclude=ensurepip --exclude=lib2to3 --exclude=pydoc_data --exclude='config-3.11*' \
  --exclude=__pycache__ -cf - . | tar -C "$py" -xf -
mkdir -p "$py/site-packages"
for pkg in numpy numpy.libs pytest _pytest pluggy iniconfig packaging py.py; do
  cp -r "$site/$pkg" "$py/site-packages/"
done
rm -rf "$py/site-packages/numpy/"{tests,*/tests,f2py,distutils,core/include,doc,typing}
# Extensions that would pull in OpenSSL, Kerberos, Berkeley DB or curses, and CPython's own tests.
rm -f "$py/lib-dynload/"{_ssl,_hashlib,_dbm,_gdbm,_crypt,_curses,_curses_panel,readline,nis,ossaudiodev}.*
rm -f "$py/lib-dynload/"{_test,_xx,_codecs_,xxlimited,_ctypes_test,audioop}*
cp -r "$root/build/python/tessera" "$py/site-packages/"
find "$stage" -name __pycache__ -prune -exec rm -rf {} +

# Every shared library the binaries and extensions load, but glibc's own (the host's must be used).
glibc='^(libc|libm|libdl|librt|libpthread|libresolv|libutil|ld-linux-x86-64)\.so'
find "$stage" -type f \( -name '*.so*' -o -perm -u+x \) -print0 |
  { xargs -0 ldd 2>/dev/null || true; } | awk '/=> \//{print $1, $3}' | sort -u |
  while read -r name path; do
    [[ $name =~ $glibc || $path == "$stage"* ]] || cp -nL "$path" "$stage/lib/$name"
  done
# The device tool carries at most 64 MiB. LLVM needs libxml2 (Windows manifests), which needs ICU
# and its 31 MB of locale data; Tessera never converts text encodings, so an empty data library
# stands in (ICU would report missing data, never compute with it). Our binaries lose symbols.
for icu in "$stage"/lib/libicudata.so.*; do
  [[ -e $icu ]] || continue
  major=${icu##*.so.}
  echo "const char icudt${major}_dat[32] = {0};" |
    cc -shared -fPIC -x c - -Wl,-soname,"libicudata.so.$major" -o "$icu"
done
strip --strip-unneeded "$stage/bin/tessera" "$py/site-packages/tessera/"_native*.so
tar -C "$stage" -cf - . | xz -T0 -9 >"$out"
ls -la "$out"
