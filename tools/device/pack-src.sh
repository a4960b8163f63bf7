#!/usr/bin/env bash
# HERE: puts a branch's committed tree into .device/src of the checkout the
# device tool sends (the session's own checkout, /work/main), beside
# .device/debs, so that a run with carry [".device"] can build that branch:
#   tools/device/pack-src.sh [BRANCH] [CHECKOUT]
# On the machine: cd .device/src && mkdir -p .device && ln -sfn "$PWD/../debs" .device/debs
set -euo pipefail
branch=${1:-$(git rev-parse --abbrev-ref HEAD)}
checkout=${2:-/work/main}
dest=$checkout/.device/src
rm -rf "$dest" && mkdir -p "$dest"
git archive "$branch" | tar -x -C "$dest"
git rev-parse --short "$branch" >"$dest/.device-rev"
du -sh "$dest" "$checkout/.device"
