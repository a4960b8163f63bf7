#!/usr/bin/env python3
# make-big-gpu-trace.py SRC OUT TARGET_BYTES — a large PyTorch profiler trace
# for the `wick-trace gpu --json` benchmark (docs/performance.md).
# Replicates a real torch 2.11 eager trace (H200) until the output reaches
# TARGET bytes: copy k shifted in time after copy k-1, its correlation,
# External id, flow ids and ProfilerStep numbers offset so that every link
# stays unique. Each event is serialised once as a template.
import json, sys
src, out, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(src))
ev = d["traceEvents"]
meta = [e for e in ev if e.get("ph") == "M"]
body = [e for e in ev if e.get("ph") != "M"]
t0 = min(e["ts"] for e in body if "ts" in e)
t1 = max(e["ts"] + e.get("dur", 0) for e in body if "ts" in e)
period = (t1 - t0) + 100.0
OFF = 10_000_000
templates = []  # (format string, ts or None, [int offsets], step or None)
for e in body:
    e = dict(e)
    ts = e.pop("ts", None)
    ints = []
    if isinstance(e.get("id"), int):
        ints.append(e["id"]); e["id"] = "@I%d@" % (len(ints) - 1)
    a = e.get("args")
    if isinstance(a, dict):
        a = dict(a)
        for key in ("correlation", "External id"):
            if isinstance(a.get(key), int):
                ints.append(a[key]); a[key] = "@I%d@" % (len(ints) - 1)
        e["args"] = a
    step = None
    if e.get("name", "").startswith("ProfilerStep#"):
        step = int(e["name"][13:] or 0); e["name"] = "@S@"
    text = json.dumps(e).replace("%", "%%")
    for i in range(len(ints)):
        text = text.replace('"@I%d@"' % i, "%%(i%d)d" % i)
    text = text.replace('"@S@"', '"ProfilerStep#%(s)d"')
    if ts is not None:
        text = '{"ts": %(ts).3f, ' + text[1:]
    templates.append((text, ts, ints, step))
with open(out, "w") as f:
    f.write('{"schemaVersion": 1, "traceEvents": [\n')
    f.write(",\n".join(json.dumps(e) for e in meta))
    k = 0
    size = f.tell()
    while size < target:
        shift = k * period
        off = k * OFF
        parts = []
        for text, ts, ints, step in templates:
            v = {"i%d" % i: x + off for i, x in enumerate(ints)}
            if ts is not None:
                v["ts"] = ts + shift
            if step is not None:
                v["s"] = k * 100 + step
            parts.append(text % v)
        chunk = ",\n" + ",\n".join(parts)
        f.write(chunk)
        size += len(chunk)
        k += 1
    f.write("\n]}\n")
print("copies", k, "events", len(meta) + k * len(body), "bytes", size)
