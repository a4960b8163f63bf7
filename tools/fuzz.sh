#!/usr/bin/env bash
# Runs every libFuzzer target in BUILD_DIR for SECONDS each (default 60) over
# its seed corpus in tests/fuzz/<target>/corpus, JOBS targets at a time
# (default 2), and prints each target's executions and coverage (libFuzzer's
# cov: edges and ft: features) so a CI log shows whether the fuzzing had
# feedback. New inputs go to a scratch directory, never into the corpus.
set -euo pipefail
build=${1:-_build-asan}
seconds=${2:-60}
jobs=${3:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

run_one() {
  local target=$1 name target_name corpus work log
  name=$(basename "$target")
  target_name=${name#fuzz-}
  corpus=$root/tests/fuzz/$target_name/corpus
  [ -d "$corpus" ] || corpus=$root/tests/fuzz/${target_name%%-*}/corpus
  if [ ! -d "$corpus" ]; then
    echo "fuzz: $name: no seed corpus (tests/fuzz/$target_name/corpus)"
    return 1
  fi
  work=$scratch/$name
  log=$scratch/$name.log
  mkdir -p "$work"
  local status=0
  "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    "$work" "$corpus" >"$log" 2>&1 || status=$?
  local execs last
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  last=$(grep -E '^#[0-9]+[[:space:]]' "$log" | tail -1 || true)
  local cov ft
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  echo "fuzz: $name: ${execs:-?} executions in ${seconds}s, cov: ${cov:-?} ft: ${ft:-?}"
  if [ $status -ne 0 ]; then
    echo "fuzz: $name FAILED (status $status):"
    tail -40 "$log"
    return 1
  fi
}

targets=()
for target in "$build"/tests/fuzz/fuzz-*; do
  case "$(basename "$target")" in fuzz-replay-*) continue ;; esac
  [ -f "$target" ] && [ -x "$target" ] && targets+=("$target")
done
if [ ${#targets[@]} -eq 0 ]; then
  echo "fuzz: no libFuzzer targets in $build/tests/fuzz (configure with -Dfuzz=true under clang)"
  exit 1
fi
start=$(date +%s)
status=0
pids=()
for target in "${targets[@]}"; do
  run_one "$target" > "$scratch/$(basename "$target").out" &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
cat "$scratch"/*.out
echo "fuzz: ${#targets[@]} targets, ${seconds}s each, $jobs at a time: $(( $(date +%s) - start ))s"
exit $status
