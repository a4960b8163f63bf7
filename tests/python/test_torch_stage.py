"""wick.torch.register_stage on the CPU: eager calls, capture refused with
the CUDA sentence (asked on this thread and from another one, as the control
socket does), window writes checked as libwick checks them."""
import os
import tempfile
import threading

import wicktest

torch = wicktest.require_torch()
import wick  # noqa: E402
import wick.torch  # noqa: E402


def test_capture_refused_on_cpu():
    ok, why = wick.cuda_available()
    if ok and torch.cuda.is_available():
        wicktest.skip_test("CUDA is available here; test_torch_cuda covers capture")
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    x = torch.randn(8, 16)
    lin = torch.nn.Linear(16, 16)
    with wick.Session("stage.infer", phase="infer", jsonl_path=path) as s:
        stage = wick.torch.register_stage(s, "lin", lambda: torch.relu(lin(x)), windows={"x": x})
        assert stage.state == "eager"
        assert torch.equal(stage(), torch.relu(lin(x)))
        cert = stage.capture()
        assert not cert["accepted"] and cert["verdict"] == "refused", cert
        assert "CUDA" in cert["reason"], cert["reason"]
        if not ok:
            assert cert["reason"] == why, (cert["reason"], why)
        assert stage.state == "refused"
        assert torch.equal(stage(), torch.relu(lin(x)))  # stays eager
        # from another thread, as `wick-trace control PID capture lin` asks
        result = {}
        t = threading.Thread(target=lambda: result.update(stage._raw.capture(None)))
        t.start()
        t.join(30)
        assert not t.is_alive() and not result["accepted"] and "CUDA" in result["reason"], result
        # windows
        stage.write("x", torch.ones(8, 16))
        assert torch.equal(x, torch.ones(8, 16))
        for bad, words in (
            (torch.ones(8, 16, dtype=torch.float64), "refused a dtype mismatch: expected f32 [8, 16]"),
            (torch.ones(4, 16), "refused a shape mismatch: expected f32 [8, 16]"),
        ):
            try:
                stage.write("x", bad)
                raise AssertionError("write accepted %s" % words)
            except wick.Error as e:
                assert words in str(e), str(e)
        try:
            stage.write("y", x)
            raise AssertionError("unknown window accepted")
        except wick.Error as e:
            assert str(e) == "stage 'lin' has no window 'y'; its windows are x", str(e)
        try:
            wick.torch.register_stage(s, "lin", lambda: x)
            raise AssertionError("duplicate stage accepted")
        except wick.Error as e:
            assert str(e) == "stage 'lin' is already registered on this session", str(e)
    certs = [r for r in wicktest.wick_records(path) if r["kind"] == "wick_stage_certification"]
    assert len(certs) == 2 and all(c["verdict"] == "refused" for c in certs), certs



def test_direct_capture_span_in_progress():
    """Stage.capture() called directly: the capture's span begins
    when the capture does (its span_start, with the wick_stage_capture keys,
    is written then, so a reader sees the capture in progress) and ends with
    the certificate on its span_end: a span opened while the capture runs
    lies inside the capture's span, as its child."""
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    x = torch.randn(8, 16)
    with wick.Session("stage.infer", phase="infer", jsonl_path=path) as s:
        stage = wick.torch.register_stage(s, "lin", lambda: torch.relu(x), windows={"x": x})
        inner = stage._capture

        def watched(options):
            with s.span("during the capture"):
                pass
            return inner(options)

        stage._capture = watched
        for _ in range(2):
            cert = stage.capture(warmup=2)
            assert cert["verdict"] in ("refused", "accepted"), cert
    records = wicktest.read_records(path)
    starts = [r for r in records if r["kind"] == "span_start" and r.get("name") == "stage capture: lin"]
    during = [r for r in records if r["kind"] == "span_start" and r.get("name") == "during the capture"]
    assert len(starts) == 2 and len(during) == 2, (starts, during)
    ends = {r["id"]: r for r in records if r["kind"] == "span_end"}
    for start, inside in zip(starts, during):
        keys = [w for w in start.get("wick_records", []) if w.get("kind") == "wick_stage_capture"]
        assert len(keys) == 1 and keys[0]["stage"] == "lin" and keys[0]["warmup"] == 2, start
        assert inside.get("parent_id") == start["id"], (start, inside)
        assert start["start_ns"] <= inside["start_ns"], (start, inside)
        end = ends[start["id"]]
        assert (start["start_ns"] + end["duration_ns"]
                >= inside["start_ns"] + ends[inside["id"]]["duration_ns"]), (start, end, inside)
        certs = [w for w in end.get("wick_records", []) if w.get("kind") == "wick_stage_certification"]
        assert len(certs) == 1 and certs[0]["stage"] == "lin", end
    wicktest.check_trace(path)


def test_cpu_tensors_refused_where_cuda_is():
    """On a CUDA machine a stage over CPU tensors was accepted: torch.cuda.graph
    recorded an empty graph, whose replay returned the capture's output
    (143x, kernel_nodes 0 on the H200). Here CUDA is made to look available,
    so the refusal must come from the tensors' device, before any CUDA call."""
    from wick import _torch_stage

    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    x = torch.randn(8, 16)
    saved = _torch_stage._no_cuda_sentence
    _torch_stage._no_cuda_sentence = lambda: None
    try:
        with wick.Session("stage.cpu", phase="infer", jsonl_path=path) as s:
            stage = wick.torch.register_stage(s, "double", lambda: x * 2, windows={"x": x})
            cert = stage.capture()
            assert not cert["accepted"] and cert["verdict"] == "refused", cert
            expected = ("stage 'double' computes on tensors off the GPU (the output on cpu, window 'x' on cpu): "
                        "a CUDA graph records only CUDA work, so its replay would compute nothing; "
                        "capture needs CUDA tensors")
            assert cert["reason"] == expected, cert["reason"]
            assert stage.state == "refused" and torch.equal(stage(), x * 2)
    finally:
        _torch_stage._no_cuda_sentence = saved


def test_suspended_instrumentation_records_nothing():
    """Instrumentation.suspended() is what a stage's speedup gate times its
    eager rounds in: the model runs as if not instrumented (no module spans,
    no tensors), and afterwards every hook is back, in its place beside the
    user's own hooks."""
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    calls = []
    model[0].register_forward_hook(lambda m, i, o: calls.append("user"))
    x = torch.randn(4, 8)
    with wick.Session("suspend.train", jsonl_path=path) as s:
        inst = wick.torch.instrument(s, model)
        order_before = [list(m._forward_hooks.values()) for m in model.modules()]
        with inst.step():
            model(x).sum().backward()
        with inst.suspended():
            for m in model.modules():
                assert all(getattr(h, "__self__", None) is not inst for h in m._forward_hooks.values())
                assert all(getattr(h, "__self__", None) is not inst for h in m._forward_pre_hooks.values())
            with torch.no_grad():
                model(x)
            assert calls[-1] == "user"  # the user's hook still runs
        assert [list(m._forward_hooks.values()) for m in model.modules()] == order_before
        with inst.step():
            model(x).sum().backward()
    names = [r["name"] for r in wicktest.read_records(path) if r["kind"] == "span_start"]
    # two steps' module spans and nothing from the suspended forward
    assert names.count("0") == 2 and names.count("forward") == 2, names
    assert names.count("train_step") == 2, names
    assert len(calls) == 3, calls


def test_eager_timing_note_on_the_certificate():
    """A host stage's certificate says how its eager rounds were timed
    (wick_stage_note_eager_timing), libwick's judge unchanged: checked here
    through the raw stage with figures, as the capture path hands them."""
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    x = torch.randn(8)
    with wick.Session("note.infer", phase="infer", jsonl_path=path) as s:
        stage = wick.torch.register_stage(s, "double", lambda: x * 2, windows={"x": x})
        figures = {"dot": 4.0, "out_squared": 4.0, "ref_squared": 4.0, "max_abs": 0.0, "p99_abs": 0.0,
                   "eager_ms": [2.0, 2.0, 2.0], "replay_ms": [1.0, 1.0, 1.0], "kernel_nodes": 5}
        stage._raw.note_eager_timing(True, [6.0, 4.0, 5.0])
        cert = stage._raw.complete_capture(figures=figures)
        assert cert["accepted"], cert
        assert cert["eager_recording"] == "suspended" and cert["eager_instrumented_ms"] == 5.0, cert
        assert cert["eager_ms"] == 2.0 and cert["kernel_nodes"] == 5, cert
        cert = stage._raw.complete_capture(figures=figures)
        assert cert["eager_recording"] == "active" and cert["eager_instrumented_ms"] is None, cert
        try:
            stage._raw.note_eager_timing(True, ["slow"])
        except TypeError as e:
            assert "instrumented_ms[i] must be a float" in str(e), e
        else:
            raise AssertionError("a non-number was taken")
        stage.release()
    text = open(path).read()
    assert '"eager_recording":"suspended","eager_instrumented_ms":5' in text, text[-2000:]

if __name__ == "__main__":
    wicktest.run_tests(globals())
