#!/usr/bin/python3
"""Makes a large CUDA memory snapshot for benchmarks from a real one: the
history of SOURCE repeated COPIES times (each entry a new dict, time_us moved
on by the source's span each copy, the frames lists shared as the original
pickler shares them), the segments as they are. Writes OUT with Python's
pickler (protocol 4, as torch.cuda.memory._dump_snapshot does).

  make-big-snapshot.py SOURCE(.pickle|.gz) COPIES OUT
"""
import gzip
import pickle
import sys

src, copies, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
opener = gzip.open if open(src, "rb").read(2) == b"\x1f\x8b" else open
with opener(src, "rb") as f:
    snap = pickle.load(f)
trace = snap["device_traces"][0]
span = trace[-1]["time_us"] - trace[0]["time_us"] + 1
big = []
for k in range(copies):
    for e in trace:
        e2 = dict(e)
        e2["time_us"] = e["time_us"] + k * span
        big.append(e2)
snap["device_traces"] = [big]
with open(out, "wb") as f:
    pickle.dump(snap, f, protocol=4)
print(len(big), "entries")
