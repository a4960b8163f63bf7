#!/usr/bin/python3
"""Writes a large allocator snapshot and a Wick trace of the same (made-up) run
for bench-snapshot-categories: N allocations of 4 KiB on cuda:0 at N/4
addresses (each reused four times), allocation k allocated at W + 10k us and
freed 5 us later (history entries alloc, free_requested, free_completed), and
for each a Wick storage with an alloc and a free record 350 us after the
allocator's entries (wick_address, categories in turn), on a session clock
starting at the meta's timestamp.

  make-snapshot-large.py N SNAPSHOT TRACE
"""
import datetime
import json
import pickle
import sys

n = int(sys.argv[1])
snap_out, trace_out = sys.argv[2], sys.argv[3]
W = int(datetime.datetime(2026, 7, 12, 10, 0, 0, tzinfo=datetime.timezone.utc).timestamp()) * 10**6
LAG = 350
base = 0x7F1000000000
addresses = max(1, n // 4)
size = 4096
categories = ("activation", "gradient", "optimizer", "parameter")
frames = [{"name": "forward", "filename": "/work/model.py", "line": 12}]

entries = []
for k in range(n):
    addr = base + (k % addresses) * size
    t = W + 10 * k
    for action, dt in (("alloc", 0), ("free_requested", 4), ("free_completed", 5)):
        entries.append({"action": action, "addr": addr, "size": size, "stream": 0,
                        "time_us": t + dt, "frames": frames})
entries.append({"action": "snapshot", "addr": 0, "size": 0, "stream": 0,
                "time_us": W + 10 * n + 10, "frames": []})
segments = [{"device": 0, "address": base, "total_size": addresses * size, "allocated_size": 0,
             "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "large",
             "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
             "blocks": [{"address": base, "size": addresses * size, "requested_size": 0,
                         "state": "inactive", "frames": []}]}]
with open(snap_out, "wb") as f:
    pickle.dump({"segments": segments, "device_traces": [entries], "allocator_settings": {},
                 "external_annotations": []}, f, protocol=4)
del entries

start = W - 10000  # the session opens 10 ms before the history
stamp = datetime.datetime.fromtimestamp(start / 1e6, datetime.timezone.utc)
meta = {"kind": "meta", "schema": "candle-graph/trace/10", "run_id": "large",
        "correlation_id": "large", "entrypoint": "make-snapshot-large.py", "phase": "train",
        "timestamp": stamp.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (stamp.microsecond // 1000),
        "capture_step": 1, "warmup_steps": 0, "device": "cuda:0",
        "measured_region_device_synchronized": False, "timing_mode": "host",
        "capture_contract": {"measurement_scope": "profiled_work", "operations": "none",
                             "tensors": "none", "gradients": "none", "logical_memory": "partial",
                             "physical_memory": "none", "device_timing": "none"},
        "tags": {}}
end_ns = (10 * n + 20000) * 1000
with open(trace_out, "w") as f:
    f.write(json.dumps(meta) + "\n")
    f.write('{"kind":"span_start","id":"s1","name":"run","start_ns":0,"span_kind":"function","measured":true}\n')
    for k in range(n):
        addr = base + (k % addresses) * size
        t_ns = (10 * k + LAG + 10000) * 1000
        cat = categories[k % 4]
        for action, dt in (("alloc", 0), ("free", 5000)):
            f.write('{"kind":"memory","timestamp_ns":%d,"storage_id":"s%d","tensor_id":"t%d",'
                    '"span_id":"s1","device":"cuda:0","bytes":%d,"action":"%s","dtype":"f32",'
                    '"category":"%s","wick_address":"0x%x"}\n'
                    % (t_ns + dt, k, k, size, action, cat, addr))
    f.write('{"kind":"span_end","id":"s1","duration_ns":%d}\n' % end_ns)
    f.write('{"kind":"terminal","outcome":"complete","timestamp_ns":%d}\n' % end_ns)
