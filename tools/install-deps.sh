#!/usr/bin/env bash
# Installs what Wick needs on Debian 12 that is not there yet. Run as root (or via sudo).
set -euo pipefail

packages=(
  # build
  gcc g++ clang meson ninja-build pkg-config gettext
  libgtk-4-dev libadwaita-1-dev libjson-glib-dev libssl-dev
  # compressed traces (gzip, zstd); the JSON benchmark's simdjson baseline
  zlib1g-dev libzstd-dev libsimdjson-dev
  # tests, GUI tests under Xvfb, validation of data files
  abigail-tools  # abidiff for tests/backend/abi (docs/api.md)
  xvfb xauth dbus-daemon dbus-x11 at-spi2-core desktop-file-utils appstream appstream-util
  adwaita-icon-theme fonts-dejavu-core imagemagick valgrind flatpak-builder
  # wick-trace --remote's tests start a real sshd on 127.0.0.1 (tests/integration/remote)
  openssh-server openssh-client
  # benchmark peers
  liblttng-ust-dev libsysprof-4-dev
  # the wick Python package (python/) and its suite: Debian's torch (CPU)
  python3-dev python3-torch python3-numpy
  # wick.trace.ranks on a cluster (its LocalCluster test)
  python3-distributed
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
