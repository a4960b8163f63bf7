#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for SECONDS each over its seed corpus.
set -euo pipefail
build=${1:-_build-asan}
seconds=${2:-20}
status=0
for target in "$build"/tests/fuzz/fuzz-*; do
  name=$(basename "$target")
  case "$name" in fuzz-replay-*) continue ;; esac
  [ -f "$target" ] && [ -x "$target" ] || continue
  target_name=${name#fuzz-}
  corpus=$(dirname "$0")/../tests/fuzz/$target_name/corpus
  [ -d "$corpus" ] || corpus=$(dirname "$0")/../tests/fuzz/${target_name%%-*}/corpus
  [ -d "$corpus" ] || { echo "fuzz: no seed corpus for $name"; status=1; continue; }
  work=$(mktemp -d)
  echo "fuzz: $name for ${seconds}s"
  "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 "$work" "$corpus" \
    >"$work.log" 2>&1 || { status=1; tail -40 "$work.log"; }
  grep -E "^(#[0-9]+ +DONE|Done [0-9]+ runs)" "$work.log" | tail -1 || true
  rm -rf "$work" "$work.log"
done
exit $status
