#!/bin/sh
# callgrind-hot-path.sh BUILD_DIR [SPANS] — instructions a span (begin + end,
# the benchmark's loop included) of every bench-ring-hot-path contender, from
# callgrind's inclusive count of the function that runs it (warm-up included):
# floor, the session calls (static, libwick.so) and the thread handle's
# inline calls (static, libwick.so).
# One round of SPANS (200000) spans, no drain. Under valgrind libwick.so is
# dlopen()ed (valgrind's LD_PRELOAD is not libwick's); instruction counts are
# the same linked at start.
set -eu
build=${1:?build dir}
spans=${2:-200000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
WICK_LIBWICK=$build/backend/libwick.so.1.0.0 valgrind --tool=callgrind \
  --callgrind-out-file="$out/cg" "$build/tests/bench/core/bench-ring-hot-path" 1 "$spans" 0 \
  >"$out/log" 2>&1
# each contender's function ran spans/4 + 1 (warm-up) + spans; run_ring twice
# (the ring with and without the follow reader)
callgrind_annotate --inclusive=yes "$out/cg" | awk -v spans="$spans" '
  /bench-ring-hot-path.c:run_[a-z_0-9]+ \[/ {
    gsub(",", "", $1); name = $0; sub(/ \[.*/, "", name); sub(/.*:/, "", name)
    n = int(spans / 4) + 1 + spans
    if (name == "run_ring") n *= 2
    count[name] = $1 / n
  }
  END {
    n = split("run_floor run_ring run_thread run_shared run_shared_thread", order, " ")
    label["run_floor"] = "floor"
    label["run_ring"] = "static, session calls"
    label["run_thread"] = "static, thread handle (inline)"
    label["run_shared"] = "libwick.so, session calls"
    label["run_shared_thread"] = "libwick.so, thread handle (inline)"
    for (i = 1; i <= n; i++)
      if (order[i] in count)
        printf "CALLGRIND %-36s %7.1f instructions a span (%+.1f over the floor)\n",
          label[order[i]], count[order[i]], count[order[i]] - count["run_floor"]
  }'
