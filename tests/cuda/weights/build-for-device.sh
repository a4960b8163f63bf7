#!/usr/bin/env bash
# Builds the weight store's CUDA suite and benchmark here (the GPU machine has
# nvcc but no meson or GLib) and stages them, with libwick and the GLib they
# link, in .weights-device/ (ignored by git) for the device run to carry:
#
#   tests/cuda/weights/build-for-device.sh
#   run(carry: [".weights-device"], command: "bash .weights-device/run.sh")
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=_build-weights
[ -d $build ] || meson setup $build -Dapp=disabled -Dcuda=enabled >/dev/null
ninja -C $build -j2 backend/libwick.so.1.0.0 tests/cuda/weights/test-weight-store-cuda \
  tests/bench/weights/bench-weight-store >/dev/null
out=.weights-device
grep -qx '/.weights-device/' .git/info/exclude 2>/dev/null || echo '/.weights-device/' >> .git/info/exclude
rm -rf $out && mkdir -p $out
cp -L $build/backend/libwick.so.1 $build/tests/cuda/weights/test-weight-store-cuda \
  $build/tests/bench/weights/bench-weight-store tests/bench/weights/bench-safetensors-load.py $out/
for lib in libglib-2.0.so.0 libpcre2-8.so.0; do
  cp -L "$(ldconfig -p | awk -v l=$lib '$1 == l && /x86-64/ {print $NF; exit}')" $out/
done
cat > $out/run.sh <<'RUN'
#!/usr/bin/env bash
# Runs on the GPU machine: the CUDA suite, then the benchmark.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "== missing libraries:"; ldd ./test-weight-store-cuda ./bench-weight-store | grep 'not found' || echo none
echo "== tests/cuda/weights (suite cuda)"
./test-weight-store-cuda; echo "exit status $?"
echo "== tests/bench/weights"
PYTHONUNBUFFERED=1 ./bench-weight-store --script ./bench-safetensors-load.py --dir /tmp "$@"
echo "exit status $?"
RUN
chmod +x $out/run.sh
du -sh $out
