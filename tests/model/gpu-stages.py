#!/usr/bin/env python3
"""wick-trace gpu --json: CUDA graphs and Wick stages on a real torch 2.x trace.

tests/data/gpu/torch-cudagraph.json.gz (torch 2.11 on an H200) replays one
torch.cuda.CUDAGraph four times, each inside record_function("replay_N").
wick.torch's Stage replays its graph inside record_function("wick stage: NAME")
(python/wick/_torch_stage.py), so the same file with those host slices renamed
"wick stage: decoder" is what a profiled stage replay writes. Checked: the
graph (23 nodes, 4 replays, 92 kernels) and its stage with every kernel of
every replay attributed to it, against gpu-reference.py's json.load
reference; and that the unrenamed file has the graph but no stage.

usage: gpu-stages.py WICK_TRACE DATA_DIR   (TAP)
"""
import gzip
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
    source = os.path.join(data, "gpu", "torch-cudagraph.json.gz")
    with gzip.open(source, "rt") as f:
        trace = json.load(f)
    renamed = 0
    for e in trace["traceEvents"]:
        if e.get("cat") == "user_annotation" and str(e.get("name", "")).startswith("replay_"):
            e["name"] = "wick stage: decoder"
            renamed += 1
    print("1..4")
    failed = 0

    def check(n, ok, what, detail=""):
        nonlocal failed
        print("%s %d %s" % ("ok" if ok else "not ok", n, what))
        if not ok:
            failed += 1
            for line in str(detail).splitlines()[:20]:
                print("# " + line)

    plain = gpu_json(wick_trace, source)
    check(1, len(plain["graphs"]) == 1 and plain["graphs"][0]["stage"] is None
          and plain["stages"] == [],
          "the replays outside a stage: one graph, no stage", json.dumps(plain["graphs"]))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stage.json")
        with open(path, "w") as f:
            json.dump(trace, f)
        got = gpu_json(wick_trace, path)
        want = ref.reference(path)
        g = got["graphs"]
        check(2, renamed == 4 and len(g) == 1 and g[0]["nodes"] == 23 and g[0]["replays"] == 4
              and g[0]["kernels"] == 92 and g[0]["stage"] == "decoder",
              "the graph: 23 nodes, 4 replays, 92 kernels, stage decoder", json.dumps(g))
        st = got["stages"]
        check(3, len(st) == 1 and st[0]["name"] == "decoder" and st[0]["graphs"] == 1
              and st[0]["replays"] == 4 and st[0]["kernels"] == 92
              and st[0]["gpu_ns"] == g[0]["gpu_ns"]
              and sum(k["count"] for k in st[0]["by_kernel"]) == 92
              and all(k["count"] % 4 == 0 for k in st[0]["by_kernel"]),
              "the stage: every kernel of its 4 replays", json.dumps(st)[:600])
        diff = ref.differences(got, want)
        check(4, not diff, "equal to the json.load reference", "\n".join(diff))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
