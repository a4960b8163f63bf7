#!/usr/bin/env python3
"""Writes expected.tsv: per trace of this directory, the counts Perfetto's JSON
importer gives (its documented semantics, as /work/shared/tools/chrome-counts.py
counts them) and the deepest slice nesting of any host thread.

  slices    X + B (an unclosed B included), host and device
  instants  i / I / R, not [memory]
  counters  C samples: one per numeric member of args
  async     b + S (slices of nestable and legacy async)
  flows     v1, per (cat, name, id) in timestamp order (s, t, f at one time): each t or f after an s is an
            arrow from the last s or t (ends of one start fan out); a t or f before
            any s is no arrow (Wick counts it skipped); v2 pairs
  threads   (pid, tid) with a host (non-device) slice
  objects   O / N / D object events (instants of the process's objects track in Wick;
            Perfetto does not import them)
  samples   P samples (instants of the thread's samples track in Wick)
  depth     max nesting depth (0-based) of host slices on one thread: per thread
            in timestamp order (longer first on ties), a slice nests under the
            innermost open slice that has not ended by its start (a slice ending
            exactly where the next starts is its sibling, so are zero-length
            slices at one time); B/E matched per thread.
Run it when a trace is added; the model test (test-model-chrome-corpus) reads
expected.tsv and compares it with the track model."""
import collections, gzip, json, os, sys

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "Kernel", "Memcpy", "Memset",
          "gpu_op", "mtia_ccp_events", "hip_kernel"}


def num(v):
    if isinstance(v, bool):
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw)
    return d.get("traceEvents", []) if isinstance(d, dict) else d


def counts(events):
    c = collections.Counter()
    flows = collections.defaultdict(list)
    v2 = collections.defaultdict(list)
    per_thread = collections.defaultdict(list)  # (ts, order, kind, dur)
    threads = set()
    for order, e in enumerate(events):
        if not isinstance(e, dict):
            continue
        ph, ts = e.get("ph"), num(e.get("ts"))
        if ts is None or ph == "M":
            continue
        key = (str(e.get("pid", 0)), str(e.get("tid", e.get("pid", 0))))
        host = e.get("cat") not in DEVICE
        if ph in ("X", "B"):
            c["slices"] += 1
            if host:
                threads.add(key)
                dur = num(e.get("dur")) if ph == "X" else None
                per_thread[key].append((ts, order, ph, max(0.0, dur or 0.0)))
                if ph == "X" and ("bind_id" in e or e.get("flow_in") or e.get("flow_out")):
                    v2[str(e.get("bind_id", e.get("id")))].append((ts, bool(e.get("flow_in")), bool(e.get("flow_out"))))
        elif ph == "E" and host:
            per_thread[key].append((ts, order, "E", 0.0))
        elif ph in ("i", "I", "R"):
            if e.get("name") != "[memory]":
                c["instants"] += 1
        elif ph == "C":
            c["counters"] += sum(1 for v in (e.get("args") or {}).values() if num(v) is not None)
        elif ph in ("s", "t", "f"):
            flows[(e.get("cat"), e.get("name"), str(e.get("id", e.get("id2"))))].append((ts, "stf".index(ph), order))
        elif ph in ("b", "S"):
            c["async"] += 1
        elif ph in ("O", "N", "D"):
            c["objects"] += 1
        elif ph == "P":
            c["samples"] += 1
    for pts in flows.values():
        started = False
        for ts, phase, order in sorted(pts):  # at one time: s, then t, then f
            if phase == 0:
                started = True
            elif started:
                c["flows"] += 1
    for pts in v2.values():
        pts.sort()
        out = False
        for ts, fin, fout in pts:
            if fin and out:
                c["flows"] += 1
                out = False
            if fout:
                out = True
    c["threads"] = len(threads)
    depth = 0
    for evs in per_thread.values():
        # B/E matched per thread in timestamp order, then nesting by containment
        evs.sort(key=lambda x: (x[0], x[1]))
        slices, open_b = [], []
        end_all = max(x[0] + x[3] for x in evs)
        for ts, order, ph, dur in evs:
            if ph == "X":
                slices.append([ts, dur])
            elif ph == "B":
                s = [ts, None]
                slices.append(s)
                open_b.append(s)
            elif open_b:
                s = open_b.pop()
                s[1] = ts - s[0]
        for s in slices:
            if s[1] is None:
                s[1] = end_all - s[0]
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for ts, dur in slices:
            while stack and stack[-1] <= ts:
                stack.pop()
            depth = max(depth, len(stack))
            stack.append(ts + dur)
    c["depth"] = depth
    return c


here = os.path.dirname(os.path.abspath(__file__))
cols = ["slices", "instants", "counters", "async", "flows", "threads", "depth", "objects", "samples"]
with open(os.path.join(here, "expected.tsv"), "w") as out:
    out.write("# file\t" + "\t".join(cols) + "\n")
    for f in sorted(os.listdir(here)):
        if not f.endswith((".json", ".gz")):
            continue
        c = counts(load(os.path.join(here, f)))
        out.write(f + "\t" + "\t".join(str(c[k]) for k in cols) + "\n")
print("wrote expected.tsv")
