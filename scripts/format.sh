#!/usr/bin/env bash
# Checks that every tracked C++ file (or the files named) is formatted as .clang-format says, and
# lists those that are not; `--fix` rewrites them instead. Uses clang-format-14 (Debian's
# clang-format package) unless CLANG_FORMAT names another.
#   scripts/format.sh [--fix] [FILE...]
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLANG_FORMAT="${CLANG_FORMAT:-clang-format-14}"

fix=0
if [[ "${1:-}" == --fix ]]; then
  fix=1
  shift
fi
if [[ "${1:-}" == -* ]]; then
  echo "usage: scripts/format.sh [--fix] [FILE...]" >&2
  exit 2
fi
command -v "$CLANG_FORMAT" >/dev/null || {
  echo "format: $CLANG_FORMAT not found (scripts/setup.sh installs clang-format)" >&2
  exit 2
}

cd "$REPO"
if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cpp' '*.h')
fi

if ((fix)); then
  "$CLANG_FORMAT" -i --style=file "${files[@]}"
  exit 0
fi

bad=0
lines=0
for f in "${files[@]}"; do
  # Lines of the file that the formatter would not keep as they are.
  n="$("$CLANG_FORMAT" --style=file "$f" | diff --old-line-format='-
' --new-line-format='' --unchanged-line-format='' "$f" - | wc -l || true)"
  if ((n > 0)); then
    echo "$f: $n lines would change"
    bad=$((bad + 1))
    lines=$((lines + n))
  fi
done
if ((bad)); then
  echo "format: $bad of ${#files[@]} files, $lines lines, are not formatted; scripts/format.sh --fix rewrites them" >&2
  exit 1
fi
