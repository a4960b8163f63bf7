"""wick.torch's tracker (C, wick._wick._Tracker) records exactly what its
specification says, on a deterministic workload: the GPT of
tests/bench/python/bench-torch-gpt.py (small), AdamW, a few instrumented steps,
then the corner cases (views, a labelled re-track, zero bytes, non-tensors,
lists, forget, frees at collection, teardown). The specification is
ReferenceTracker below, in plain Python over the session's public record
calls: the same workload runs once with each, and every tensor and memory
record must be the same (kind, action, category, ids, bytes, shape, dtype,
device, requires_grad, dense bytes, span, address up to renaming), in the same
order; per category the counts and bytes are printed and compared too.
test_comparison_fails_on_a_difference shows the comparison is not vacuous."""
import ast
import collections
import gc
import importlib.util
import os
import tempfile
import weakref

import wicktest

torch = wicktest.require_torch()
import torch.nn.functional as F  # noqa: E402

import wick  # noqa: E402
import wick.torch  # noqa: E402


class ReferenceTracker:
    """The tracker's contract, tensor by tensor: a storage (keyed by its
    data pointer) gets one tensor record and one alloc the first time a tensor
    on it is seen, its free when that tensor object is collected; a labelled
    tensor on a storage seen before gets a tensor record only; no storage, a
    null pointer or no bytes: nothing."""

    def __init__(self, raw):
        self.raw = raw
        self.table = {}  # data pointer -> entry, in insertion order
        self.counter = 0
        self.errors = 0

    @property
    def live(self):
        return len(self.table)

    def _storage_pointer(self, t):
        try:
            storage = getattr(t, wick.torch._STORAGE_METHOD)()
            return storage, storage.data_ptr()
        except (RuntimeError, NotImplementedError):
            return None, 0

    def track(self, t, category, label=None, span=None):
        if not isinstance(t, torch.Tensor):
            return None
        storage, address = self._storage_pointer(t)
        if address == 0:
            return None
        seen = self.table.get(address)
        if seen is not None and label is None:
            return seen["sid"]
        nbytes = storage.nbytes()
        del storage
        if nbytes == 0:
            return None
        shape = list(t.shape)
        dtype = wick.torch.dtype_name(t.dtype)
        device = wick.torch.device_name(t.device)
        requires_grad = bool(t.requires_grad)
        entry = seen
        if entry is None:
            self.counter += 1
            sid = "st%d" % self.counter
            entry = {"sid": sid, "tid": label if label is not None else sid, "device": device, "dtype": dtype,
                     "bytes": nbytes, "address": address, "category": category, "shape": shape, "ref": None}
            self.table[address] = entry
        try:
            self.raw.record_tensor(label if label is not None else entry["tid"], shape, dtype, device, category,
                                   label=label, requires_grad=requires_grad, span=span)
            if seen is None:
                self._memory(entry, "alloc", span)
        except wick.Error:
            self.errors += 1
        if seen is None:
            entry["ref"] = weakref.ref(t, lambda ref, entry=entry: self._collected(entry))
        return entry["sid"]

    def _memory(self, entry, action, span=None):
        try:
            self.raw.record_memory(entry["sid"], entry["tid"], entry["bytes"], action, entry["category"],
                                   entry["device"], span=span, shape=entry["shape"], dtype=entry["dtype"],
                                   address=entry["address"])
        except wick.Error:
            self.errors += 1

    def _collected(self, entry):
        if self.table.get(entry["address"]) is entry:
            del self.table[entry["address"]]
            if not self.raw.closed and not self.raw.finished:
                self._memory(entry, "free")

    def track_all(self, objects, category, span):
        for t in objects if isinstance(objects, (tuple, list)) else (objects,):
            self.track(t, category, None, span)

    def track_gradients(self, pairs, span):
        for label, p in pairs:
            if p.grad is not None:
                self.track(p.grad, "gradient", label, span)

    def forget(self, tensors):
        freed, entries = set(), []
        for t in tensors:
            _, address = self._storage_pointer(t)
            entry = self.table.pop(address, None) if address else None
            if entry is not None:
                entries.append(entry)
                freed.add(id(t))
        for entry in entries:
            entry["ref"] = None
            self._memory(entry, "free")
        return freed

    def free_all(self):
        table, self.table = self.table, {}
        for entry in table.values():
            entry["ref"] = None
        for entry in table.values():
            self._memory(entry, "free")


def load_gpt():
    spec = importlib.util.spec_from_file_location(
        "bench_torch_gpt", os.path.join(wicktest.SOURCE, "tests", "bench", "python", "bench-torch-gpt.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.GPT


def workload(path, reference):
    """The same program whichever tracker records it; the trace at path."""
    saved = wick.torch._tracker
    if reference:
        wick.torch._tracker = ReferenceTracker
    try:
        torch.manual_seed(0)
        vocab, seq = 64, 8
        model = load_gpt()(vocab, 16, 2, 2, seq)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        data = torch.randint(0, vocab, (2, 2, seq + 1))
        plan = wick.torch.gradient_plan(model)
        with wick.Session("tracker.records", contract=plan, capture_step=2, device="cpu", jsonl_path=path) as s:
            inst = wick.torch.instrument(s, model, opt)
            for i in range(3):
                with inst.step():
                    batch = data[i % 2]
                    logits = model(batch[:, :-1])
                    loss = F.cross_entropy(logits.reshape(-1, vocab), batch[:, 1:].reshape(-1))
                    loss.backward()
                    opt.step()
                    opt.zero_grad(set_to_none=True)
            tracker = inst.tracker
            with s.span("corners"):
                a = torch.zeros(4, 5)
                assert tracker.track(a, "activation") == tracker.track(a[1:], "activation")
                tracker.track(a.view(20), "activation", None, None)
                tracker.track(a, "activation", "labelled")
                assert tracker.track(torch.zeros(0), "activation") is None
                assert tracker.track(3, "activation") is None
                c = torch.ones(2, dtype=torch.float64)
                tracker.track_all((a, 1, c), "other", None)
                b = torch.ones(6, dtype=torch.int64)
                tracker.track_all([b, a[0]], "activation", None)
                tracker.track(torch.ones(3, dtype=torch.bfloat16), "other", "made and dropped")
                del a
                gc.collect()
                assert len(tracker.forget([b, torch.ones(1)])) == 1
                del c
                gc.collect()
                kept = [torch.full((i + 1,), float(i)) for i in range(5)]
                tracker.track_all(kept, "activation", None)
                del kept[1:3]
                gc.collect()
            inst.remove()  # the teardown frees what is left
            assert tracker.live == 0 and tracker.errors == 0, (tracker.live, tracker.errors)
    finally:
        wick.torch._tracker = saved


def normalized(path):
    """The tensor and memory records, with the span named (its name and its
    parent's) and the address checked, not compared (the allocator's choice):
    not 0, and each record of a storage with the address of its alloc."""
    records = wicktest.read_records(path)
    spans = {r["id"]: r for r in records if r["kind"] == "span_start"}

    def span_name(r):
        span = spans.get(r.get("span_id"))
        if span is None:
            return None
        parent = spans.get(span.get("parent_id"))
        return (span["name"], parent["name"] if parent else None)

    addresses = {}
    out = []
    for r in records:
        if r["kind"] not in ("tensor", "memory"):
            continue
        if r.get("category") == "parameter" and r["kind"] == "memory" and not r["storage_id"].startswith("st"):
            continue  # the weight store's, not the tracker's
        fields = {k: v for k, v in r.items() if k not in ("timestamp_ns", "span_id", "wick_address")}
        fields["span"] = span_name(r)
        if r["kind"] == "memory":
            address = int(r.get("wick_address", "0"), 16)
            first = addresses.setdefault(r["storage_id"], address)
            fields["address"] = "its alloc's" if address == first and address != 0 else hex(address)
        out.append(tuple(sorted((k, repr(v)) for k, v in fields.items())))
    return out


def summary(records):
    """(kind, action, category) -> [count, bytes]."""
    totals = collections.defaultdict(lambda: [0, 0])
    for record in records:
        r = dict(record)
        key = tuple(ast.literal_eval(r[k]) if k in r else "" for k in ("kind", "action", "category"))
        totals[key][0] += 1
        totals[key][1] += int(r.get("bytes", r.get("dense_bytes", "0")))
    return dict(totals)


def differences(got, want):
    """What differs between two normalized record lists (empty: the same)."""
    out = []
    if summary(got) != summary(want):
        out.append("per category (count, bytes): %r against %r" % (summary(got), summary(want)))
    if len(got) != len(want):
        out.append("%d records against %d" % (len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            out.append("record %d: %r against %r" % (i, dict(g), dict(w)))
            break
    return out


def traces():
    d = tempfile.mkdtemp()
    c_path, reference_path = os.path.join(d, "c.jsonl"), os.path.join(d, "reference.jsonl")
    workload(c_path, reference=False)
    workload(reference_path, reference=True)
    return normalized(c_path), normalized(reference_path)


_TRACES = []


def cached_traces():
    if not _TRACES:
        _TRACES.extend(traces())
    return _TRACES


def test_records_equal_the_reference():
    got, want = cached_traces()
    for key, (n, total) in sorted(summary(want).items(), key=repr):
        print("# %-6s %-5s %-10s %4d records %9d bytes" % (key + (n, total)))
    assert len(want) > 300, len(want)
    categories = {dict(r)["category"] for r in want}
    assert {"'activation'", "'gradient'", "'optimizer'", "'other'", "'parameter'"} <= categories, categories
    problems = differences(got, want)
    assert not problems, "\n".join(problems)


def test_comparison_fails_on_a_difference():
    _, want = cached_traces()
    frees = [i for i, r in enumerate(want) if ("action", "'free'") in r]
    assert frees
    dropped = want[: frees[-1]] + want[frees[-1] + 1:]
    assert differences(dropped, want), "a missing free went unnoticed"
    moved = list(want)
    r = dict(moved[frees[0]])
    r["category"] = "'other'" if r["category"] != "'other'" else "'activation'"
    moved[frees[0]] = tuple(sorted(r.items()))
    assert differences(moved, want), "a free in another category went unnoticed"
    swapped = list(want)
    swapped[frees[0]], swapped[frees[0] - 1] = swapped[frees[0] - 1], swapped[frees[0]]
    assert swapped == want or differences(swapped, want), "a reordering went unnoticed"


if __name__ == "__main__":
    wicktest.run_tests(globals())
