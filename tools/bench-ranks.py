#!/usr/bin/python3
"""The ranks reduction against loading each rank alone, in the same run:

  tools/bench-ranks.py BUILD DIR [--repeats 3] [--cores 0,1]

DIR holds rank-N.json files (tools/make-rank-traces.py). Each repeat runs,
pinned to --cores with taskset:
  baseline:  `bench-model-chrome-load --load FILE` for every rank, one after
             another (the model's whole import of that rank alone, what the
             app does to open it);
  reduction: `wick-trace ranks --json --threads N FILE...` (N = the cores).
and prints wall and CPU seconds and peak RSS (each child's, from wait4).
With --baseline-sample K the baseline loads only K ranks spread evenly over
the job (every n/K-th) and scales their sum by n/K: for jobs whose one-by-one
import would not fit the time there is (64 ranks of 100 MB); the output says
so on every line.
The summary gives medians and min-max over the repeats, the reduction's time
over the baseline's (same repeat) and its peak RSS over one rank's load (the
median rank's peak).
"""
import argparse
import glob
import os
import re
import statistics
import subprocess
import time


def run(cmd):
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{cmd[0]} failed: {status}")
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024


def fmt(values, unit=""):
    return f"{statistics.median(values):.3f}{unit} ({min(values):.3f}-{max(values):.3f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("dir")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cores", default="0,1")
    ap.add_argument("--baseline-sample", type=int, default=0,
                    help="load K evenly spread ranks and scale by n/K (0: every rank)")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, "rank-*.json*")),
                   key=lambda f: int(re.search(r"rank-(\d+)", f).group(1)))
    n_cores = len(a.cores.split(","))
    load = os.path.join(a.build, "tests/bench/model/bench-model-chrome-load")
    ranks = os.path.join(a.build, "app/cli/wick-trace")
    pin = ["taskset", "-c", a.cores]
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} ranks, {size / 1e6:.1f} MB, cores {a.cores}, "
          f"load average {os.getloadavg()[0]:.1f}")
    sample = files
    if 0 < a.baseline_sample < len(files):
        step = len(files) / a.baseline_sample
        sample = [files[int(i * step)] for i in range(a.baseline_sample)]
        print(f"baseline: {len(sample)} of {len(files)} ranks loaded "
              f"({', '.join(os.path.basename(f) for f in sample)}), their sum scaled by "
              f"{len(files) / len(sample):.1f}")
    scale = len(files) / len(sample)
    rows = []
    for r in range(a.repeats):
        bw = bc = 0.0
        rss = []
        for f in sample:
            w, c, m = run(pin + [load, "--load", f])
            bw += w * scale
            bc += c * scale
            rss.append(m)
        rw, rc, rm = run(pin + [ranks, "ranks", "--json", "--threads", str(n_cores)] + files)
        one = statistics.median(rss)
        rows.append((bw, bc, one, rw, rc, rm))
        print(f"repeat {r + 1}: baseline {bw:.3f} s wall, {bc:.3f} s CPU, one rank's peak RSS "
              f"{one / 1e6:.1f} MB (max {max(rss) / 1e6:.1f}); reduction {rw:.3f} s wall, "
              f"{rc:.3f} s CPU, peak RSS {rm / 1e6:.1f} MB; time ratio {rw / bw:.3f}, "
              f"CPU ratio {rc / bc:.3f}, RSS ratio {rm / one:.2f}; "
              f"load average {os.getloadavg()[0]:.1f}")
    col = list(zip(*rows))
    print("summary (median (min-max) of", a.repeats, "repeats):")
    print("  baseline wall", fmt(col[0], " s"), " CPU", fmt(col[1], " s"))
    print("  reduction wall", fmt(col[3], " s"), " CPU", fmt(col[4], " s"))
    print("  time ratio", fmt([x[3] / x[0] for x in rows]),
          " CPU ratio", fmt([x[4] / x[1] for x in rows]))
    print("  one rank's peak RSS", fmt([x / 1e6 for x in col[2]], " MB"),
          " reduction peak RSS", fmt([x / 1e6 for x in col[5]], " MB"),
          " ratio", fmt([x[5] / x[2] for x in rows]))


if __name__ == "__main__":
    main()
