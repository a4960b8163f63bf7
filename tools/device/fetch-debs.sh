#!/usr/bin/env bash
# Run HERE (Debian 12), not on the GPU machine: downloads the Debian packages
# that the GPU machine lacks to build and test libwick (GLib for the test
# framework, pkgconf, libcrypto headers, json-glib and zstd for the headless
# wick-trace, meson as a fallback) into .device/debs
# (ignored by git). Pass `carry: [".device"]` to the device tool; the scripts
# beside this one unpack them there with dpkg -x into /tmp/wick-sysroot.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .device/debs
cd .device/debs
packages=(
  libglib2.0-dev libglib2.0-0 libglib2.0-dev-bin
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libffi-dev zlib1g-dev libmount-dev libblkid-dev libselinux1-dev libsepol-dev
  libssl-dev libssl3
  pkgconf pkgconf-bin libpkgconf3
  meson
  # wick-trace headless (-Dapp=disabled): the model's json-glib and zstd
  libjson-glib-dev libjson-glib-1.0-0 libzstd-dev libzstd1
  python3.11-dev libpython3.11-dev
  # bench-ring-hot-path's peers (the hot-path figures of issue 22 item 5)
  liblttng-ust-dev liblttng-ust1 liblttng-ust-common1 liblttng-ust-ctl5 liblttng-ust-python-agent1
  liburcu-dev liburcu8 libnuma1 uuid-dev libuuid1 libsysprof-4-dev
)
apt-get download "${packages[@]}"
ls -l
