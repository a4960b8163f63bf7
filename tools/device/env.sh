# Sourced on the GPU machine by the scripts beside it: unpacks the carried
# Debian packages (tools/device/fetch-debs.sh) into /tmp/wick-sysroot — never
# into / — and exports what meson needs to find them:
#   WICK_MESON       the meson command (the machine's, else the carried one)
#   WICK_RUNTIME_LD  the sysroot library dir, for LD_LIBRARY_PATH of tests only
#   PKG_CONFIG*, LDFLAGS (rpath-link so ld resolves the sysroot's DT_NEEDED)
#   WICK_NVCC_ROOT   the CUDA toolkit root
set -euo pipefail
WICK_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SYSROOT=/tmp/wick-sysroot
if [ ! -e "$SYSROOT/.done" ]; then
  mkdir -p "$SYSROOT"
  for deb in "$WICK_ROOT"/.device/debs/*.deb; do
    dpkg -x "$deb" "$SYSROOT"
  done
  touch "$SYSROOT/.done"
fi
multiarch=x86_64-linux-gnu
libdir="$SYSROOT/usr/lib/$multiarch"
export WICK_RUNTIME_LD="$libdir"
export PKG_CONFIG="$SYSROOT/usr/bin/pkgconf"
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig:$SYSROOT/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$SYSROOT"
# pkgconf itself needs its library from the sysroot
mkdir -p "$SYSROOT/bin"
cat >"$SYSROOT/bin/pkg-config" <<WRAP
#!/bin/sh
LD_LIBRARY_PATH="$libdir" exec "$SYSROOT/usr/bin/pkgconf" "\$@"
WRAP
chmod +x "$SYSROOT/bin/pkg-config"
export PKG_CONFIG="$SYSROOT/bin/pkg-config"
export PATH="$SYSROOT/bin:$PATH"
export LDFLAGS="-Wl,-rpath-link=$libdir ${LDFLAGS:-}"
if command -v meson >/dev/null 2>&1; then
  WICK_MESON="meson"
elif python3 -c "import mesonbuild" 2>/dev/null; then
  WICK_MESON="python3 -m mesonbuild.mesonmain"
else
  WICK_MESON="env PYTHONPATH=$SYSROOT/usr/lib/python3/dist-packages python3 $SYSROOT/usr/bin/meson"
fi
export WICK_MESON
nvcc_path=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
export PATH="$(dirname "$nvcc_path"):$PATH"
export WICK_NVCC_ROOT=$(dirname "$(dirname "$(readlink -f "$nvcc_path")")")
cd "$WICK_ROOT"
