#!/usr/bin/env bash
# Compares libwick's ABI with the committed baseline (tools/abi/libwick-1.abi).
#
#   check-abi.sh LIBWICK.so HEADER_DIR BASELINE
#
# A removed or changed public function or type fails (abidiff --no-added-syms
# exits non-zero); new public functions pass and are listed, since they are
# compatible additions: the baseline is refreshed with
# tools/abi/update-baseline.sh when a release takes them in.
# Exits 77 (skip) without abidiff (Debian: abigail-tools) or without debug
# information in the library (a build without -g cannot be compared).
set -uo pipefail
lib=$1 headers=$2 baseline=$3

if ! command -v abidiff >/dev/null 2>&1; then
  echo "check-abi: abidiff not found (install abigail-tools); skipped"
  exit 77
fi
if ! readelf -S "$lib" 2>/dev/null | grep -q '\.debug_info'; then
  echo "check-abi: $lib has no debug information (buildtype without -g); skipped"
  exit 77
fi

# Both sides as abidw writes them with the same options (a library compared
# straight against XML with --headers-dir2 filters real changes out).
current=$(mktemp --suffix=.abi)
trap 'rm -f "$current"' EXIT
abidw --headers-dir "$headers" --drop-private-types --no-show-locs --no-corpus-path \
      --no-comp-dir-path "$lib" > "$current" || { echo "check-abi: abidw failed on $lib"; exit 1; }

abidiff --no-added-syms "$baseline" "$current"
rc=$?
if [ $rc -ne 0 ]; then
  echo
  echo "check-abi: FAIL (abidiff exit $rc): libwick's ABI changed incompatibly against $baseline."
  echo "A removed or changed public function or type breaks programs built against libwick 1.0."
  echo "If the change is intended (before 1.0 ships), refresh the baseline:"
  echo "  tools/abi/update-baseline.sh <builddir>"
  exit 1
fi

added=$(abidiff "$baseline" "$current" | grep -E "^  \[A\] " || true)
if [ -n "$added" ]; then
  echo "check-abi: compatible; new public functions not in the baseline yet:"
  echo "$added"
else
  echo "check-abi: libwick's ABI equals the baseline"
fi
exit 0
