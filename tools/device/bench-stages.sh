#!/usr/bin/env bash
# On the GPU machine: the stage replay benchmark (bench-stage-replay, a bare
# cudaGraphLaunch baseline inside it) and the torch.cuda.CUDAGraph peer
# (bench-torch-graph.py), one after the other in the same call, then a table.
# Assumes tools/device/build.sh ran (run-suite.sh does).
source "$(dirname "$0")/env.sh"
log=${OUT:-/tmp}/bench-stages.txt
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
  LD_LIBRARY_PATH="$WICK_RUNTIME_LD" _build-device/tests/bench/stages/bench-stage-replay
  python3 tests/bench/stages/bench-torch-graph.py
} 2>&1 | tee "$log"
python3 - "$log" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        fields = dict(kv.split("=") for kv in line.split()[1:])
        key = (int(fields.pop("kernels")), int(fields.pop("threads", "0")), fields.pop("chain", ""))
        rows.setdefault(key, {}).update(fields)
print()
torch = {k[0]: r["torch_us_per_kernel"] for k, r in rows.items() if "torch_us_per_kernel" in r}
print("| kernels | threads | chain | eager µs/kernel | bare graph µs/kernel | wick µs/kernel | wick/bare (min–max) | torch µs/kernel | wick/torch | capture+gating ms |")
print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for k in sorted(rows):
    r = rows[k]
    if "wick_us_per_kernel" not in r:
        continue
    wick = float(r["wick_us_per_kernel"])
    peer = float(torch.get(k[0], "nan"))
    print(f"| {k[0]} | {k[1]} | {k[2]} | {r.get('eager_us_per_kernel')} | {r.get('bare_us_per_kernel')} | {wick:.4f} | "
          f"{r.get('wick_over_bare')} ({r.get('wick_over_bare_min')}–{r.get('wick_over_bare_max')}) | "
          f"{peer:.4f} | {wick / peer:.3f} | {r.get('capture_gating_ms')} |")
PY
