#!/usr/bin/python3
"""Writes synthetic CUDA memory snapshots (the shape torch.cuda.memory._dump_snapshot
writes) and hostile pickles for Wick's tests, with Python's own pickler. No
torch, no GPU.

  make-snapshot.py synthetic OUT [PROTOCOL]
      Two devices. Device 0: a segment at 0x7f0000000000 (20 MiB, expandable
      False) with blocks [4 MiB active_allocated "weight" (live before the
      history), 2 MiB active_allocated (allocated in the history),
      14 MiB inactive]; a second segment at 0x7f0002000000 (2 MiB) with one
      inactive block. History of device 0: segment_alloc of the second segment,
      alloc 0x7f0000400000 2 MiB, alloc+free_requested+free_completed of a
      1 MiB block in the second segment, a free_completed of an address the
      history never allocated (1 MiB, so it was live before), an oom (asked
      8 GiB, 123456 bytes free), and a snapshot entry. Device 1: one
      segment with a live 1 KiB block and a history of one alloc/free pair.
      Frames are shared lists (the pickler memoizes them) with a torch/optim
      frame, an autograd frame and a module forward frame. Addresses above
      2^63 appear (a 9-byte LONG1) in a stream id.
  make-snapshot.py pair SNAPSHOT TRACE [bad-timestamp]
      A snapshot and a Wick trace of the same (made-up) run, for the categories
      from records (app/model/wick-snapshot-categories.h): the trace's memory
      records carry wick_address values and are stamped 350 us after the
      allocator's entries (the clock refinement finds -350), on a session clock
      starting at the meta's timestamp. Device 0: a parameter live since
      before the history (matched: "parameter"); one address reused by three
      activations with no stack (each matched to its own record); a gradient
      live at the snapshot; an allocation no record explains, with a module
      forward stack (frames: activation) and one with no stack (unknown); one
      overlapped about equally by two records (ambiguous; frames: optimizer);
      one whose record says "other" (frames decide); one with a short record
      of its size and a long one of another size (the size decides); a free
      with no alloc before the history, matched by a record made before it.
      Device 1: a live block matched by a "cuda:1" record. And records that
      match nothing: a cpu storage, one with no wick_address, one with a bad
      one ("0xZZ"), one at an address the snapshot never had. With
      bad-timestamp the meta's timestamp is not a time (the trace-end guess).
  make-snapshot.py data OUT PROTOCOL
      Plain data of every kind the reader must decode, and its JSON on stdout
      (ints beyond 64 bits printed as the string "big", those in [2^63, 2^64)
      as {"u64": "digits"}, bytes as {"bytes": hex}, dicts as [[key, value]...],
      sets as lists sorted by each item's JSON).
  make-snapshot.py hostile OUT PROTOCOL MARKER
      A pickle whose loading runs os.system("touch MARKER") (REDUCE of a GLOBAL
      or STACK_GLOBAL), wrapped in a snapshot-like dict.
"""
import json
import os
import pickle
import sys

MiB = 1 << 20


def frames(*specs):
    return [{"name": n, "filename": f, "line": l} for n, f, l in specs]


def synthetic(out, protocol):
    cpp = {"name": "c10::cuda::CUDACachingAllocator::malloc", "filename": "CUDACachingAllocator.cpp", "line": 0}
    optim = [cpp] + frames(("_init_group", "/usr/lib/python3/torch/optim/adam.py", 170),
                           ("step", "/work/train.py", 40))
    grad = [cpp] + frames(("_engine_run_backward", "/usr/lib/python3/torch/autograd/graph.py", 744),
                          ("backward", "/work/train.py", 38))
    fwd = [cpp] + frames(("forward", "/work/model.py", 12),
                         ("_call_impl", "/usr/lib/python3/torch/nn/modules/module.py", 1527))
    base0 = 0x7F0000000000
    base1 = 0x7F0002000000
    segments = [
        {"device": 0, "address": base0, "total_size": 20 * MiB, "allocated_size": 6 * MiB,
         "active_size": 6 * MiB, "requested_size": 6 * MiB - 100, "stream": 0,
         "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": [],
         "blocks": [
             {"address": base0, "size": 4 * MiB, "requested_size": 4 * MiB - 100,
              "state": "active_allocated", "frames": []},
             {"address": base0 + 4 * MiB, "size": 2 * MiB, "requested_size": 2 * MiB,
              "state": "active_allocated", "frames": optim},
             {"address": base0 + 6 * MiB, "size": 14 * MiB, "requested_size": 0,
              "state": "inactive", "frames": []},
         ]},
        {"device": 0, "address": base1, "total_size": 2 * MiB, "allocated_size": 0,
         "active_size": 0, "requested_size": 0, "stream": 0, "segment_type": "small",
         "segment_pool_id": (0, 0), "is_expandable": False, "frames": grad,
         "blocks": [{"address": base1, "size": 2 * MiB, "requested_size": 0,
                     "state": "inactive", "frames": []}]},
        {"device": 1, "address": 0x7E0000000000, "total_size": 2 * MiB, "allocated_size": 1024,
         "active_size": 1024, "requested_size": 1000, "stream": 2**63 + 5,
         "segment_type": "small", "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": [],
         "blocks": [{"address": 0x7E0000000000, "size": 1024, "requested_size": 1000,
                     "state": "active_allocated", "frames": fwd},
                    {"address": 0x7E0000000400, "size": 2 * MiB - 1024, "requested_size": 0,
                     "state": "inactive", "frames": []}]},
    ]

    def entry(action, addr, size, t, fr, stream=0):
        return {"action": action, "addr": addr, "size": size, "stream": stream, "time_us": t,
                "frames": fr, "compile_context": "N/A", "user_metadata": ""}

    dev0 = [
        entry("segment_alloc", base1, 2 * MiB, 1000, grad),
        entry("alloc", base0 + 4 * MiB, 2 * MiB, 1010, optim),
        entry("alloc", base1, 1 * MiB, 1020, grad),
        entry("free_requested", base1, 1 * MiB, 1030, grad),
        entry("free_completed", base1, 1 * MiB, 1040, grad),
        entry("free_completed", 0x7F0000F00000, 1 * MiB, 1050, []),
        entry("oom", 123456, 8 << 30, 1060, fwd),
        entry("snapshot", 0, 0, 1070, []),
    ]
    dev1 = [
        entry("alloc", 0x7E0000100000, 4096, 1005, fwd),
        entry("free_completed", 0x7E0000100000, 4096, 1015, fwd),
    ]
    snap = {"segments": segments, "device_traces": [dev0, dev1],
            "allocator_settings": {"expandable_segments": False},
            "external_annotations": [{"stage": "START", "name": "step", "device": 0, "time_us": 1000}]}
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=protocol)


def pair(snap_out, trace_out, bad_timestamp=False):
    import datetime
    W = int(datetime.datetime(2026, 7, 12, 10, 0, 0, tzinfo=datetime.timezone.utc).timestamp()) * 10**6
    LAG = 350  # the records come this many us after the allocator's entries
    cpp = {"name": "c10::cuda::CUDACachingAllocator::malloc", "filename": "CUDACachingAllocator.cpp", "line": 0}
    optim = [cpp] + frames(("_init_group", "/usr/lib/python3/torch/optim/adam.py", 170),
                           ("step", "/work/train.py", 40))
    grad = [cpp] + frames(("_engine_run_backward", "/usr/lib/python3/torch/autograd/graph.py", 744),
                          ("backward", "/work/train.py", 38))
    fwd = [cpp] + frames(("forward", "/work/model.py", 12),
                         ("_call_impl", "/usr/lib/python3/torch/nn/modules/module.py", 1527))
    base = 0x7F1000000000
    dev1 = 0x7E1000000000
    ms = 1000  # us
    entries0, entries1, records = [], [], []

    def entry(action, addr, size, t, fr):
        return {"action": action, "addr": addr, "size": size, "stream": 0, "time_us": W + t,
                "frames": fr, "compile_context": "N/A", "user_metadata": ""}

    def alloc(trace, addr, size, t0, t1, fr):
        trace.append(entry("alloc", addr, size, t0, fr))
        if t1 is not None:
            trace.append(entry("free_requested", addr, size, t1 - 10, fr))
            trace.append(entry("free_completed", addr, size, t1, fr))

    def record(storage, addr, size, t0, t1, category, device="cuda:0", address="hex"):
        """a storage's records at allocator time t0 (and t1), LAG us later"""
        extra = {}
        if address == "hex":
            extra["wick_address"] = "0x%x" % addr
        elif address is not None:
            extra["wick_address"] = address
        for action, t in (("alloc", t0), ("free", t1)):
            if t is None:
                continue
            records.append(dict({"kind": "memory", "timestamp_ns": (t + LAG) * 1000,
                                 "storage_id": storage, "tensor_id": "t:" + storage,
                                 "span_id": "s1", "device": device, "bytes": size,
                                 "action": action, "dtype": "f32", "category": category}, **extra))

    # live since before the history: a parameter
    record("param", base, 8 * MiB, -5 * ms, None, "parameter")
    # freed in the history, allocated before it
    entries0.append(entry("free_completed", base + 40 * MiB, 2 * MiB, 12 * ms, fwd))
    record("early", base + 40 * MiB, 2 * MiB, -4 * ms, 12 * ms, "gradient")
    # one address, three activations with no stack
    for k in range(3):
        t0 = 10 * ms + k * 10 * ms + 1
        alloc(entries0, base + 8 * MiB, 3 * MiB, t0, t0 + 5 * ms, [])
        record("act%d" % k, base + 8 * MiB, 3 * MiB, t0, t0 + 5 * ms, "activation")
    # a gradient live at the snapshot
    alloc(entries0, base + 12 * MiB, 1 * MiB, 40 * ms, None, grad)
    record("grad", base + 12 * MiB, 1 * MiB, 40 * ms, None, "gradient")
    # no record: frames, and no stack
    alloc(entries0, base + 16 * MiB, 1 * MiB, 45 * ms, 46 * ms, fwd)
    alloc(entries0, base + 20 * MiB, 1 * MiB, 47 * ms, 48 * ms, [])
    # two records overlapping one allocation about equally
    alloc(entries0, base + 24 * MiB, 1 * MiB, 50 * ms, 60 * ms, optim)
    record("half1", base + 24 * MiB, 1 * MiB, 50 * ms, 54 * ms, "activation")
    record("half2", base + 24 * MiB, 1 * MiB, 55 * ms, 60 * ms, "gradient")
    # a record that says "other"
    alloc(entries0, base + 28 * MiB, 1 * MiB, 62 * ms, 63 * ms, fwd)
    record("other", base + 28 * MiB, 1 * MiB, 62 * ms, 63 * ms, "other")
    # the size decides: a short record of its size, a long one of another
    alloc(entries0, base + 32 * MiB, 2 * MiB, 65 * ms, 70 * ms, [])
    record("sized", base + 32 * MiB, 2 * MiB, 65 * ms, 66 * ms, "optimizer")
    record("unsized", base + 32 * MiB, 4096, 66 * ms + 500, 70 * ms, "activation")
    # device 1: a live block
    alloc(entries1, dev1, 4000, 70 * ms, None, fwd)
    record("dev1", dev1, 4000, 70 * ms, None, "activation", device="cuda:1")
    # records matching nothing
    record("host", base + 48 * MiB, 64, 71 * ms, 72 * ms, "activation", device="cpu")
    record("noaddr", base + 48 * MiB, 64, 71 * ms, 72 * ms, "activation", address=None)
    record("bad", base + 48 * MiB, 64, 73 * ms, 74 * ms, "activation", address="0xZZ")
    record("nowhere", base + 56 * MiB, 64, 75 * ms, 76 * ms, "activation")
    entries0.append(entry("snapshot", 0, 0, 80 * ms, []))

    segments = [
        {"device": 0, "address": base, "total_size": 64 * MiB, "allocated_size": 9 * MiB,
         "active_size": 9 * MiB, "requested_size": 9 * MiB, "stream": 0,
         "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": [],
         "blocks": [
             {"address": base, "size": 8 * MiB, "requested_size": 8 * MiB,
              "state": "active_allocated", "frames": []},
             {"address": base + 8 * MiB, "size": 4 * MiB, "requested_size": 0,
              "state": "inactive", "frames": []},
             {"address": base + 12 * MiB, "size": 1 * MiB, "requested_size": 1 * MiB,
              "state": "active_allocated", "frames": grad},
             {"address": base + 13 * MiB, "size": 51 * MiB, "requested_size": 0,
              "state": "inactive", "frames": []},
         ]},
        {"device": 1, "address": dev1, "total_size": 2 * MiB, "allocated_size": 4096,
         "active_size": 4096, "requested_size": 4000, "stream": 0,
         "segment_type": "small", "segment_pool_id": (0, 0), "is_expandable": False,
         "frames": [],
         "blocks": [{"address": dev1, "size": 4096, "requested_size": 4000,
                     "state": "active_allocated", "frames": fwd},
                    {"address": dev1 + 4096, "size": 2 * MiB - 4096, "requested_size": 0,
                     "state": "inactive", "frames": []}]},
    ]
    snap = {"segments": segments, "device_traces": [entries0, entries1],
            "allocator_settings": {}, "external_annotations": []}
    with open(snap_out, "wb") as f:
        pickle.dump(snap, f, protocol=4)

    # the trace: the session clock starts at the meta's timestamp; records
    # before 0 (made before the session) are put at 0 ... so the session
    # starts 10 ms before W
    start = W - 10 * ms
    stamp = datetime.datetime.fromtimestamp(start / 1e6, datetime.timezone.utc)
    meta = {"kind": "meta", "schema": "candle-graph/trace/10", "run_id": "pair",
            "correlation_id": "pair", "entrypoint": "make-snapshot.py pair", "phase": "train",
            "timestamp": "yesterday" if bad_timestamp else stamp.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (stamp.microsecond // 1000),
            "capture_step": 1, "warmup_steps": 0, "device": "cuda:0",
            "measured_region_device_synchronized": False, "timing_mode": "host",
            "capture_contract": {"measurement_scope": "profiled_work", "operations": "none",
                                 "tensors": "none", "gradients": "none",
                                 "logical_memory": "partial", "physical_memory": "none",
                                 "device_timing": "none"},
            "tags": {}}
    for r in records:
        r["timestamp_ns"] += 10 * ms * 1000
    records.sort(key=lambda r: r["timestamp_ns"])
    end_ns = 100 * ms * 1000
    lines = [meta, {"kind": "span_start", "id": "s1", "name": "run", "start_ns": 0,
                    "span_kind": "function", "measured": True}]
    lines += records
    lines += [{"kind": "span_end", "id": "s1", "duration_ns": end_ns},
              {"kind": "terminal", "outcome": "complete", "timestamp_ns": end_ns}]
    with open(trace_out, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")


def jsonable(v):
    if isinstance(v, bool) or v is None or isinstance(v, float):
        return v
    if isinstance(v, int):
        if 2**63 <= v < 2**64:
            return {"u64": str(v)}
        return v if -(2**63) <= v < 2**63 else "big"
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": v.hex()}
    if isinstance(v, (list, tuple, set, frozenset)):
        items = [jsonable(x) for x in v]
        return sorted(items, key=json.dumps) if isinstance(v, (set, frozenset)) else items
    if isinstance(v, dict):
        return [[jsonable(k), jsonable(x)] for k, x in v.items()]
    return v


def data(out, protocol):
    shared = ["shared", 1]
    value = {
        "none": None, "true": True, "false": False,
        "ints": [0, 1, 255, 256, 65535, 65536, -1, -129, 2**31 - 1, -2**31, 2**31, 2**40,
                 -2**40, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64, -2**63 - 1, 2**200, -2**200],
        "floats": [0.0, -1.5, 1e300, 3.141592653589793],
        "strs": ["", "a", "é€😀", "x" * 300, "y" * 70000],
        "bytes": [b"", b"\x00\xff", bytearray(b"ba")],
        "tuples": [(), (1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
        "shared": [shared, shared, (shared,)],
        "nested": [[[[{"k": [1]}]]]],
        "big_list": list(range(2500)),
        "big_dict": {str(i): i for i in range(1200)},
        "set": {3, 1, 2},
        "frozenset": frozenset({"a"}),
        (1, "t"): "tuple key",
    }
    # What older protocols can only write with GLOBAL and REDUCE (a snapshot
    # never holds them): sets before 4, bytes before 3, bytearray before 5.
    if protocol < 4:
        del value["set"], value["frozenset"]
    if protocol < 5:
        value["bytes"] = value["bytes"][:2]
    if protocol < 3:
        del value["bytes"]
    with open(out, "wb") as f:
        pickle.dump(value, f, protocol=protocol)
    print(json.dumps(jsonable(value), ensure_ascii=False, sort_keys=False))


class Runs:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, ("touch " + self.marker,))


def hostile(out, protocol, marker):
    value = {"segments": [], "device_traces": [[Runs(marker)]]}
    with open(out, "wb") as f:
        pickle.dump(value, f, protocol=protocol)


if __name__ == "__main__":
    kind, out = sys.argv[1], sys.argv[2]
    protocol = int(sys.argv[3]) if len(sys.argv) > 3 and kind != "pair" else 4
    if kind == "synthetic":
        synthetic(out, protocol)
    elif kind == "pair":
        pair(out, sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == "bad-timestamp")
    elif kind == "data":
        data(out, protocol)
    elif kind == "hostile":
        hostile(out, protocol, sys.argv[4])
    else:
        sys.exit("unknown kind " + kind)
