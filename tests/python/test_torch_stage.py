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
        wicktest.skip("CUDA is available here; test_torch_cuda covers capture")
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
    certs = [r for r in wicktest.read_records(path) if r["kind"] == "wick_stage_certification"]
    assert len(certs) == 2 and all(c["verdict"] == "refused" for c in certs), certs


if __name__ == "__main__":
    wicktest.run_tests(globals())
