#!/usr/bin/python3
"""Independent reference for `wick-trace memory --json`: Python's own pickle
module loads a snapshot from Wick's test data (trusted files only: pickle.load
runs code) and computes the same object from the plain Python data, following
the definitions in app/model/wick-memory-snapshot.h and
app/cli/wick-trace-memory.c. Prints one JSON object."""
import gzip
import json
import pickle
import subprocess
import sys


def load(path):
    with open(path, "rb") as f:
        head = f.read(4)
    opener = gzip.open if head[:2] == b"\x1f\x8b" else open
    if head == b"\x28\xb5\x2f\xfd":
        # The zstd program, not Wick's reader: this reference shares no code with it.
        data = subprocess.run(["zstd", "-dc", path], check=True, stdout=subprocess.PIPE).stdout
        return pickle.loads(data)
    with opener(path, "rb") as f:
        return pickle.load(f)


def frame_text(fr):
    return "%s (%s:%d)" % (fr.get("name", ""), fr.get("filename", ""), fr.get("line", 0))


def main(path, top_n=10, lo=None, hi=None):
    """lo/hi: a time range as `wick-trace memory --from/--to`: the full
    series is computed first, then cut: the level before lo is the range's
    start; only the entries inside count."""
    snap = load(path)
    segments = snap["segments"]
    traces = snap.get("device_traces", [])
    reserved = sum(seg["total_size"] for seg in segments)
    allocated = sum(
        b["size"] for seg in segments for b in seg["blocks"] if b["state"] == "active_allocated"
    )
    n_entries = sum(len(t) for t in traces)
    n_all = n_entries

    # The viewer's allocated series, all devices merged by (time, device, order).
    start = 0
    changes = []  # (time_us, device, order, delta)
    for dev, trace in enumerate(traces):
        live = {}
        for order, e in enumerate(trace):
            if e["action"] == "alloc":
                live[e["addr"]] = e["size"]
                changes.append((e["time_us"], dev, order, e["size"]))
            elif e["action"] == "free_completed":
                if e["addr"] in live:
                    size = live.pop(e["addr"])
                else:
                    size = e["size"]
                    start += size
                changes.append((e["time_us"], dev, order, -size))
        for seg in segments:
            if seg["device"] != dev:
                continue
            for b in seg["blocks"]:
                if b["state"] == "active_allocated" and b["address"] not in live:
                    start += b["requested_size"]
    if len(traces) > 1:
        changes.sort(key=lambda c: (c[0], c[1], c[2]))
    peak, peak_us = None, None
    ranged = lo is not None or hi is not None
    lo = -(2**63) if lo is None else lo
    hi = 2**63 - 1 if hi is None else hi
    start_in_range = None
    if n_entries:
        first_us = min(t[0]["time_us"] for t in traces if t)
        total = start
        for t, _, _, delta in changes:
            if t >= lo:
                break
            total += delta
        start_in_range = total
        peak, peak_us = total, max(first_us, lo) if ranged else first_us
        for t, _, _, delta in changes:
            if t < lo or t > hi:
                continue
            total += delta
            if total > peak:
                peak, peak_us = total, t

    oom = []
    for dev, trace in enumerate(traces):
        for e in trace:
            if e["action"] == "oom" and lo <= e["time_us"] <= hi:
                oom.append({"device": dev, "time_us": e["time_us"], "bytes": e["size"],
                            "device_free_bytes": e.get("device_free", e.get("addr")), "stream": e.get("stream", 0)})

    by_stack = {}
    for seg in segments:
        for b in seg["blocks"]:
            if b["state"] != "active_allocated":
                continue
            key = tuple(frame_text(fr) for fr in b.get("frames", []))
            by_stack[key] = by_stack.get(key, 0) + b["size"]
    top = sorted(by_stack.items(), key=lambda kv: (-kv[1], [s.encode() for s in kv[0]]))
    if ranged:
        n_entries = sum(1 for t in traces for e in t if lo <= e["time_us"] <= hi)
    out = {
        "segments": len(segments),
        "reserved_bytes": reserved,
        "allocated_bytes": allocated,
        "trace_entries": n_entries,
        "peak_allocated_bytes": peak if peak is not None else 0,
        "peak_time_us": peak_us,
        "oom": oom,
        "top": [{"bytes": b, "frames": list(k)} for k, b in top[:top_n]],
    }
    if ranged:
        # the reserved level at lo: the snapshot's reserved minus the changes from lo on
        net_from = 0
        for trace in traces:
            for e in trace:
                if e["time_us"] < lo:
                    continue
                if e["action"] in ("segment_alloc", "segment_map"):
                    net_from += e["size"]
                elif e["action"] in ("segment_free", "segment_unmap"):
                    net_from -= e["size"]
        out["range"] = {"from_us": lo, "to_us": hi, "entries_outside": n_all - n_entries,
                        "start_allocated_bytes": start_in_range if start_in_range is not None else start,
                        "start_reserved_bytes": reserved - net_from}
    print(json.dumps(out))


def diff(path_a, path_b):
    """`wick-trace compare A B` on two snapshots: the live block bytes by
    stack (frames joined), every stack of either, largest |b - a| first."""
    sides = []
    out = {}
    for name, path in (("a", path_a), ("b", path_b)):
        snap = load(path)
        segs = snap["segments"]
        out[name] = {"file": path, "segments": len(segs),
                     "reserved_bytes": sum(s["total_size"] for s in segs),
                     "allocated_bytes": sum(b["size"] for s in segs for b in s["blocks"]
                                            if b["state"] == "active_allocated")}
        by = {}
        for seg in segs:
            for b in seg["blocks"]:
                if b["state"] != "active_allocated":
                    continue
                key = "\n".join(frame_text(fr) for fr in b.get("frames", []))
                n, c = by.get(key, (0, 0))
                by[key] = (n + b["size"], c + 1)
        sides.append(by)
    keys = set(sides[0]) | set(sides[1])
    rows = []
    for k in keys:
        (ba, ca), (bb, cb) = sides[0].get(k, (0, 0)), sides[1].get(k, (0, 0))
        rows.append({"bytes_a": ba, "bytes_b": bb, "delta_bytes": bb - ba, "count_a": ca,
                     "count_b": cb, "frames": k.split("\n") if k else []})
    rows.sort(key=lambda r: (-abs(r["delta_bytes"]), "\n".join(r["frames"]).encode()))
    out["stacks"] = rows
    print(json.dumps(out))


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--diff":
        diff(args[1], args[2])
        sys.exit(0)
    lo = hi = None
    if "--from" in args:
        i = args.index("--from")
        lo = int(args[i + 1])
        del args[i:i + 2]
    if "--to" in args:
        i = args.index("--to")
        hi = int(args[i + 1])
        del args[i:i + 2]
    main(args[0], lo=lo, hi=hi)
