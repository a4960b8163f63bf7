#!/usr/bin/env bash
# On the GPU machine: the python suite's torch tests against its torch 2.x.
# The machine's pythons (3.12) have no headers, and the wick extension uses
# the limited API of 3.11 (abi3), so it is compiled here against Debian's 3.11
# headers (python3.11-dev and libpython3.11-dev, carried in .device/debs by
# tools/device/fetch-debs.sh) as _wick.abi3.so, which any CPython >= 3.11
# loads. Then each tests/python/test_torch_*.py runs with the first python3
# that imports torch (WICK_DEVICE_PYTHON to choose). Logs under $OUT.
# Usage: tools/device/run-python-cuda.sh [test_name ...]  (default: all torch tests)
# The package lands in _build-device/python-abi3 (PYTHONPATH for benchmarks).
source "$(dirname "$0")/env.sh"
# Only libwick and the headless wick-trace are needed (the meson python target
# fails there, and the rest takes minutes): WICK_DEVICE_TARGETS= builds all.
WICK_DEVICE_TARGETS=${WICK_DEVICE_TARGETS-backend/libwick.so.1.0.0 app/cli/wick-trace} \
  tools/device/build.sh || true
[ -f _build-device/backend/libwick.so ] || { echo "run-python-cuda: libwick did not build"; exit 1; }
headers=/tmp/wick-py311
if [ ! -f "$headers/usr/include/python3.11/Python.h" ]; then
  mkdir -p "$headers"
  for deb in .device/debs/python3.11-dev_*.deb .device/debs/libpython3.11-dev_*.deb; do
    [ -f "$deb" ] || { echo "run-python-cuda: $deb missing (run tools/device/fetch-debs.sh here first)"; exit 1; }
    dpkg -x "$deb" "$headers"
  done
fi
pkg=_build-device/python-abi3
rm -rf "$pkg" && mkdir -p "$pkg/wick"
cp python/wick/*.py "$pkg/wick/"
gcc -shared -fPIC -O2 -std=gnu17 -fvisibility=hidden -DPy_LIMITED_API=0x030B0000 -D_GNU_SOURCE \
  -I"$headers/usr/include/python3.11" -I"$headers/usr/include" \
  -I_build-device -I. -Ibackend -I_build-device/backend \
  python/wick/_wick.c -L_build-device/backend -lwick -Wl,-rpath,"$PWD/_build-device/backend" \
  -o "$pkg/wick/_wick.abi3.so"
# wick-trace (headless) checks the tests' traces; a wrapper gives it the
# carried GLib, so the python process itself keeps the machine's libraries.
wick_trace=
if [ -x _build-device/app/cli/wick-trace ]; then
  wick_trace=$PWD/_build-device/wick-trace-device
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "$@"\n' "$WICK_RUNTIME_LD" \
    "$PWD/_build-device/app/cli/wick-trace" >"$wick_trace"
  chmod +x "$wick_trace"
else
  echo "run-python-cuda: wick-trace did not build: the tests that check traces skip"
fi
# WICK_DEVICE_BUILD_ONLY=1: the package and wick-trace only (for benchmarks)
[ "${WICK_DEVICE_BUILD_ONLY:-}" = 1 ] && exit 0
python=${WICK_DEVICE_PYTHON:-}
if [ -z "$python" ]; then
  for p in $(which -a python3) /opt/torch/.venv/bin/python3; do
    if "$p" -c "import torch" 2>/dev/null; then python=$p; break; fi
  done
fi
[ -n "$python" ] || { echo "run-python-cuda: no python3 with torch"; exit 1; }
"$python" -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(torch_cuda torch_train torch_weights torch_stage torch_control)
status=0
for t in "${tests[@]}"; do
  start=$(date +%s)
  rc=0
  WICK_TRACE="$wick_trace" PYTHONPATH="$PWD/$pkg:$PWD/tests/python" WICK_SOURCE_DIR="$PWD" PYTHONDONTWRITEBYTECODE=1 \
    timeout 600 "$python" "tests/python/test_$t.py" >"/tmp/py-$t.log" 2>&1 || rc=$?
  case $rc in 0) verdict=OK ;; 77) verdict=SKIP ;; *) verdict="FAIL (exit $rc)"; status=1 ;; esac
  echo "python-$t: $verdict in $(( $(date +%s) - start )) s"
  tail -5 "/tmp/py-$t.log" | sed 's/^/    /'
  if [ -n "${OUT:-}" ]; then cp "/tmp/py-$t.log" "$OUT/"; fi
done
exit $status
