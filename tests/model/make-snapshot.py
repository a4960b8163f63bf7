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
    protocol = int(sys.argv[3]) if len(sys.argv) > 3 else 4
    if kind == "synthetic":
        synthetic(out, protocol)
    elif kind == "data":
        data(out, protocol)
    elif kind == "hostile":
        hostile(out, protocol, sys.argv[4])
    else:
        sys.exit("unknown kind " + kind)
