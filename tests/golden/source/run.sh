#!/bin/bash
# Golden tests of `tessera lower --emit source`: each DEVICE_NAME.tile (opencl_*: opencl:0,
# vulkan_*: vulkan:0) carries its inputs on a first line `// ARGS: --in A=f32[4,8] ...`; the
# source it lowers to on that device must equal DEVICE_NAME.expected. A device this machine lacks
# is skipped with a message. TESSERA_ACCEPT=1 rewrites the .expected files instead.
set -u
tessera="$1"
dir="$(cd "$(dirname "$0")" && pwd)"
devices="$("$tessera" devices 2>/dev/null)"
status=0
for tile in "$dir"/*.tile; do
  name="${tile%.tile}"
  base="$(basename "$name")"
  device="${base%%_*}:0"
  if ! grep -q "^$device\b" <<<"$devices"; then
    echo "SKIP: $base.tile (no $device on this machine)"
    continue
  fi
  args=$(sed -n '1s|^// ARGS: ||p' "$tile")
  # shellcheck disable=SC2086
  actual=$("$tessera" lower "$tile" $args --device "$device" --emit source 2>&1)
  if [ "${TESSERA_ACCEPT:-0}" = 1 ]; then
    printf '%s\n' "$actual" > "$name.expected"
    continue
  fi
  if ! diff -u "$name.expected" <(printf '%s\n' "$actual"); then
    echo "FAIL: $base.tile"
    status=1
  fi
done
exit $status
