"""wick.Session and the core API: spans (context manager, decorator), every
record kind, contracts and plans against libwick's digests, wick.Error with
libwick's sentences, type errors naming the argument, calls on a finished
session; the trace read back by the document model when wick-trace is built."""
import os
import tempfile

import wicktest
import wick

GOLDEN = [
    ("parameters", "trunk.weight", "trunk"),
    ("parameters", "frozen.weight", "frozen"),
    ("parameters", "optional.weight", "optional"),
]
GOLDEN_DIGEST = "sha256:d7f0b4aa8a4072b9824018c8d3eff5757286f1348366c15ef8780be38945fcc6"
FAMILIES = [("trunk", "active", 1), ("frozen", "inactive", 0), ("optional", "data_conditional", 1)]


def expect(exc, fn, *args, contains=None, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        if contains is not None:
            assert contains in str(e), "%r does not contain %r" % (str(e), contains)
        return e
    raise AssertionError("%s did not raise %s" % (fn, exc.__name__))


def test_contract_digest_is_libwicks():
    assert wick.manifest_sha256(GOLDEN) == GOLDEN_DIGEST  # tests/backend/core/test-session.c
    contract = wick.GradientContract(GOLDEN, FAMILIES)
    assert contract.digest == GOLDEN_DIGEST
    assert contract.expected == GOLDEN
    assert contract.families == [("trunk", "active", 1), ("frozen", "inactive", 0), ("optional", "data_conditional", 1)]
    e = expect(wick.Error, wick.GradientContract, [], FAMILIES)
    assert str(e) == "gradient manifest must not be empty", str(e)
    expect(TypeError, wick.GradientContract, [("parameters", 3, "trunk")], FAMILIES, contains="expected[0].key")
    expect(ValueError, wick.GradientContract, GOLDEN, [("trunk", "sometimes", 1)], contains="families[0].expectation")


def test_plan_is_libwicks():
    plan = wick.GradientCapturePlan("parameters", ["trunk.weight", "frozen.weight", "optional.weight"], lambda k: k.split(".")[0], FAMILIES)
    assert plan.keys == ["frozen.weight", "optional.weight", "trunk.weight"]  # sorted ascending
    assert plan.contract.expected == sorted(GOLDEN, key=lambda e: e[1])
    assert plan.contract.digest == wick.manifest_sha256(plan.contract.expected)
    assert plan.find_key("trunk.weight") == 2 and plan.find_key("nope") == -1
    e = expect(wick.Error, wick.GradientCapturePlan, "parameters", ["a.w", "a.w"], lambda k: "a", [("a", "active", 1)])
    assert "more than once" in str(e), str(e)
    expect(ZeroDivisionError, wick.GradientCapturePlan, "parameters", ["a.w"], lambda k: 1 / 0, [("a", "active", 1)])
    expect(TypeError, wick.GradientCapturePlan, "parameters", ["a.w"], lambda k: 3, [("a", "active", 1)], contains="assign_family('a.w') must return a str")


def test_bad_input_raises_with_libwicks_sentence():
    e = expect(wick.Error, wick.Session, "x.train", capture_step=0)
    assert str(e) == "run metadata: capture_step must be one-based and greater than zero", str(e)
    e = expect(wick.Error, wick.Session, "x.train", jsonl_path="/nonexistent-dir/t.jsonl")
    assert str(e) == "open trace /nonexistent-dir/t.jsonl: No such file or directory", str(e)
    expect(TypeError, wick.Session, "x.train", capture_step="3")
    expect(ValueError, wick.Session, "x.train", phase="eval", contains="phase must be one of 'train', 'infer', got 'eval'")
    expect(ValueError, wick.Session, "x.train", coverage={"ops": "complete"}, contains="unknown field 'ops'")
    expect(ValueError, wick.Session, "x.train", coverage={"tensors": "all"}, contains="coverage['tensors']")
    expect(TypeError, wick.Session, "x.train", contract="sha256:0", contains="contract must be a wick.GradientContract")


def test_session_records_every_kind():
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "t.jsonl")
    contract = wick.GradientContract([("parameters", "w", "trunk")], [("trunk", "active", 1)])
    with wick.Session("unit.train", capture_step=1, jsonl_path=path, contract=contract, strict=True, coverage={"operations": "partial"}, tags={"who": "test"}) as s:
        assert s.pid == os.getpid() and s.run_id.startswith("run-")
        assert s.current_span() == 1

        @s.span("helper", kind="function")
        def helper(x):
            return x * 2

        with s.measurement("train_step"):
            with s.span("forward", kind="module", step="forward") as fwd:
                assert fwd.id > 1 and s.current_span() == fwd.id
                assert helper(21) == 42
                s.record_op("matmul", inputs=["x", "w"], output="y", shape=[2, 2], dtype="f32", device="cpu", duration_ns=10)
                s.record_tensor("y", [2, 2], "f32", "cpu", "activation", requires_grad=True)
                s.record_memory("st-y", "y", 16, "alloc", "activation", "cpu", shape=[2, 2], dtype="f32")
                s.record_tensor_stats("y", [2, 2], "f32", 4, 0, 1.0, 1.0, 0.5)
                s.record_device_memory("cpu", used_bytes=1 << 20)
                s.record_device_interval("cpu", "stream0", "host", "cpu", 100, 50)
                s.record_data_edge("x", "y")
            with s.span("backward", kind="module", step="backward"):
                s.record_gradient("parameters", "w", "present", 1.5)
            with s.span("optimizer", step="optimizer"):
                s.record_memory("st-y", "y", 16, "free", "activation", "cpu", shape=[2, 2], dtype="f32")
        # libwick's sentences
        e = expect(wick.Error, s.record_device_memory, "cpu")
        assert str(e) == "device-memory checkpoint must contain at least one observation", str(e)
        e = expect(wick.Error, s.record_gradient, "parameters", "w", "present", -1.0)
        expect(TypeError, s.record_tensor, "t", [2, "x"], "f32", "cpu", "parameter", contains="shape[1] must be an int, not str")
        expect(ValueError, s.record_memory, "st", "t", 4, "grow", "other", "cpu", contains="action must be one of 'alloc', 'free'")
        expect(ValueError, s.span, "x", kind="loop", contains="kind must be one of 'function', 'op', 'module', got 'loop'")
        expect(TypeError, s.span, 3, contains="name must be a str, not int")
    # finished and closed: calls raise, saying which call and why
    e = expect(wick.Error, s.mark, "late")
    assert "closed" in str(e), str(e)
    records = wicktest.read_records(path)
    kinds = {r["kind"] for r in records}
    for kind in ("meta", "span_start", "span_end", "op", "tensor", "memory", "tensor_stats", "device_memory", "device_interval", "edge", "gradient", "terminal"):
        assert kind in kinds, "%s missing from %s" % (kind, sorted(kinds))
    assert records[-1]["outcome"] == "complete"
    names = [r["name"] for r in records if r["kind"] == "span_start"]
    assert names.count("helper") == 1 and "train_step" in names
    if wicktest.WICK_TRACE:
        verdict = wicktest.check_trace(path)
        assert verdict["parse"] == "ok" and not wicktest.health_errors(verdict), verdict
        assert verdict["gradient_coverage"] == "complete", verdict


def test_exception_finishes_failed():
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "t.jsonl")
    try:
        with wick.Session("unit.train", jsonl_path=path) as s:
            s.mark("before the failure")
            with s.span("work"):
                raise KeyError("batch 7")
    except KeyError:
        pass
    records = wicktest.read_records(path)
    assert records[-1]["kind"] == "terminal" and records[-1]["outcome"] == "failed", records[-1]
    assert "KeyError" in records[-1]["reason"] and "batch 7" in records[-1]["reason"], records[-1]
    assert any(r["kind"] == "span_start" and r["name"] == "work" for r in records)
    assert any(r["kind"] == "wick_mark" and r["label"] == "before the failure" for r in wicktest.wick_records(path))


def test_finished_session_refuses_and_keeps_what_was_recorded():
    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "t.jsonl")
    s = wick.Session("unit.train", jsonl_path=path)
    with s.span("kept"):
        pass
    s.finish()
    e = expect(wick.Error, s.mark, "late")
    assert str(e) == "mark: the session 'unit.train' is finished; nothing more can be recorded", str(e)
    expect(wick.Error, s.span("late").__enter__, contains="finished")
    s.close()
    records = wicktest.read_records(path)
    assert any(r["kind"] == "span_start" and r["name"] == "kept" for r in records)


def test_span_names_cached_by_object():
    """Span names go through the session's cache of interned names (keyed by
    the str object): 300 names made at run time (distinct objects, colliding
    slots), each used by span(), a reused Span and span_begin, twice, record
    their own names; equal strings in new objects too; a NUL and a non-str
    still raise; a second session interns its names anew."""
    tmp = tempfile.mkdtemp()
    for round_ in range(2):
        path = os.path.join(tmp, "names%d.jsonl" % round_)
        want = []
        with wick.Session("unit.names", jsonl_path=path) as s:
            names = ["n%d.%d" % (round_, i) for i in range(300)]
            for _ in range(2):
                for i, name in enumerate(names):
                    with s.span(name):
                        pass
                    want.append(name)
                    copy = "".join(list(name))  # equal, another object
                    with s.span(copy):
                        pass
                    want.append(name)
                    if i % 7 == 0:
                        reused = s.span(name)
                        with reused:
                            pass
                        with reused:
                            pass
                        want += [name, name]
                    sid = s._s.span_begin(name, 1, 0)
                    s._s.span_end(sid)
                    want.append(name)
            expect(ValueError, s.span, "a\0b", contains="must not contain NUL")
            expect(ValueError, s._s.span_begin, "a\0b", 1, 0, contains="must not contain NUL")
            expect(TypeError, s._s.span_begin, 3, 1, 0, contains="name must be a str, not int")
        e = expect(wick.Error, lambda: s.span(names[0]).__enter__())
        assert "closed" in str(e) or "finished" in str(e), str(e)
        got = [r["name"] for r in wicktest.read_records(path)
               if r["kind"] == "span_start" and r["name"] != "unit.names"]  # the root
        assert got == want, (len(got), len(want), [(a, b) for a, b in zip(got, want) if a != b][:5])


def test_spans_find_their_session_and_thread():
    """Spans from Python go through each thread's handle in the session it
    last used: sessions used in turn on one thread, nested across each
    other, record every span in their own file with their own parents;
    sessions closed and opened again (a new one may take a closed one's
    address) record all of theirs; threads each record theirs, a thread
    that is started after others have ended included."""
    import threading

    tmp = tempfile.mkdtemp()
    pa, pb = os.path.join(tmp, "a.jsonl"), os.path.join(tmp, "b.jsonl")
    with wick.Session("unit.a", jsonl_path=pa) as a, wick.Session("unit.b", jsonl_path=pb) as b:
        for i in range(50):
            with a.span("a1"):
                with b.span("b1"):
                    with a.span("a2"):
                        sid = b._s.span_begin("b2", 1, 0)
                        assert b._s.span_end(sid) is True
    for path, root, outer, inner in ((pa, "unit.a", "a1", "a2"), (pb, "unit.b", "b1", "b2")):
        records = wicktest.read_records(path)
        starts = {r["id"]: r for r in records if r["kind"] == "span_start"}
        ends = {r["id"] for r in records if r["kind"] == "span_end"}
        got = [r for r in starts.values() if r["name"] in (outer, inner)]
        assert len(got) == 100 and all(r["id"] in ends for r in got), (path, len(got))
        for r in got:
            parent = starts.get(r.get("parent_id"))
            want = outer if r["name"] == inner else root
            assert parent is not None and parent["name"] == want, (path, r, parent)
    for round_ in range(20):
        path = os.path.join(tmp, "r%d.jsonl" % round_)
        with wick.Session("unit.r%d" % round_, jsonl_path=path) as s:
            for _ in range(30):
                with s.span("work"):
                    sid = s._s.span_begin("inner", 1, 0)
                    s._s.span_end(sid)
        records = wicktest.read_records(path)
        assert sum(1 for r in records if r["kind"] == "span_end") >= 60, (round_, len(records))
    path = os.path.join(tmp, "threads.jsonl")
    with wick.Session("unit.threads", jsonl_path=path) as s:
        def work(name):
            for _ in range(200):
                with s.span(name):
                    pass
        for wave in range(3):
            threads = [threading.Thread(target=work, args=("t%d.%d" % (wave, i),)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        work("main")
        assert s.dropped == 0
    records = wicktest.read_records(path)
    ended = {r["id"] for r in records if r["kind"] == "span_end"}
    names = {}
    for r in records:
        if r["kind"] == "span_start" and r["id"] in ended:
            names[r["name"]] = names.get(r["name"], 0) + 1
    assert all(names.get("t%d.%d" % (w, i)) == 200 for w in range(3) for i in range(4)), names
    assert names.get("main") == 200, names


def test_span_methods_are_methods():
    """A Span's __enter__ and __exit__ behave as bound methods (a `with`
    statement, a method kept after its span is dropped, contextlib.ExitStack's
    unbound calls, nesting deeper than any object pool) and record their spans
    with their parents; wrong calls raise TypeError naming the method."""
    import contextlib
    import gc

    tmp = tempfile.mkdtemp()
    path = os.path.join(tmp, "methods.jsonl")
    with wick.Session("unit.methods", jsonl_path=path) as s:
        with s.span("with") as got:
            assert got.name == "with" and got.id > 1
        enter = s.span("kept").__enter__  # the span itself is dropped here
        gc.collect()
        assert enter.__self__.name == "kept"
        kept = enter()
        assert kept.name == "kept" and kept.id > 1
        leave = kept.__exit__
        del kept, enter
        gc.collect()
        assert leave(None, None, None) is False
        with contextlib.ExitStack() as stack:
            outer = stack.enter_context(s.span("stack.outer"))
            stack.enter_context(s.span("stack.inner"))
            assert s.current_span() != outer.id  # the inner one is innermost
        span = wick.Span.__enter__(s.span("unbound"))
        assert wick.Span.__exit__(span, None, None, None) is False

        def nest(depth):
            if depth:
                with s.span("deep%d" % depth):
                    nest(depth - 1)
        nest(60)
        expect(TypeError, s.span("x").__enter__, 1, contains="Span.__enter__() takes no arguments")
        expect(TypeError, lambda: s.span("x").__exit__(tb=None), contains="Span.__exit__() takes no keyword")
        expect(TypeError, wick.Span.__enter__, 3, contains="doesn't apply to a 'int' object")
        expect(TypeError, wick.Span.__dict__["__exit__"].__get__, 3, contains="doesn't apply to a 'int'")
        expect(wick.Error, s.span("x").__exit__, None, None, None, contains="left without being entered")
    records = wicktest.read_records(path)
    starts = {r["id"]: r for r in records if r["kind"] == "span_start"}
    ended = {r["id"] for r in records if r["kind"] == "span_end"}
    names = {r["name"]: r for r in starts.values()}
    for name in ["with", "kept", "stack.outer", "stack.inner", "unbound"] + ["deep%d" % d for d in range(1, 61)]:
        assert name in names and names[name]["id"] in ended, name
    assert starts[names["stack.inner"]["parent_id"]]["name"] == "stack.outer"
    for d in range(1, 60):
        assert starts[names["deep%d" % d]["parent_id"]]["name"] == "deep%d" % (d + 1), d


def test_span_cost():
    import time

    with wick.Session("unit.bench", policy="overwrite") as s:
        n = 100000
        t0 = time.perf_counter()
        for _ in range(n):
            with s.span("hot"):
                pass
        per = (time.perf_counter() - t0) / n * 1e9
        print("span begin+end from Python: %.0f ns (a new span object each time)" % per)
        # loose bound for a shared CI machine; docs/performance.md has the figure
        assert per < 20000, per


if __name__ == "__main__":
    wicktest.run_tests(globals())
