#!/usr/bin/env bash
# Installs what is missing, builds Wick with warnings as errors, and runs every
# suite (backend, model, app under Xvfb, integration, python, cuda, fuzz), installs
# into _install and checks Wick used from there (suite install), a headless
# build (-Dapp=disabled: model and wick-trace without GTK), then an
# ASan+UBSan build of the non-GUI suites and a short libFuzzer run.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/install-deps.sh

export GTK_A11Y=none NO_AT_BRIDGE=1
jobs=$(nproc)

echo "== build (warnings are errors)"
rm -rf _build-test _install
meson setup _build-test -Dwerror_ci=true --prefix="$PWD/_install" >/dev/null
meson compile -C _build-test -j "$jobs"

echo "== tests"
status=0
xvfb-run -a -s "-screen 0 1600x1000x24" dbus-run-session -- \
  meson test -C _build-test --print-errorlogs --num-processes "$jobs" --no-suite install || status=1

echo "== meson install (prefix _install), then Wick used from there"
meson install -C _build-test --no-rebuild >/dev/null || status=1
xvfb-run -a -s "-screen 0 1600x1000x24" dbus-run-session -- \
  meson test -C _build-test --print-errorlogs --suite install --logbase installlog || status=1

echo "== README's main command with no display (tools/run-demo.sh: wick-demo, sessions, control list, a 2 s attach)"
if env -u DISPLAY -u WAYLAND_DISPLAY WICK_BUILD_DIR=_build-test timeout 300 tools/run-demo.sh \
  >_build-test/meson-logs/run-demo.txt 2>&1; then
  echo "run-demo: OK ($(grep -c . _build-test/meson-logs/run-demo.txt) lines in _build-test/meson-logs/run-demo.txt)"
else
  echo "run-demo: FAILED:"
  cat _build-test/meson-logs/run-demo.txt
  status=1
fi

echo "== headless (-Dapp=disabled: the model and wick-trace with GLib alone, as on a GPU node)"
rm -rf _build-headless
meson setup _build-headless -Dapp=disabled -Dpython=disabled -Dcuda=disabled -Dwerror_ci=true >/dev/null
meson compile -C _build-headless -j "$jobs" app/cli/wick-trace backend/demo/wick-demo \
  tests/model/test-model-cli tests/model/test-model-document tests/integration/live/test-live-snapshot
if ldd _build-headless/app/cli/wick-trace | grep -Eq 'libgtk|libadwaita|libcairo|libpango'; then
  echo "headless: wick-trace links a GUI library:"; ldd _build-headless/app/cli/wick-trace; status=1
fi
meson test -C _build-headless --no-rebuild --print-errorlogs model-cli model-document live-snapshot || status=1

echo "== ASan+UBSan (backend, model, integration, fuzz suites)"
rm -rf _build-asan
CC=clang meson setup _build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Dfuzz=true -Dcuda=disabled >/dev/null
meson compile -C _build-asan -j "$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C _build-asan --print-errorlogs --num-processes "$jobs" \
  --suite backend --suite model --suite integration --suite fuzz || status=1

echo "== libFuzzer: 30 s a target, two at a time, with coverage (longer runs: tools/fuzz.sh BUILD SECONDS JOBS)"
tools/fuzz.sh _build-asan 30 2 || status=1

python3 tools/summarize-tests.py _build-test/meson-logs/testlog.json \
  _build-test/meson-logs/installlog.json _build-asan/meson-logs/testlog.json
exit $status
