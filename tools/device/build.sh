#!/usr/bin/env bash
# On the GPU machine: builds libwick, its tests and benchmarks with CUDA, and
# the headless wick-trace (-Dapp=disabled: no GTK there; the model needs GLib,
# json-glib and zstd, carried by fetch-debs.sh) into _build-device. Keeps going past targets
# of other areas that fail, so one area's breakage does not hide the rest.
# Usage: tools/device/build.sh [extra meson options]
# WICK_DEVICE_TARGETS="tests/cuda/stages/test-stage-capture ..." builds only those.
source "$(dirname "$0")/env.sh"
echo "== device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo none)"
echo "== meson $($WICK_MESON --version), nvcc $(nvcc --version | tail -1), cuda root $WICK_NVCC_ROOT"
if [ ! -e _build-device/build.ninja ]; then
  $WICK_MESON setup _build-device -Dapp=disabled -Dcuda=enabled -Dnvcc_root="$WICK_NVCC_ROOT" "$@"
fi
ninja -C _build-device -k 0 -j "$(nproc)" ${WICK_DEVICE_TARGETS:-} || echo "== build: some targets failed (see above)"
if [ -x _build-device/app/cli/wick-trace ]; then
  echo "== wick-trace: $(LD_LIBRARY_PATH=$WICK_RUNTIME_LD _build-device/app/cli/wick-trace --version)"
else
  echo "== wick-trace: NOT built (json-glib or zstd missing? run tools/device/fetch-debs.sh here first)"
fi
