#!/usr/bin/env python3
"""The External id fallback to the operator, on real torch 2.11 traces.

A trace cut or filtered without its runtime events (cuda_runtime,
cuda_driver, their ac2g flows; HTA's filters can drop them) still gives
each kernel, copy and fill Kineto's "External id": the cpu_op that launched
it carries the same one. Wick then links the interval to that operator when
exactly one operator carries the id (wick_tracks_slice_set_operator_external_id).
Checked on tests/data/gpu/torch-multistream.json.gz and torch-compile.json.gz
with their runtime events removed: `gpu --json`'s launches (flows, unmatched,
distinct launchers) as json.load counts them from the file's own ids, and
the operators' GPU time as the reference computes it with each interval
launched by its operator; on the unfiltered files nothing changes (the
runtime calls still launch everything: model-gpu-reference).

usage: gpu-external.py WICK_TRACE DATA_DIR   (TAP)
"""
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile

WORK = ("kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset")
DROP = ("cuda_runtime", "cuda_driver", "ac2g", "hip_runtime", "hip_driver", "Runtime")


def main(argv):
    wick_trace, data = argv[1], argv[2]
    names = ["torch-multistream.json.gz", "torch-compile.json.gz"]
    print("1..%d" % (2 * len(names)))
    failed = 0
    n = 0
    for name in names:
        with gzip.open(os.path.join(data, "gpu", name), "rt") as f:
            trace = json.load(f)
        events = [e for e in trace["traceEvents"] if e.get("cat") not in DROP]
        trace["traceEvents"] = events
        ops = collections.defaultdict(list)
        for e in events:
            if e.get("ph") == "X" and e.get("cat") == "cpu_op" and "External id" in e.get("args", {}):
                ops[e["args"]["External id"]].append(e)
        work = [e for e in events if e.get("ph") == "X" and e.get("cat") in WORK]
        linked = [e for e in work if len(ops.get(e.get("args", {}).get("External id"), [])) == 1]
        want = {"flows": len(linked), "unmatched": len(work) - len(linked),
                "to_kernel": len({e["args"]["External id"] for e in linked})}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "no-runtime.json")
            with open(path, "w") as f:
                json.dump(trace, f)
            run = subprocess.run([wick_trace, "gpu", "--json", path], capture_output=True, timeout=300)
        got = json.loads(run.stdout) if run.returncode in (0, 1) else None
        n += 1
        have = {k: got["launches"][k] for k in want} if got else run.stderr.decode(errors="replace")
        ok = got is not None and have == want and want["flows"] > 0
        print("%s %d %s: %r launched by their operators (json.load: %r)"
              % ("ok" if ok else "not ok", n, name, have, want))
        failed += not ok
        # each operator's GPU time: the work of its External id, and of the
        # operators nested in it (by time on its thread), as gpu_ns is defined
        gpu = collections.Counter()
        by_thread = collections.defaultdict(list)
        for e in events:
            if e.get("ph") == "X" and e.get("cat") == "cpu_op":
                by_thread[(e.get("pid"), e.get("tid"))].append(e)
        for e in linked:
            op = ops[e["args"]["External id"]][0]
            dur = int(round(float(e.get("dur", 0)) * 1000))
            t0, key = float(op["ts"]), (op.get("pid"), op.get("tid"))
            for o in by_thread[key]:
                end = float(o["ts"]) + float(o.get("dur", 0))
                if o is op or (float(o["ts"]) <= t0 and end >= t0 + float(op.get("dur", 0))):
                    gpu[o["name"]] += dur
        n += 1
        if got is None:
            print("not ok %d %s: operators (no output)" % (n, name))
            failed += 1
            continue
        mine = {o["name"]: o["gpu_ns"] for o in got["operators"] if o["gpu_ns"]}
        theirs = {k: v for k, v in gpu.items() if v}
        # durations in the file are µs with 3 decimals: rounding may differ by
        # 1 ns an interval, so compare within the intervals' count
        close = set(mine) == set(theirs) and all(abs(mine[k] - theirs[k]) <= len(linked) for k in mine)
        print("%s %d %s: %d operators with GPU time as the reference" % ("ok" if close else "not ok", n, name,
                                                                        len(mine)))
        if not close:
            failed += 1
            for k in sorted(set(mine) | set(theirs))[:10]:
                print("# %s: wick %s, reference %s" % (k, mine.get(k), theirs.get(k)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
