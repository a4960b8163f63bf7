#!/usr/bin/python3
"""`wick-trace gpu --json` on tests/data/gpu/launch-bound.json, a hand-made
trace whose idle gaps are known (docs/gpu.md, "Idle gaps"): six kernels on
cuda:0 stream 7, each launched by a cudaLaunchKernel inside aten::mm.

  k1 [6, 16) µs      launch [1, 5)
  k2 [47, 50)        launch [40, 45)  starts after k1 ended: host wait 31 µs
  k3 [52, 54)        launch [48, 53)  still running at 50, k3 starts before
                                      53 + 5: host wait 2 µs
  k4 [70, 75)        launch [55, 57)  starts after k3 ended: host wait 16 µs
  k5 [78, 80)        launch [60, 62)  returned before k4 ended, gap 3 µs:
                                      kernel wait
  k6 [100, 101)      launch [61, 63)  gap 20 µs: other
ProfilerStep#1 is [0, 30): 14 µs of the first stretch fall inside it.

Usage: gpu-launch-bound.py WICK_TRACE FILE
"""
import json
import subprocess
import sys


def main(wick_trace, path):
    run = subprocess.run([wick_trace, "gpu", "--json", path], capture_output=True, timeout=60,
                         check=True)
    d = json.loads(run.stdout)
    want_idle = [{"device": "cuda:0", "stream": "7", "host_wait_ns": 49000,
                  "kernel_wait_ns": 3000, "other_ns": 20000, "stretches": 3}]
    checks = [
        ("idle", d["idle"], want_idle),
        ("stretches", d["launch_bound"]["stretches"], 3),
        ("total_ns", d["launch_bound"]["total_ns"], 49000),
        ("gpu_span_ns", d["launch_bound"]["gpu_span_ns"], 95000),
        ("longest", [(x["start_ns"], x["dur_ns"], x["operator"])
                     for x in d["launch_bound"]["longest"]],
         [(16000, 31000, "aten::mm"), (54000, 16000, "aten::mm"), (50000, 2000, "aten::mm")]),
        ("step launch_bound_ns", d["steps"][0]["launch_bound_ns"], 14000),
        ("short_kernels", d["launches"]["short_kernels"], 5),
        ("short_kernel_ns", d["launches"]["short_kernel_ns"], 13000),
    ]
    print("1..%d" % len(checks))
    failed = 0
    for i, (name, got, want) in enumerate(checks, 1):
        if got == want:
            print("ok %d %s" % (i, name))
        else:
            failed += 1
            print("not ok %d %s: %r, expected %r" % (i, name, got, want))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
