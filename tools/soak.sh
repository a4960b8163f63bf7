#!/usr/bin/env bash
# soak.sh — memory of a long live session.
#
# Starts wick-demo at full speed (--rate 0) with control, opens the Wick app
# attached live to it under xvfb-run (wick --attach PID), sends control traffic the
# whole time (list, hello, mark, evict/restore of the frozen embedding on the
# disk tier and of the trained trunk on the RAM tier), and samples every INTERVAL seconds:
#   wick-demo: VmRSS, RssAnon (its heap), RssShmem (ring pages it touched),
#              training steps so far;
#   the app:   VmRSS, RssAnon.
# If the app exits, that is written to DIR/app-exits.log (time, status) and
# the app is opened again (column app_starts), so the demo's side goes on.
# It writes DIR/soak.tsv (one row a sample, appended as it goes, so a run cut
# short still has its table) and DIR/summary.txt: growth per hour of each
# series over the second half of the run, and the records the demo recorded
# (records per step are measured once at the start with a 5 s
# `wick-trace attach`, then steps are counted from the demo's output).
#
# Usage: tools/soak.sh [--duration S] [--interval S] [--output DIR] [--no-app]
# Environment: WICK_BUILD_DIR (default _build; needs app/ui/wick,
# backend/demo/wick-demo and app/cli/wick-trace built).
# Run it niced on a shared machine: nice tools/soak.sh --duration 3600.
set -euo pipefail
cd "$(dirname "$0")/.."

duration=3600
interval=30
output=soak-out
with_app=true
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --output) output=$2; shift 2 ;;
    --no-app) with_app=false; shift ;;
    *) echo "soak: unknown option $1" >&2; exit 2 ;;
  esac
done
build=${WICK_BUILD_DIR:-_build}
demo_bin=$build/backend/demo/wick-demo
trace_bin=$build/app/cli/wick-trace
app_bin=$build/app/ui/wick
for bin in "$demo_bin" "$trace_bin"; do
  [ -x "$bin" ] || { echo "soak: $bin is not built" >&2; exit 1; }
done
if $with_app; then
  [ -x "$app_bin" ] || { echo "soak: $app_bin is not built (or pass --no-app)" >&2; exit 1; }
  command -v xvfb-run >/dev/null || { echo "soak: xvfb-run is missing (or pass --no-app)" >&2; exit 1; }
fi
mkdir -p "$output"
output=$(cd "$output" && pwd)

# One field of /proc/PID/status in kB, or - when the process is gone.
status_kb() {
  awk -v key="$2:" '$1 == key { print $2; found = 1 } END { if (!found) print "-" }' \
    "/proc/$1/status" 2>/dev/null || echo -
}

demo_pid=
app_wrapper=
traffic_pid=
cleanup() {
  [ -n "$traffic_pid" ] && kill "$traffic_pid" 2>/dev/null || true
  if [ -n "$app_wrapper" ] && kill -0 "$app_wrapper" 2>/dev/null; then
    [ -n "${app_pid:-}" ] && kill -TERM "$app_pid" 2>/dev/null || true
    wait "$app_wrapper" 2>/dev/null || true
  fi
  if [ -n "$demo_pid" ] && kill -0 "$demo_pid" 2>/dev/null; then
    kill -INT "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

"$demo_bin" --rate 0 >"$output/demo.log" 2>&1 &
demo_pid=$!
for _ in $(seq 300); do
  "$trace_bin" sessions --json 2>/dev/null | grep -q "\"pid\":$demo_pid," && break
  kill -0 "$demo_pid" 2>/dev/null || { echo "soak: wick-demo exited early" >&2; exit 1; }
  sleep 0.1
done

# Records per training step, from a 5 s attach (before the app holds a reader).
"$trace_bin" attach --duration 5 --output "$output/sample.jsonl" "$demo_pid" \
  >"$output/attach.log" 2>&1 || true
lines=$(wc -l <"$output/sample.jsonl")
steps_in_sample=$(grep -c '"name":"train_step"' "$output/sample.jsonl" || true)
# the name is on a span's begin only (span_end lines carry just the id)
records_per_step=$(awk -v l="$lines" -v s="$steps_in_sample" \
  'BEGIN { if (s > 0) printf "%.1f", l / s; else print 0 }')

app_pid=
app_starts=0
# Opens the app attached to the demo under its own Xvfb; sets app_pid.
start_app() {
  app_starts=$((app_starts + 1))
  xvfb-run -a -s "-screen 0 1600x1000x24" dbus-run-session -- \
    "$app_bin" --attach "$demo_pid" >>"$output/app.log" 2>&1 &
  app_wrapper=$!
  app_pid=
  local app_real
  app_real=$(readlink -f "$app_bin")
  for _ in $(seq 600); do
    for p in $(pgrep -P "$app_wrapper" 2>/dev/null; pgrep -g "$(ps -o pgid= "$app_wrapper" | tr -d ' ')" 2>/dev/null); do
      if [ "$(readlink -f "/proc/$p/exe" 2>/dev/null)" = "$app_real" ]; then
        app_pid=$p
        return 0
      fi
    done
    sleep 0.1
  done
  echo "soak: the app did not start (see $output/app.log)" >&2
  exit 1
}
$with_app && start_app

# Control traffic: one round about every 2 s, counted.
(
  round=0
  while kill -0 "$demo_pid" 2>/dev/null; do
    for command in "list" "hello" "mark soak-$round" "evict embedding --tier disk" \
      "restore embedding" "evict trunk --tier ram" "restore trunk"; do
      # shellcheck disable=SC2086
      "$trace_bin" control "$demo_pid" $command >/dev/null 2>&1 || echo "$round $command" >>"$output/control-failures.log"
    done
    round=$((round + 1))
    echo "$round" >"$output/control-rounds"
    sleep 2
  done
) &
traffic_pid=$!

steps_now() {
  local s
  s=$(grep -o '^step [0-9]*' "$output/demo.log" | tail -n 1 | cut -d' ' -f2)
  echo "${s:-0}"
}

printf 'seconds\tsteps\tdemo_rss_kB\tdemo_anon_kB\tdemo_shmem_kB\tapp_rss_kB\tapp_anon_kB\tcontrol_rounds\tapp_starts\n' \
  >"$output/soak.tsv"
start=$(date +%s)
while :; do
  now=$(date +%s)
  elapsed=$((now - start))
  app_rss=-
  app_anon=-
  if [ -n "$app_pid" ]; then
    app_rss=$(status_kb "$app_pid" VmRSS)
    app_anon=$(status_kb "$app_pid" RssAnon)
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$elapsed" "$(steps_now)" \
    "$(status_kb "$demo_pid" VmRSS)" "$(status_kb "$demo_pid" RssAnon)" \
    "$(status_kb "$demo_pid" RssShmem)" "$app_rss" "$app_anon" \
    "$(cat "$output/control-rounds" 2>/dev/null || echo 0)" "$app_starts" >>"$output/soak.tsv"
  kill -0 "$demo_pid" 2>/dev/null || { echo "soak: wick-demo exited (see $output/demo.log)" >&2; break; }
  if [ -n "$app_pid" ] && ! kill -0 "$app_pid" 2>/dev/null; then
    # Said and counted, then opened again: the demo's side of the soak goes on.
    app_status=0
    wait "$app_wrapper" 2>/dev/null || app_status=$?
    echo "soak: the app exited at ${elapsed} s with status $app_status (see $output/app.log); opening it again" \
      | tee -a "$output/app-exits.log" >&2
    start_app
  fi
  [ "$elapsed" -ge "$duration" ] && break
  sleep "$interval"
done

# Growth per hour over the second half (the first minutes fill rings and caches).
awk -F'\t' -v rps="$records_per_step" '
  BEGIN { n = 0 }
  NR == 1 { next }
  { t[n] = $1; st[n] = $2; for (c = 3; c <= 7; c++) v[n, c] = $c; starts = $9; n++ }
  END {
    if (n < 3) { print "too few samples"; exit }
    h = int(n / 2); last = n - 1
    split("demo VmRSS,demo RssAnon,demo RssShmem,app VmRSS,app RssAnon", name, ",")
    printf "samples %d over %d s; records per step %s; steps %d; records ~%.0f (%.0f/s); app opened %s times\n",
      n, t[last], rps, st[last], st[last] * rps, st[last] * rps / (t[last] > 0 ? t[last] : 1), starts
    for (c = 3; c <= 7; c++) {
      if (v[0, c] == "-" || v[last, c] == "-" || v[h, c] == "-") continue
      dt = t[last] - t[h]
      rate = dt > 0 ? (v[last, c] - v[h, c]) / dt * 3600 / 1024 : 0
      drec = (st[last] - st[h]) * rps
      per = drec > 0 ? (v[last, c] - v[h, c]) * 1024 / drec : 0
      printf "%-12s start %7.1f MiB  half %7.1f MiB  end %7.1f MiB  second half %+6.2f MiB/h, %+.3f B/record\n",
        name[c - 2], v[0, c] / 1024, v[h, c] / 1024, v[last, c] / 1024, rate, per
    }
  }' "$output/soak.tsv" | tee "$output/summary.txt"
