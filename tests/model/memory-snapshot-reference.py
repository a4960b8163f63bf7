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


NEG, POS = -(2**63), 2**63 - 1
CATEGORY_KEYS = ["parameters", "activations", "gradients", "optimizer_state", "unknown"]
RECORD_CATEGORIES = ["parameter", "activation", "gradient", "optimizer", "other"]
OTHER = 4


def frames_category(frames):
    """The stack's category from its Python frames (wick-memory-snapshot.h)."""
    optimizer = backward = parameter = forward = False
    for fr in frames or []:
        name, file = fr.get("name", ""), fr.get("filename", "")
        optimizer |= "torch/optim/" in file
        backward |= ("autograd::Engine" in name or "autograd::engine" in name
                     or "_engine_run_backward" in name
                     or ("torch/autograd/" in file and name == "backward")
                     or (file.endswith("torch/_tensor.py") and name == "backward"))
        module = file.endswith("torch/nn/modules/module.py")
        parameter |= ("torch/nn/parameter.py" in file or name == "reset_parameters"
                      or (module and name in ("_apply", "to", "cuda", "register_parameter")))
        forward |= module and name in ("_call_impl", "_wrapped_call_impl")
    for flag, category in ((optimizer, 3), (backward, 2), (parameter, 0), (forward, 1)):
        if flag:
            return category
    return OTHER


def snapshot_allocations(snap):
    """Every allocation the file tells of: [device, addr, size, a0, a1, frames, live]."""
    out = []
    for dev, trace in enumerate(snap.get("device_traces", [])):
        open_ = {}
        for e in trace:
            if e["action"] == "alloc":
                a = [dev, e["addr"], e["size"], e["time_us"], POS, e.get("frames", []), False]
                open_[e["addr"]] = a
                out.append(a)
            elif e["action"] == "free_completed":
                if e["addr"] in open_:
                    open_.pop(e["addr"])[4] = e["time_us"]
                else:
                    out.append([dev, e["addr"], e["size"], NEG, e["time_us"], None, False])
        for seg in snap["segments"]:
            if seg["device"] != dev:
                continue
            for b in seg["blocks"]:
                if b["state"] != "active_allocated":
                    continue
                if b["address"] in open_:
                    open_[b["address"]][6] = b
                else:
                    out.append([dev, b["address"], b["requested_size"], NEG, POS,
                                b.get("frames", []), b])
    return out


def parse_address(pairs):
    """(address, bad): a memory record's wick_address, as docs/format.md writes it."""
    values = [v for k, v in pairs if k == "wick_address"]
    if not values:
        return 0, False
    v = values[0]
    if len(values) > 1 or not isinstance(v, str) or not v.startswith("0x"):
        return 0, True
    digits = v[2:]
    if not 1 <= len(digits) <= 16 or any(c not in "0123456789abcdefABCDEF" for c in digits):
        return 0, True
    n = int(digits, 16)
    return n, n == 0


def cuda_device(device):
    if device == "cuda":
        return 0
    if device.startswith("cuda:") and device[5:].isdigit() and len(device) > 5:
        return int(device[5:])
    return -1


def categories(snap, trace_path, peak_us):
    """The "categories" object of `wick-trace memory --trace` from the
    definitions in app/model/wick-snapshot-categories.h."""
    import datetime
    meta, events, bad = None, [], 0
    with open(trace_path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(trace_path, "rt") if gz else open(trace_path)) as f:
        for line in f:
            if not line.strip():
                continue
            pairs = json.loads(line, object_pairs_hook=lambda p: p)
            rec = dict(pairs)
            if rec.get("kind") == "meta":
                meta = rec
            elif rec.get("kind") == "memory":
                address, is_bad = parse_address(pairs)
                bad += is_bad
                events.append((rec, address))
    events = sorted(enumerate(events), key=lambda ie: (ie[1][0]["timestamp_ns"], ie[0]))
    lives, open_ = [], {}
    counts = {"without_address": 0, "other_device": 0}
    last_ns = 0
    for _, (rec, address) in events:
        t = rec["timestamp_ns"]
        last_ns = max(last_ns, t)
        key = (rec["device"], rec["storage_id"])
        was_open = key in open_
        if was_open:
            open_.pop(key)[3] = t
        dev = cuda_device(rec["device"])
        if dev < 0:
            counts["other_device"] += 1
            continue
        if rec["action"] != "alloc" and was_open:
            continue
        if address == 0:
            counts["without_address"] += 1
            continue
        cat = RECORD_CATEGORIES.index(rec.get("category", "other"))
        life = [dev, address, NEG, POS, rec["bytes"], cat]
        if rec["action"] == "alloc":
            life[2] = t
            open_[key] = life
        else:
            life[3] = t
        lives.append(life)

    allocs = snapshot_allocations(snap)
    entries = [e for t in snap.get("device_traces", []) for e in t]
    last_entry = max((e["time_us"] for e in entries), default=None)
    source, offset, correction, pairs_n = "none", 0, 0, 0
    if lives:
        try:
            when = datetime.datetime.fromisoformat(meta["timestamp"].replace("Z", "+00:00"))
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.timezone.utc)
            epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
            offset = (when - epoch) // datetime.timedelta(microseconds=1)
            source = "meta_timestamp"
        except (ValueError, KeyError, TypeError, AttributeError):
            source = "trace_end"
            offset = last_entry - last_ns // 1000 if last_entry is not None else 0
        diffs = []
        for life in lives:
            if life[2] == NEG:
                continue
            at = life[2] // 1000 + offset
            best = None
            for a in sorted(allocs, key=lambda a: a[3]):
                if (a[0], a[1]) != (life[0], life[1]) or a[3] == NEG or a[2] != life[4]:
                    continue
                d = a[3] - at
                if abs(d) <= 100000 and (best is None or abs(d) < abs(best)):
                    best = d
            if best is not None:
                diffs.append(best)
        pairs_n = len(diffs)
        if diffs:
            correction = sorted(diffs)[(len(diffs) - 1) // 2]
            offset += correction
    for life in lives:
        for i in (2, 3):
            if life[i] not in (NEG, POS):
                life[i] = life[i] // 1000 + offset
    finite = [x for life in lives for x in life[2:4] if x not in (NEG, POS)]
    finite += [x for a in allocs for x in a[3:5] if x not in (NEG, POS)]
    if last_entry is not None:
        finite.append(last_entry)
    lo, hi = (min(finite), max(finite)) if finite else (POS, NEG)
    clamp = lambda t: lo if t == NEG else hi if t == POS else t

    c = {k: 0 for k in ("allocations", "matched", "unmatched", "ambiguous", "live", "live_matched",
                        "live_unmatched", "live_ambiguous", "from_record", "from_frames", "unknown")}
    matched_lives = set()
    for a in allocs:
        a0 = a[3]
        a1 = last_entry if a[4] == POS and last_entry is not None else a[4]
        cands = [(i, l) for i, l in enumerate(lives)
                 if (l[0], l[1]) == (a[0], a[1]) and max(a0, l[2]) <= min(a1, l[3])]
        if any(l[4] == a[2] for _, l in cands):
            cands = [(i, l) for i, l in cands if l[4] == a[2]]
        overlaps = sorted(((min(clamp(a1), clamp(l[3])) - max(clamp(a0), clamp(l[2])), i)
                           for i, l in cands), key=lambda o: -o[0])
        match = "unmatched"
        if len(overlaps) == 1 or (len(overlaps) > 1 and overlaps[0][0] > 2 * overlaps[1][0]):
            match = "matched"
        elif len(overlaps) > 1:
            match = "ambiguous"
        category, src = OTHER, "unknown"
        if match == "matched":
            life = lives[overlaps[0][1]]
            matched_lives.add(overlaps[0][1])
            if life[5] != OTHER:
                category, src = life[5], "from_record"
        if src == "unknown" and a[5] is not None:
            fc = frames_category(a[5])
            if fc != OTHER:
                category, src = fc, "from_frames"
        a.append(category)
        live = a[6] is not False
        c["allocations"] += 1
        c[match] += 1
        c["live"] += live
        if live:
            c["live_" + match] += 1
        c[src] += 1
    at_snapshot = [0] * 5
    for a in allocs:
        if a[6] is not False:
            at_snapshot[a[7]] += a[6]["size"]
    at_peak = None
    if peak_us is not None:
        at_peak = [0] * 5
        for a in allocs:
            if a[3] <= peak_us < a[4]:
                at_peak[a[7]] += a[2]
    out = {"clock": {"source": source, "offset_us": offset, "correction_us": correction,
                     "refined_pairs": pairs_n}}
    out.update(c)
    out["records"] = {"lifetimes": len(lives), "lifetimes_matched": len(matched_lives),
                      "without_address": counts["without_address"],
                      "other_device": counts["other_device"], "bad_address": bad}
    out["at_snapshot"] = dict(zip(CATEGORY_KEYS, at_snapshot))
    out["at_peak"] = dict(zip(CATEGORY_KEYS, at_peak)) if at_peak is not None else None
    return out


def main(path, top_n=10, lo=None, hi=None, trace_path=None):
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
    if trace_path is not None:
        out["categories"] = categories(snap, trace_path, peak_us)
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
    lo = hi = trace = None
    if "--trace" in args:
        i = args.index("--trace")
        trace = args[i + 1]
        del args[i:i + 2]
    if "--from" in args:
        i = args.index("--from")
        lo = int(args[i + 1])
        del args[i:i + 2]
    if "--to" in args:
        i = args.index("--to")
        hi = int(args[i + 1])
        del args[i:i + 2]
    main(args[0], lo=lo, hi=hi, trace_path=trace)
