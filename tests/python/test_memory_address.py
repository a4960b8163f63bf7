"""record_memory(..., address=): the allocation's device address reaches the
trace as the memory record's `wick_address` key (a hex string), the strict
writer leaves it out, and both files still pass candle-graph's rules as the
document model checks them (`wick-trace check`); wick.torch's tracker writes
the storage's data_ptr(); bad addresses raise."""
import json
import os
import tempfile

import wicktest
import wick

ADDRESS = 0x7F3A00000200


def record(path, strict):
    with wick.Session("unit.train", capture_step=1, jsonl_path=path, strict=strict) as s:
        with s.measurement("train_step"), s.span("forward", kind="module", step="forward"):
            s.record_memory("st-a", "a", 512, "alloc", "activation", "cuda:0", shape=[128], dtype="f32", address=ADDRESS)
            s.record_memory("st-b", "b", 512, "alloc", "parameter", "cuda:0", shape=[128], dtype="f32")
            s.record_memory("st-c", "c", 8, "alloc", "other", "cuda:0", shape=[2], dtype="f32", address=(1 << 64) - 1)
            s.record_memory("st-a", "a", 512, "free", "activation", "cuda:0", shape=[128], dtype="f32", address=ADDRESS)


def memory_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if '"kind":"memory"' in line]


def test_address_reaches_the_file_and_strict_leaves_it_out():
    with tempfile.TemporaryDirectory() as d:
        loose, strict = os.path.join(d, "loose.jsonl"), os.path.join(d, "strict.jsonl")
        record(loose, False)
        record(strict, True)
        got = [m.get("wick_address") for m in memory_lines(loose)]
        assert got == ["0x7f3a00000200", None, "0xffffffffffffffff", "0x7f3a00000200"], got
        for m in memory_lines(strict):
            assert not [k for k in m if k.startswith("wick_")], m
        assert len(memory_lines(strict)) == 4
        for path in (loose, strict):
            verdict = wicktest.check_trace(path)
            assert verdict["parse"] == "ok" and verdict["structurally_valid"], (path, verdict)
            assert not wicktest.health_errors(verdict), (path, verdict)


def test_torch_tracker_writes_the_storage_data_ptr():
    """wick.torch's tracker: every memory record of a tracked tensor carries
    its storage's data_ptr() (here host memory: torch 1.13 CPU)."""
    torch = wicktest.require_torch()
    import wick.torch

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.jsonl")
        model = torch.nn.Linear(3, 2)
        a = torch.zeros(4, 5)
        want = {a.data_ptr()} | {p.data_ptr() for p in model.parameters()}
        with wick.Session("tracker", device="cpu", jsonl_path=path) as s:
            inst = wick.torch.instrument(s, model, None)
            assert inst.tracker.track(a, "activation") is not None
            inst.remove()
        got = memory_lines(path)
        assert got and all("wick_address" in m for m in got), got
        addresses = {int(m["wick_address"], 16) for m in got}
        assert want <= addresses, (sorted(want), sorted(addresses))


def test_bad_address_raises():
    with tempfile.TemporaryDirectory() as d:
        with wick.Session("unit.train", jsonl_path=os.path.join(d, "t.jsonl")) as s:
            for bad, exc, text in [(-1, ValueError, "address must be a non-negative int below 2**64"),
                                   (1 << 64, ValueError, "address must be a non-negative int below 2**64"),
                                   ("0x10", TypeError, "address must be an int, not str")]:
                try:
                    s.record_memory("st", "t", 4, "alloc", "other", "cpu", dtype="f32", address=bad)
                except exc as e:
                    assert text in str(e), str(e)
                else:
                    raise AssertionError("address=%r did not raise" % (bad,))


if __name__ == "__main__":
    wicktest.run_tests(globals())
