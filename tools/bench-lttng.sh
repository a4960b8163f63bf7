#!/usr/bin/env bash
# Runs the recording hot-path benchmark with an active LTTng-UST session
# recording the peer's tracepoints, so the LTTng figure is a real recording
# (needs lttng-tools: apt-get install lttng-tools).
set -euo pipefail
build=${1:-_build}
out=$(mktemp -d)
lttng-sessiond --daemonize >/dev/null 2>&1 || true
lttng create wick-bench --output "$out" >/dev/null
trap 'lttng destroy wick-bench >/dev/null 2>&1 || true; rm -rf "$out"' EXIT
lttng enable-event -u 'wick_bench:*' >/dev/null
lttng start >/dev/null
meson test -C "$build" --benchmark --verbose ring-hot-path
lttng stop >/dev/null
echo "lttng recorded $(du -sh "$out" | cut -f1) of trace data"
