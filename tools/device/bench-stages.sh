#!/usr/bin/env bash
# On the GPU machine: the stage replay benchmark (bench-stage-replay, a bare
# cudaGraphLaunch baseline inside it) and the torch.cuda.CUDAGraph peer
# (bench-torch-graph.py), one after the other in the same call, then a table;
# then the replay contenders (stage-test-kernels.cu: instantiate flags,
# upload, launch stream, schedule flags, timing, a created context, buffer
# placement; and the same in a process with CUDA_MODULE_LOADING=EAGER), one
# CONTENDER line each with its ratio to the bare graph of its rounds and to
# torch's figure of this call at 128, 512 and 2048 kernels.
# Assumes tools/device/build.sh ran (run-suite.sh does).
source "$(dirname "$0")/env.sh"
log=${OUT:-/tmp}/bench-stages.txt
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true
  LD_LIBRARY_PATH="$WICK_RUNTIME_LD" _build-device/tests/bench/stages/bench-stage-replay
  python3 tests/bench/stages/bench-torch-graph.py
  # module loading is process-wide: the contenders again in a process with it eager
  CUDA_MODULE_LOADING=EAGER WICK_BENCH_CONTENDERS=only LD_LIBRARY_PATH="$WICK_RUNTIME_LD" \
    _build-device/tests/bench/stages/bench-stage-replay | sed 's/^RESULT contender=/RESULT contender=eager-loading:/'
} 2>&1 | tee "$log"
python3 - "$log" <<'PY'
import re, sys
rows = {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT ") and "contender=" not in line:
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
python3 - "$log" <<'PY'
import re, sys
torch, rows, order = {}, {}, []
for line in open(sys.argv[1]):
    if not line.startswith("RESULT "):
        continue
    fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    if "torch_us_per_kernel" in fields and "contender" not in fields:
        torch[int(fields["kernels"])] = float(fields["torch_us_per_kernel"])
    if "contender" in fields:
        name = fields["contender"]
        if name not in rows:
            rows[name] = {}
            order.append(name)
        rows[name][int(fields["kernels"])] = fields
print()
print("CONTENDER table: per size, µs a kernel, b = x the bare contender of the same rounds (median, min-max), t = x torch's figure of this call")
print("CONTENDER torch: " + "  ".join(f"{k}: {torch.get(k, float('nan')):.4f}" for k in (128, 512, 2048)))
for name in order:
    cells = []
    for k in (128, 512, 2048):
        f = rows[name].get(k)
        if f is None:
            cells.append(f"{k}: -")
            continue
        us = float(f["us_per_kernel"])
        t = torch.get(k)
        vs = f"{us / t:.3f}" if t else "nan"
        cells.append(f"{k}: {us:.4f} b{float(f['over_bare']):.3f} ({float(f['over_bare_min']):.3f}-{float(f['over_bare_max']):.3f}) t{vs}")
    # of the eager-loading process, the lines that tell whether it moves the baseline
    if name.startswith("eager-loading:") and name.split(":", 1)[1] not in ("bare", "wick", "torch-like"):
        continue
    print(f"CONTENDER {name:<26} " + " | ".join(cells))
PY
