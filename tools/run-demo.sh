#!/usr/bin/env bash
# README's main command: installs what is missing, builds Wick, starts the
# wick-demo workload (an MLP training on the CPU with control enabled) and opens
# the Wick app attached live to it. Closing the app stops the demo, which then
# finishes its trace cleanly. Without a display it says so, shows the same
# session from the command line (sessions, control list, a 2 s attach checked
# with candle-graph's rules) and stops the demo.
#
# Environment: WICK_BUILD_DIR (default _build), WICK_DEMO_ARGS (extra
# wick-demo options, e.g. "--rate 50 --trace demo.jsonl").
#
# --torch: the workload is examples/torch_train.py (a PyTorch training loop
# recorded by the wick Python package, control enabled) instead of wick-demo;
# it needs torch for /usr/bin/python3 (or WICK_PYTHON). WICK_DEMO_ARGS then
# goes to torch_train.py.
set -euo pipefail
cd "$(dirname "$0")/.."

torch_demo=false
for arg in "$@"; do
  case "$arg" in
    --torch) torch_demo=true ;;
    *) echo "run-demo: unknown option $arg (only --torch)" >&2; exit 2 ;;
  esac
done
python=${WICK_PYTHON:-/usr/bin/python3}
if $torch_demo && ! "$python" -c "import torch" 2>/dev/null; then
  echo "run-demo: --torch needs torch for $python (Debian: apt-get install python3-torch)" >&2
  exit 1
fi

build=${WICK_BUILD_DIR:-_build}
tools/install-deps.sh

echo "run-demo: configuring $build"
if [ -f "$build/build.ninja" ]; then
  meson setup --reconfigure "$build" >/dev/null
else
  meson setup "$build" >/dev/null
fi
# Ninja's own progress ([n/N] lines) shows what the build is doing: a first
# build takes a minute or two, a later one seconds.
echo "run-demo: building the app, wick-demo and wick-trace"
meson compile -C "$build" -j "$(nproc)" app/ui/wick:executable backend/demo/wick-demo app/cli/wick-trace
echo "run-demo: starting wick-demo"

demo="$build/backend/demo/wick-demo"
trace="$build/app/cli/wick-trace"
app="$build/app/ui/wick"

if $torch_demo; then
  # shellcheck disable=SC2086
  PYTHONPATH="$build/python" "$python" examples/torch_train.py --control --steps 0 --rate 20 ${WICK_DEMO_ARGS:-} &
  demo="torch_train.py"
else
  # shellcheck disable=SC2086
  "$demo" ${WICK_DEMO_ARGS:-} &
fi
demo_pid=$!
stop_demo() {
  if kill -0 "$demo_pid" 2>/dev/null; then
    kill -INT "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
}
trap stop_demo EXIT

# Wait until the demo's control socket answers.
for _ in $(seq 300); do
  if "$trace" sessions --json | grep -q "\"pid\":$demo_pid,"; then
    break
  fi
  kill -0 "$demo_pid" 2>/dev/null || { echo "run-demo: wick-demo exited early" >&2; exit 1; }
  sleep 0.1
done

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "run-demo: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the app cannot open."
  echo "run-demo: wick-demo is running as pid $demo_pid; here is the same session from the command line."
  "$trace" sessions
  "$trace" control "$demo_pid" list
  out=$(mktemp --suffix=.jsonl)
  "$trace" attach --duration 2 --output "$out" "$demo_pid"
  # candle-graph's rules know no Wick extension records: convert --strict
  # leaves them out, then check judges the 2 s cut (a warning, not an error).
  "$trace" convert --strict "$out" --output "$out.strict"
  checked=0
  "$trace" check "$out.strict" || checked=$?
  rm -f "$out" "$out.strict"
  if [ "$checked" -ne 0 ]; then
    echo "run-demo: candle-graph's rules reject the attached trace (wick-trace check exit $checked)" >&2
    exit 1
  fi
  echo "run-demo: on a desktop, this command opens the app attached live to wick-demo."
  exit 0
fi

echo "run-demo: wick-demo is pid $demo_pid; opening Wick attached to it (close the window to stop)."
"$app" --attach "$demo_pid"
