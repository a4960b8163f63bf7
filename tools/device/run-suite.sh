#!/usr/bin/env bash
# On the GPU machine: builds (tools/device/build.sh) and runs meson test
# suites, by default `cuda`, with the carried GLib on the tests' library path.
# Logs go to $OUT when the device tool sets it.
# Usage: tools/device/run-suite.sh [suite ...]
source "$(dirname "$0")/env.sh"
tools/device/build.sh
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(cuda)
args=()
for s in "${suites[@]}"; do args+=(--suite "$s"); done
status=0
$WICK_MESON test -C _build-device --no-rebuild --print-errorlogs \
  --wrapper "env LD_LIBRARY_PATH=$WICK_RUNTIME_LD" "${args[@]}" || status=$?
if [ -n "${OUT:-}" ]; then
  cp _build-device/meson-logs/testlog.txt "$OUT/testlog-${suites[0]}.txt" 2>/dev/null || true
fi
exit $status
