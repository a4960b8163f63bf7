"""wick.trace.open: a generated rank trace (tools/make-rank-traces.py) and the
a real gloo rank trace (an H200 run) read into NumPy arrays, checked against an
independent json.load of the same files: every GPU interval with its start
and duration, every NCCL kernel's (group, Seq, bytes) as a collective, the
ProfilerStep windows among the slices, the gloo collectives as host spans;
the gpu and ranks figures as plain data; errors raise wick.trace.Error."""
import gzip
import json
import os
import subprocess
import sys
import tempfile

import wicktest


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def ns(us):
    return round(us * 1000)


def main():
    wicktest.require_wick_trace()
    os.environ["WICK_TRACE"] = wicktest.WICK_TRACE
    try:
        import numpy as np
    except ImportError as e:
        wicktest.skip("numpy is not importable (%s); install python3-numpy" % e)
    import wick.trace

    with tempfile.TemporaryDirectory(prefix="wick-open-py-") as tmp:
        subprocess.run([sys.executable, os.path.join(wicktest.SOURCE, "tools", "make-rank-traces.py"),
                        tmp, "--ranks", "4", "--nodes", "2", "--steps", "3"], check=True, timeout=120)
        path = os.path.join(tmp, "rank-2.json")
        doc = wick.trace.open(path)
        ref = load(path)
        events = [e for e in ref["traceEvents"] if e.get("ph") == "X"]
        origin = min(ns(e["ts"]) for e in ref["traceEvents"] if "ts" in e)
        gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        nccl = [e for e in gpu if e["name"].startswith(("ncclKernel_", "ncclDevKernel_"))]

        assert doc.format == "chrome", doc.format
        assert doc.origin_ns == origin, (doc.origin_ns, origin)
        for name in ("tracks", "slices", "kernels", "collectives"):
            assert isinstance(getattr(doc, name), np.ndarray), name
        # every GPU interval, by start
        assert len(doc.kernels) == len(gpu), (len(doc.kernels), len(gpu))
        got = sorted(zip(doc.kernels["start_ns"].tolist(), doc.kernels["dur_ns"].tolist(),
                         doc.kernels["name"].tolist()))
        want = sorted((ns(e["ts"]) - origin, ns(e["dur"]), e["name"]) for e in gpu)
        assert got == want, "kernels differ from the file"
        assert doc.kernels["dur_ns"].dtype == np.uint64
        assert set(doc.kernels["kind"].tolist()) == {"kernel"}
        # the NCCL kernels as collectives, with the args the reduction reads
        assert len(doc.collectives) == len(nccl), (len(doc.collectives), len(nccl))
        sizes = {"Float": 4, "BFloat16": 2}
        want = sorted((e["args"]["Process Group Name"], e["args"]["Seq"],
                       max(e["args"]["In msg nelems"], e["args"]["Out msg nelems"])
                       * sizes[e["args"]["dtype"]], e["args"]["Group size"]) for e in nccl)
        got = sorted(zip(doc.collectives["group"].tolist(), doc.collectives["seq"].tolist(),
                         doc.collectives["bytes"].tolist(), doc.collectives["group_size"].tolist()))
        assert got == want, "collectives differ from the file"
        k = doc.collectives["kernel"]
        assert (k >= 0).all() and (doc.collectives["slice"] == -1).all()
        assert all(n.startswith("nccl") for n in doc.kernels["name"][k].tolist())
        # the steps among the slices, and every slice on a slices track
        steps = sorted((ns(e["ts"]) - origin, ns(e["dur"])) for e in events
                       if e["name"].startswith("ProfilerStep#"))
        mask = np.char.startswith(doc.slices["name"].astype(str), "ProfilerStep#")
        got = sorted(zip(doc.slices["start_ns"][mask].tolist(), doc.slices["dur_ns"][mask].tolist()))
        assert got == steps, (got, steps)
        # the model's root span (the file) is on no track
        on = doc.slices["track"] != 0xFFFFFFFF
        assert (~on).sum() <= 1, (~on).sum()
        assert set(doc.tracks["kind"][doc.slices["track"][on]].tolist()) <= {"slices"}
        assert int(doc.tracks["events"].sum()) >= len(doc.kernels)
        # the figures as plain data
        assert doc.gpu["devices"][0]["kernel_ns"] > 0
        assert doc.ranks["ranks"][0]["rank"] == 2
        json.dumps(doc.gpu)
        # errors
        try:
            wick.trace.open(os.path.join(tmp, "missing.json"))
            raise AssertionError("a missing file opened")
        except wick.trace.Error as e:
            assert "missing.json" in str(e), e

    # the real 2-rank gloo run: gloo's collectives are host spans
    gloo = os.path.join(wicktest.SOURCE, "tests", "data", "ranks", "h200-gloo-rank1.json.gz")
    doc = wick.trace.open(gloo)
    assert len(doc.collectives) == 12, len(doc.collectives)
    assert (doc.collectives["kernel"] == -1).all()
    names = doc.slices["name"][doc.collectives["slice"]].tolist()
    assert all(n.startswith("gloo:") for n in names), names
    assert set(doc.collectives["name"].tolist()) == {"all_reduce", "broadcast"}
    print("ok: %r" % doc)


if __name__ == "__main__":
    main()
