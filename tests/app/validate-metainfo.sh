#!/bin/sh
# validate-metainfo.sh APPSTREAMCLI FILE — appstreamcli validate --no-net,
# failing on warnings as well as errors (pedantic hints are not counted).
out=$("$1" validate --no-net --explain "$2" 2>&1)
status=$?
echo "$out"
[ $status -eq 0 ] || exit 1
if echo "$out" | grep -qE '^W:|warnings: [1-9]'; then
  echo "validate-metainfo: warnings count as failures" >&2
  exit 1
fi
exit 0
