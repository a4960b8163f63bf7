#!/usr/bin/env python3
"""wick-trace gpu --json on a job merged by `wick-trace ranks --merged`: each
rank's devices are its own (the Overview's "GPU time by device" shows rank 0
cuda:0 and rank 1 cuda:0 apart), on the real 2-rank H200 gloo run of
tests/data/ranks; every figure equal to gpu-reference.py's json.load
reference on the merged file, and each rank's device equal to the device of
that rank's own file.

usage: gpu-ranks.py WICK_TRACE DATA_DIR   (TAP)
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gpu_reference", os.path.join(HERE, "gpu-reference.py"))
ref = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ref)


def gpu_json(wick_trace, path):
    run = subprocess.run([wick_trace, "gpu", "--json", path], capture_output=True, timeout=300)
    if run.returncode not in (0, 1):
        raise RuntimeError("wick-trace gpu exited %d: %s" % (run.returncode, run.stderr.decode()))
    return json.loads(run.stdout)


def main(argv):
    wick_trace, data = argv[1], argv[2]
    ranks = [os.path.join(data, "ranks", "h200-gloo-rank%d.json.gz" % r) for r in (0, 1)]
    print("1..3")
    failed = 0

    def check(n, ok, what, detail=""):
        nonlocal failed
        print("%s %d %s" % ("ok" if ok else "not ok", n, what))
        if not ok:
            failed += 1
            for line in str(detail).splitlines()[:20]:
                print("# " + line)

    with tempfile.TemporaryDirectory() as tmp:
        merged = os.path.join(tmp, "job.json")
        run = subprocess.run([wick_trace, "ranks", "--merged", merged] + ranks, capture_output=True,
                             timeout=300)
        if run.returncode != 0:
            print("Bail out! wick-trace ranks --merged exited %d: %s"
                  % (run.returncode, run.stderr.decode(errors="replace")))
            return 1
        got = gpu_json(wick_trace, merged)
        names = [d["device"] for d in got["devices"]]
        check(1, names == ["rank 0 cuda:0", "rank 1 cuda:0"], "one device per rank", names)
        alone = [gpu_json(wick_trace, r)["devices"] for r in ranks]
        same = all(len(alone[r]) == 1 and {k: v for k, v in got["devices"][r].items() if k != "device"}
                   == {k: v for k, v in alone[r][0].items() if k != "device"} for r in (0, 1)
                   if r < len(got["devices"]))
        check(2, same and len(got["devices"]) == 2, "each rank's device as in its own file",
              json.dumps(got["devices"]) + "\n" + json.dumps(alone))
        diff = ref.differences(got, ref.reference(merged))
        check(3, not diff, "equal to the json.load reference", "\n".join(diff))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
