#!/usr/bin/env bash
# Rewrites tools/abi/libwick-1.abi from a build of libwick (default _build):
#
#   tools/abi/update-baseline.sh [BUILDDIR]
#
# Run it after an intended ABI change (or to take new public functions into
# the baseline) and commit the result with the change; docs/api.md.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/_build}
ninja -C "$build" backend/libwick.so.1.0.0
lib=$build/backend/libwick.so.1.0.0
if ! readelf -S "$lib" | grep -q '\.debug_info'; then
  echo "update-baseline: $lib has no debug information; configure with -Dbuildtype=debugoptimized" >&2
  exit 1
fi
abidw --headers-dir "$src/backend/wick" --drop-private-types \
      --no-show-locs --no-corpus-path --no-comp-dir-path \
      "$lib" > "$src/tools/abi/libwick-1.abi"
python3 "$src/tools/abi/check-exports.py" "$lib" "$src/backend/wick" "$src/backend/wick-1.map"
echo "update-baseline: wrote tools/abi/libwick-1.abi ($(grep -c '<elf-symbol' "$src/tools/abi/libwick-1.abi") functions)"
