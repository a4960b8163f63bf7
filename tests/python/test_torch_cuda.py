"""CUDA tests (the GPU machine; skipped elsewhere): a module allocated in
wick.torch.weights_pool keeps its addresses through evict/restore, and a
stage captured over it replays correctly afterwards; a stage is accepted by
libwick's gates and a graph-unsafe one refused with the sentence; a capture
asked from another thread (as the control socket asks) is taken by the host
at its next stage call."""
import threading
import time

import wicktest

torch = wicktest.require_torch()
import wick  # noqa: E402
import wick.torch  # noqa: E402

ok, why = wick.cuda_available()
if not torch.cuda.is_available():
    wicktest.skip("torch %s sees no CUDA device" % torch.__version__)
if not ok:
    wicktest.skip("libwick cannot capture: %s" % why)

DEV = torch.device("cuda")


def make_model(session, pooled):
    torch.manual_seed(0)
    if pooled:
        with wick.torch.weights_pool(session):
            return torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 512)).to(DEV)
    return torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU(), torch.nn.Linear(512, 512)).to(DEV)


def check_pointer_stable(pooled):
    with wick.Session("cuda.infer", phase="infer", device="cuda") as s:
        model = make_model(s, pooled)
        reg = wick.torch.register_module(s, "mlp", model)
        print("registered %s: copied into libwick memory: %s" % ("pooled" if pooled else "plain", reg.copied))
        if pooled:
            assert not reg.copied, "pooled parameters were copied instead of registered in place"
        x = torch.randn(64, 512, device=DEV)

        def fn():
            h = x
            for _ in range(8):
                h = model(h) * 0.5
            return h

        stage = wick.torch.register_stage(s, "mlp8", fn, windows={"x": x}, uses=[reg], min_speedup=1.0)
        with torch.no_grad():
            cert = stage.capture()
        print("capture:", cert["verdict"], cert["reason"])
        assert cert["accepted"], cert
        with torch.no_grad():
            expected = fn().clone()
            replayed = stage().clone()
        assert torch.equal(replayed, expected) or torch.allclose(replayed, expected, atol=1e-5), (replayed - expected).abs().max()
        ptrs = [p.data_ptr() for p in model.parameters()]
        before = [p.detach().clone() for p in model.parameters()]
        stats = reg.evict()
        print("evict:", {k: stats[k] for k in ("freed_bytes", "disk", "ram", "evict_seconds")})
        assert stats["freed_bytes"] > 0, stats
        stats = reg.restore()
        print("restore:", {k: stats[k] for k in ("restored_bytes", "restore_seconds")})
        assert [p.data_ptr() for p in model.parameters()] == ptrs, "restore moved a parameter"
        for a, b in zip(before, model.parameters()):
            assert torch.equal(a, b), "restore is not bit-exact"
        assert stage.state == "captured"
        with torch.no_grad():
            after = stage().clone()
        torch.cuda.synchronize()
        assert torch.equal(after, replayed), "the graph replays differently after evict/restore"
        print("graph replay after evict/restore: identical (%d replays)" % stage.replays)


def test_pooled_pointer_stable_restore_with_graph():
    if wick.torch.torch_version() < (2, 5):
        print("not run: weights_pool needs torch >= 2.5; this is %s" % torch.__version__)
        return
    check_pointer_stable(True)


def test_copied_pointer_stable_restore_with_graph():
    check_pointer_stable(False)


def test_instrumented_stage_certificate():
    """A stage captured from a wick.torch.instrument()ed model: the speedup
    gate's eager rounds run with Wick's recording suspended, the certificate
    says so and keeps the instrumented eager time beside the plain one,
    kernel_nodes counts the captured graph's kernel nodes (16 Linear+GELU
    layers launch at least 32 kernels), and the certification record in the
    trace carries the same."""
    import os
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), "instrumented.jsonl")
    with wick.Session("cuda.instrumented", phase="infer", device="cuda", jsonl_path=path) as s:
        torch.manual_seed(0)
        layers = []
        for _ in range(16):
            layers += [torch.nn.Linear(256, 256), torch.nn.GELU()]
        model = torch.nn.Sequential(*layers).to(DEV)
        inst = wick.torch.instrument(s, model)
        x = torch.randn(32, 256, device=DEV)

        def fn():
            return model(x)

        with torch.no_grad():
            with inst.step():
                fn()  # a recorded step before the capture: the hooks are live
            stage = wick.torch.register_stage(s, "instrumented_mlp", fn, windows={"x": x}, min_speedup=1.0)
            cert = stage.capture()
        print("instrumented capture: %s, %s; eager %.4f ms suspended, %s ms instrumented, replay %.4f ms, "
              "speedup %.2fx, kernel_nodes %s"
              % (cert["verdict"], cert["eager_recording"], cert["eager_ms"], cert["eager_instrumented_ms"],
                 cert["replay_ms"], cert["speedup_median"], cert["kernel_nodes"]))
        assert cert["accepted"], cert
        assert cert["eager_recording"] == "suspended", cert
        assert isinstance(cert["eager_instrumented_ms"], float) and cert["eager_instrumented_ms"] > 0, cert
        assert cert["kernel_nodes"] >= 32, cert
        # the hooks are back after the capture: the next step records module spans
        with torch.no_grad():
            with inst.step():
                fn()
        stage.release()
        inst.remove()
    records = wicktest.read_records(path)
    text = open(path).read()
    certs = [line for line in text.splitlines() if '"eager_recording"' in line and "instrumented_mlp" in line]
    assert '"eager_recording":"suspended"' in text, text[-3000:]
    assert '"kernel_nodes":%d' % cert["kernel_nodes"] in text, text[-3000:]
    spans = [r.get("name") for r in records if r.get("kind") == "span_start"]
    # fn() ran about 287 times: 2 steps, 3 warm-ups, the capture, the
    # reference, and 7 rounds of 20 eager calls each suspended, instrumented
    # and timed. The instrumented rounds record the model's spans (one "0",
    # the first Linear, a call); the suspended ones must not (with them about
    # 287).
    firsts = spans.count("0")
    print("spans of layer 0 in the trace: %d" % firsts)
    assert 140 <= firsts < 200, firsts
    print("certification record in the trace: %d line(s) name the stage" % len(certs))


def test_z_graph_unsafe_stage_refused():
    # last: after a failed capture this torch may keep its CUDA generator in
    # capture mode ("Offset increment outside graph capture"), so nothing
    # random may follow it in the process
    with wick.Session("cuda.infer", phase="infer", device="cuda") as s:
        x = torch.randn(1024, device=DEV)

        def unsafe():
            if x.sum().item() > 1e9:  # a host sync on a device value: not capturable
                return x * 3
            return x * 2

        stage = wick.torch.register_stage(s, "unsafe", unsafe, windows={"x": x})
        cert = stage.capture()
        print("graph-unsafe capture:", cert["verdict"], cert["reason"])
        assert not cert["accepted"] and "torch.cuda.graph failed" in cert["reason"], cert
        assert stage.state == "refused"
        assert torch.equal(stage(), x * 2)  # eager still works


def test_capture_requested_from_another_thread():
    with wick.Session("cuda.infer", phase="infer", device="cuda") as s:
        a = torch.randn(256, 256, device=DEV)
        x = torch.randn(256, 256, device=DEV)

        def fn():
            h = x
            for _ in range(16):
                h = torch.tanh(h @ a)
            return h

        stage = wick.torch.register_stage(s, "tanh16", fn, windows={"x": x}, min_speedup=1.0)
        result = {}
        t = threading.Thread(target=lambda: result.update(stage._raw.capture(None)))
        t.start()
        deadline = time.time() + 60
        while t.is_alive() and time.time() < deadline:
            stage()  # the host's calls: the request is taken here
            time.sleep(0.001)
        t.join(5)
        print("capture asked from another thread:", result.get("verdict"), result.get("reason"))
        assert result and result["accepted"], result
        assert stage.state == "captured"
        stage.write("x", torch.ones(256, 256, device=DEV))
        with torch.no_grad():
            assert torch.allclose(stage(), fn(), atol=1e-5)
        stage.release()
        assert stage.state == "eager" and stage.graph is None


if __name__ == "__main__":
    import os
    import sys

    wicktest.run_tests(globals())
    sys.stdout.flush()
    # torch 2.11 aborts in MemPool's destructor at interpreter exit after the
    # failed capture of test_z_graph_unsafe_stage_refused (its allocator keeps
    # the capture as underway): every test has passed by now, so leave without
    # torch's finalizers. docs/python.md notes it.
    os._exit(0)
