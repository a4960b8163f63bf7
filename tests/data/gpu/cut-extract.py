#!/usr/bin/python3
"""Cuts an extract of a Kineto trace: the host events starting in
[START_US, START_US + LENGTH_US) (and the ProfilerStep#N slices overlapping
it), the GPU events whose correlation id is one of theirs, the flow points
of those ids, and every metadata (M) event and top-level member. The events
are kept as written (the numbers' text is not touched: json is read with
Decimal and written back as it was).

  cut-extract.py IN.json[.gz] START_US LENGTH_US OUT.json.gz
"""
import decimal, gzip, json, sys

DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"}

src, start, length, out = sys.argv[1], decimal.Decimal(sys.argv[2]), decimal.Decimal(sys.argv[3]), sys.argv[4]
raw = open(src, "rb").read()
if raw[:2] == b"\x1f\x8b":
    raw = gzip.decompress(raw)
d = json.loads(raw, parse_float=decimal.Decimal)
end = start + length
keep, corr = [], set()
for e in d["traceEvents"]:
    ph, ts = e.get("ph"), e.get("ts")
    if ph == "M":
        keep.append(e)
    elif ph == "X" and e.get("cat") not in DEVICE and ts is not None:
        step = str(e.get("name", "")).startswith("ProfilerStep#")
        if start <= ts < end or (step and ts < end and ts + e.get("dur", 0) > start):
            keep.append(e)
            c = (e.get("args") or {}).get("correlation")
            if c is not None:
                corr.add(c)
for e in d["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") in DEVICE:
        c = (e.get("args") or {}).get("correlation")
        if c in corr or (e.get("cat") == "gpu_user_annotation" and start <= e["ts"] < end + 200000):
            keep.append(e)
    elif e.get("ph") in ("s", "f") and e.get("id") in corr:
        keep.append(e)
d["traceEvents"] = keep


class Enc(json.JSONEncoder):
    def default(self, o):
        if isinstance(o, decimal.Decimal):
            return float(o)
        return super().default(o)


def dump(o):
    # Decimals written as their own text
    if isinstance(o, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + dump(v) for k, v in o.items()) + "}"
    if isinstance(o, list):
        return "[" + ", ".join(dump(v) for v in o) + "]"
    if isinstance(o, decimal.Decimal):
        return str(o)
    return json.dumps(o)


with gzip.open(out, "wt") as f:
    f.write("{" + ", ".join(json.dumps(k) + ": " + (
        "[\n" + ",\n".join(dump(e) for e in v) + "\n]" if k == "traceEvents" else dump(v))
        for k, v in d.items()) + "}\n")
print(out, len(keep), "events")
