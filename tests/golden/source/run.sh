#!/bin/bash
# Golden tests of `tessera lower --emit source`: each DEVICE_NAME.tile (opencl_*: opencl:0,
# vulkan_*: vulkan:0) carries its inputs on a first line `// ARGS: --in A=f32[4,8] ...`; the
# source it lowers to on that device must equal the expected file. The cost model picks vector
# widths from the device, so a device whose preferred float vector has W lanes is compared with
# DEVICE_NAME.vW.expected where one exists (PoCL: 16 lanes with AVX-512, 8 with AVX2), else with
# DEVICE_NAME.expected. A device this machine lacks is skipped with a message. TESSERA_ACCEPT=1
# rewrites the expected files instead.
set -u
tessera="$1"
dir="$(cd "$(dirname "$0")" && pwd)"
devices="$("$tessera" devices 2>/dev/null)"
lanes_of() {
  "$tessera" devices --json | python3 -c '
import json, sys
print(next(d["facts"].get("preferred_vector_width_float", "") for d in json.load(sys.stdin) if d["name"] == sys.argv[1]))' "$1"
}
status=0
for tile in "$dir"/*.tile; do
  name="${tile%.tile}"
  base="$(basename "$name")"
  device="${base%%_*}:0"
  if ! grep -q "^$device\b" <<<"$devices"; then
    echo "SKIP: $base.tile (no $device on this machine)"
    continue
  fi
  expected="$name.expected"
  lanes="$(lanes_of "$device")"
  if [ -e "$name.v$lanes.expected" ] || ls "$name".v*.expected >/dev/null 2>&1; then
    expected="$name.v$lanes.expected"
  fi
  args=$(sed -n '1s|^// ARGS: ||p' "$tile")
  # shellcheck disable=SC2086
  actual=$("$tessera" lower "$tile" $args --device "$device" --emit source 2>&1)
  if [ "${TESSERA_ACCEPT:-0}" = 1 ]; then
    printf '%s\n' "$actual" > "$expected"
    continue
  fi
  if [ ! -e "$expected" ]; then
    echo "FAIL: $base.tile: no $(basename "$expected") for $device ($lanes-lane float vectors); TESSERA_ACCEPT=1 writes it"
    status=1
  elif ! diff -u "$expected" <(printf '%s\n' "$actual"); then
    echo "FAIL: $base.tile (against $(basename "$expected"))"
    status=1
  fi
done
exit $status
