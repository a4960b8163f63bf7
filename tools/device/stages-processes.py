#!/usr/bin/env python3
"""The stagesproc step's table (tools/device/session.sh): bench-stage-replay's
bare, wick and torch-like contenders in processes with CUDA_MODULE_LOADING
LAZY and EAGER alternated, and bench-torch-graph.py once each way, from one
log whose "PROCESS loading=MODE round=R" lines open each process's output.

Prints a line a (loading, contender, size): the per-process medians (µs a
kernel), their median and min-max, the ratio to bare of the same processes
and to torch's figure of the same loading; then the eager/lazy ratio of each
contender's median. Reads at most 4 MiB; a malformed line is skipped.
Usage: stages-processes.py LOG
"""
import statistics
import sys

SIZES = (128, 512, 2048)
NAMES = ("bare", "wick", "torch-like")


def fields_of(line):
    out = {}
    for item in line.split()[1:]:
        key, sep, value = item.partition("=")
        if sep:
            out[key] = value
    return out


def main(path):
    with open(path, "rb") as f:
        text = f.read(4 << 20).decode("utf-8", "replace")
    loading, kind = None, None
    runs = {}   # (loading, name, size) -> [µs a kernel, one a process]
    torch = {}  # (loading, size) -> µs a kernel
    failed = []
    for line in text.splitlines():
        if line.startswith("PROCESS loading="):
            f = fields_of(line)
            loading = f.get("loading")
            kind = "torch" if f.get("round") == "torch" else "c"
            continue
        if line.startswith("PROCESS rc=") and line.strip() != "PROCESS rc=0":
            failed.append(f"{loading} {kind}: {line.strip()}")
            continue
        if not line.startswith("RESULT ") or loading is None:
            continue
        f = fields_of(line)
        try:
            size = int(f["kernels"])
            if kind == "torch" and "torch_us_per_kernel" in f:
                torch[(loading, size)] = float(f["torch_us_per_kernel"])
            elif kind == "c" and f.get("contender") in NAMES:
                runs.setdefault((loading, f["contender"], size), []).append(float(f["us_per_kernel"]))
        except (KeyError, ValueError):
            continue
    print("STAGESPROC µs a kernel: median of the processes' medians (min-max over processes, n), "
          "b = x bare of the same loading, t = x torch of the same loading")
    for mode in ("LAZY", "EAGER"):
        print(f"STAGESPROC {mode:<5} torch  " + "  ".join(
            f"{k}: {torch[(mode, k)]:.4f}" if (mode, k) in torch else f"{k}: -" for k in SIZES))
        for name in NAMES:
            cells = []
            for k in SIZES:
                v = runs.get((mode, name, k))
                bare = runs.get((mode, "bare", k))
                if not v:
                    cells.append(f"{k}: -")
                    continue
                med = statistics.median(v)
                cell = f"{k}: {med:.4f} ({min(v):.4f}-{max(v):.4f}, {len(v)})"
                if bare:
                    cell += f" b{med / statistics.median(bare):.3f}"
                if (mode, k) in torch:
                    cell += f" t{med / torch[(mode, k)]:.3f}"
                cells.append(cell)
            print(f"STAGESPROC {mode:<5} {name:<10} " + " | ".join(cells))
    for name in NAMES:
        cells = []
        for k in SIZES:
            lazy, eager = runs.get(("LAZY", name, k)), runs.get(("EAGER", name, k))
            if lazy and eager:
                # eager below lazy in every pairing of processes, or not
                apart = max(eager) < min(lazy) or min(eager) > max(lazy)
                cells.append(f"{k}: {statistics.median(eager) / statistics.median(lazy):.3f}"
                             f"{' apart' if apart else ' overlap'}")
            else:
                cells.append(f"{k}: -")
        print(f"STAGESPROC eager/lazy {name:<10} " + " | ".join(cells))
    cells = [f"{k}: {torch[('EAGER', k)] / torch[('LAZY', k)]:.3f}"
             if ("EAGER", k) in torch and ("LAZY", k) in torch else f"{k}: -" for k in SIZES]
    print("STAGESPROC eager/lazy torch      " + " | ".join(cells))
    for line in failed:
        print(f"STAGESPROC failed: {line}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: stages-processes.py LOG")
    main(sys.argv[1])
