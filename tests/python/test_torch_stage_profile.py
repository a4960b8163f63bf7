"""A Wick stage's replays under the torch profiler (the GPU machine; skipped
elsewhere): a stage captured with wick.torch is replayed while
torch.profiler records CUDA activity; the exported trace, read by
`wick-trace gpu --json`, has the stage's graph with its replays, and every
kernel of every replay is attributed to the stage ("stages": its kernels
by name), as tests/model/gpu-reference.py computes from the file's own
events with json.load. docs/gpu.md ("graphs", "stages") defines the figures.

Run on the H200 by tools/device/run-python-cuda.sh torch_stage_profile."""
import importlib.util
import json
import os
import subprocess
import tempfile

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
REPLAYS = 5


def reference_module():
    path = os.path.join(os.environ.get("WICK_SOURCE_DIR", "."), "tests", "model", "gpu-reference.py")
    spec = importlib.util.spec_from_file_location("gpu_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stage_replays_attributed_in_profile():
    wick_trace = wicktest.require_wick_trace()
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256)).to(DEV)
    x = torch.randn(32, 256, device=DEV)
    with tempfile.TemporaryDirectory() as tmp:
        with wick.Session("stage.profile", phase="infer", device="cuda",
                          jsonl_path=os.path.join(tmp, "run.jsonl")) as s:

            def fn():
                h = x
                for _ in range(4):
                    h = model(h) * 0.5
                return h

            stage = wick.torch.register_stage(s, "mlp4", fn, windows={"x": x}, min_speedup=1.0)
            with torch.no_grad():
                cert = stage.capture()
            print("capture:", cert["verdict"], cert["reason"])
            assert cert["accepted"], cert
            torch.cuda.synchronize()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                    torch.profiler.ProfilerActivity.CUDA]) as prof:
                with torch.no_grad():
                    for _ in range(REPLAYS):
                        stage()
                    eager = fn()  # eager kernels beside it: not the stage's
                torch.cuda.synchronize()
            assert stage.replays >= REPLAYS, stage.replays
            del eager
        trace = os.path.join(tmp, "stage-profile.json")
        prof.export_chrome_trace(trace)
        run = subprocess.run([wick_trace, "gpu", "--json", trace], capture_output=True, timeout=300)
        assert run.returncode in (0, 1), run.stderr.decode(errors="replace")
        got = json.loads(run.stdout)
        print("graphs:", json.dumps(got["graphs"]))
        print("stages:", json.dumps(got["stages"])[:800])
        staged = [g for g in got["graphs"] if g["stage"] == "mlp4"]
        assert len(staged) == 1, got["graphs"]
        g = staged[0]
        assert g["replays"] == REPLAYS, g
        assert g["kernels"] > 0 and g["kernels"] % REPLAYS == 0, g
        assert len(got["stages"]) == 1 and got["stages"][0]["name"] == "mlp4", got["stages"]
        st = got["stages"][0]
        assert st["replays"] == REPLAYS and st["kernels"] == g["kernels"], st
        assert sum(k["count"] for k in st["by_kernel"]) == g["kernels"], st
        # the eager forward's kernels are in the trace but not the stage's
        total = sum(k["count"] for k in got["kernels"])
        assert total > g["kernels"], (total, g)
        ref = reference_module()
        diff = ref.differences(got, ref.reference(trace))
        assert not diff, "\n".join(diff[:20])
        print("stage mlp4: %d replays, %d kernels attributed, %d kernels in the trace"
              % (g["replays"], g["kernels"], total))


if __name__ == "__main__":
    import sys

    wicktest.run_tests(globals())
    sys.stdout.flush()
    os._exit(0)
