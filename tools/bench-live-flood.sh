#!/bin/sh
# bench-live-flood.sh — the app's CPU a live record, two builds alternated
# round by round, with wick-demo --flood as the producer (benchmark
# live-app-cpu, tests/integration/live/bench-live-app.c).
#
#   tools/bench-live-flood.sh OLD_BUILD NEW_BUILD [RATE...]
#
# Each build directory must hold tests/integration/live/bench-live-app and
# data/gschemas.compiled. RATEs are records a second (0: as fast as the demo
# can; default "20000 50000 100000 0"). The producer is one binary for both
# builds: $WICK_DEMO, default NEW_BUILD/backend/demo/wick-demo. Environment:
# SERIES (default 3: each build runs SERIES rounds a rate, old then new, a
# round at a time), ROUND_SECONDS (measured seconds a round, default 8). Run under
# a display (xvfb-run -a -s "-screen 0 1600x1000x24" dbus-run-session -- ...).
# Prints each round's lines, the load average before each, and a summary:
# median (min-max) of µs a record, main thread µs a record, records/s
# committed, the app's cores (CPU seconds a second), frames painted a second,
# the main thread's CPU a frame, the app's CPU outside the frames a record
# (the worker, the commits, the live analysis; not the scene update and
# drawing, which a following view does each frame) and records lost, by rate
# and build; new/old of the medians; and each build's marginal µs a record
# between successive rates (the rise in cores over the rise in records/s:
# the cost a record adds beyond the frames a following view draws anyway).
set -eu

if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_BUILD NEW_BUILD [RATE...]" >&2
  exit 2
fi
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
shift 2
rates=${*:-20000 50000 100000 0}
demo=${WICK_DEMO:-$new/backend/demo/wick-demo}
series=${SERIES:-3}
seconds=${ROUND_SECONDS:-8}
for build in "$old" "$new"; do
  for file in tests/integration/live/bench-live-app data/gschemas.compiled; do
    if [ ! -e "$build/$file" ]; then
      echo "$0: $build/$file is missing (build it first)" >&2
      exit 1
    fi
  done
done
if [ ! -x "$demo" ]; then
  echo "$0: no producer at $demo (set WICK_DEMO)" >&2
  exit 1
fi
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "$0: no display: run under xvfb-run" >&2
  exit 1
fi

results=$(mktemp)
trap 'rm -f "$results" "$results.mismatch"' EXIT
run_one () { # BUILD_NAME BUILD_DIR RATE SERIES
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  status=0
  out=$(env GSETTINGS_BACKEND=memory GSETTINGS_SCHEMA_DIR="$2/data" GTK_A11Y=none \
          NO_AT_BRIDGE=1 WICK_DEMO="$demo" WICK_BENCH_FLOOD="$3" WICK_BENCH_ROUNDS=1 \
          WICK_BENCH_SECONDS="$seconds" "$2/tests/integration/live/bench-live-app" 2>&1) || status=$?
  if ! echo "$out" | grep -q '^round 1: count:'; then
    echo "$out" >&2
    echo "$0: $1 at rate $3 failed (exit status $status)" >&2
    exit 1
  fi
  echo "# series $4, rate $3, $1 ($2), load $load"
  echo "$out" | grep '^round'
  if [ "$status" -ne 0 ]; then
    echo "# COUNT MISMATCH: $1 at rate $3 (records missing or extra without a loss)"
    echo "$3 $1" >> "$results.mismatch"
  fi
  frames=$(echo "$out" | sed -n 's/^round 1: \([0-9]*\) frames\/s painted, \([0-9.]*\) ms of main thread CPU a frame (.*); outside the frames \([0-9.]*\) us a record$/\1 \2 \3/p')
  echo "$out" | sed -n 's/^round 1: \([0-9]*\) records in \([0-9.]*\) s (\([0-9]*\) records\/s committed, \([0-9]*\) lost), .*: \([0-9.]*\) us a record (main thread \([0-9.]*\))$/\5 \6 \3 \4/p' \
    | while read -r us main rate lost; do
        echo "$3 $1 $us $main $rate $lost $(echo "$us $rate" | awk '{ printf "%.3f", $1 * $2 / 1e6 }') ${frames:-0 0 0}"
      done >> "$results"
}
s=1
while [ "$s" -le "$series" ]; do
  for rate in $rates; do
    run_one old "$old" "$rate" "$s"
    run_one new "$new" "$rate" "$s"
  done
  s=$((s + 1))
done

if [ -s "$results.mismatch" ]; then
  echo "# rounds whose count did not match (rate, app):"
  sort "$results.mismatch" | uniq -c
fi
echo "# summary: median (min-max); rate 0 is as fast as the demo can"
awk '
  function stat(key, col,   n, i, j, t, v) {
    n = split(vals[key, col], v, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] + 0 < v[j - 1] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    med[key, col] = v[int((n + 1) / 2)]
    return sprintf("%s (%s-%s)", v[int((n + 1) / 2)], v[1], v[n])
  }
  { key = $1 " " $2; if (!(key in seen)) { seen[key] = 1; order[++k] = key }
    for (c = 3; c <= 10; c++) vals[key, c] = vals[key, c] " " $c; count[key]++ }
  END {
    printf "%-8s %-4s %-7s %-22s %-22s %-22s %-24s %-22s %-16s %-20s %s\n", "rate", "app", "rounds", "us a record", "main thread us", "outside frames us", "records/s", "cores", "frames/s", "ms a frame", "lost"
    for (i = 1; i <= k; i++) {
      key = order[i]; split(key, p, " ")
      printf "%-8s %-4s %-7s %-22s %-22s %-22s %-24s %-22s %-16s %-20s %s\n", p[1], p[2], count[key], stat(key, 3), stat(key, 4), stat(key, 10), stat(key, 5), stat(key, 7), stat(key, 8), stat(key, 9), stat(key, 6)
    }
    for (i = 1; i <= k; i++) {
      key = order[i]; split(key, p, " ")
      if (p[2] == "new" && ((p[1] " old", 3) in med) && med[p[1] " old", 3] > 0)
        printf "rate %s: new/old of the medians: %.2f (main thread %.2f, outside the frames %.2f)\n", p[1], med[key, 3] / med[p[1] " old", 3], med[key, 4] / med[p[1] " old", 4], (med[p[1] " old", 10] > 0 ? med[key, 10] / med[p[1] " old", 10] : 0)
    }
    # the marginal cost: the cores of the app against the records/s committed,
    # between successive rates (what a record adds beyond the frames)
    for (i = 1; i <= k; i++) {
      key = order[i]; split(key, p, " ")
      if (p[2] in last) {
        dr = med[key, 5] - last_rate[p[2]]
        if (dr > 0)
          printf "%s: %s -> %s records/s: %.2f us a further record\n", p[2], last_rate[p[2]], med[key, 5], 1e6 * (med[key, 7] - last_cores[p[2]]) / dr
      }
      last[p[2]] = 1; last_rate[p[2]] = med[key, 5]; last_cores[p[2]] = med[key, 7]
    }
  }' "$results"
