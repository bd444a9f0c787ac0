#!/bin/bash
# Golden tests of `tessera lower --emit loops --target generic`: each NAME.tile carries its inputs
# on a first line `// ARGS: --in A=f32[4,8] ...`; its output must equal NAME.expected.
# TESSERA_ACCEPT=1 rewrites the .expected files instead.
set -u
tessera="$1"
dir="$(cd "$(dirname "$0")" && pwd)"
status=0
for tile in "$dir"/*.tile; do
  name="${tile%.tile}"
  args=$(sed -n '1s|^// ARGS: ||p' "$tile")
  # shellcheck disable=SC2086
  actual=$("$tessera" lower "$tile" $args --target generic --emit loops 2>&1)
  if [ "${TESSERA_ACCEPT:-0}" = 1 ]; then
    printf '%s\n' "$actual" > "$name.expected"
    continue
  fi
  if ! diff -u "$name.expected" <(printf '%s\n' "$actual"); then
    echo "FAIL: $(basename "$tile")"
    status=1
  fi
done
exit $status
