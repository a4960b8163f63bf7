"""wick.torch.instrument(memory_history=True): the CUDA caching allocator's
history of the instrumented run, written beside the trace as
NAME.memory.pickle, and read by wick-trace memory. Without CUDA the flag is
refused with a sentence (tested here on CPU); the recording itself is tested
on the GPU machine only."""
import json
import os
import shutil
import subprocess
import tempfile

import wicktest

torch = wicktest.require_torch()
import wick  # noqa: E402
import wick.torch  # noqa: E402


def test_path_beside_the_trace():
    assert wick.torch.memory_history_path_for("/x/run.jsonl") == "/x/run.memory.pickle"
    assert wick.torch.memory_history_path_for("/x/run.jsonl.gz") == "/x/run.memory.pickle"
    assert wick.torch.memory_history_path_for("run") == "run.memory.pickle"


def test_refused_without_cuda():
    if torch.cuda.is_available():
        wicktest.skip_test("CUDA is here: the refusal is for machines without it")
    with tempfile.TemporaryDirectory() as tmp:
        with wick.Session("mh.cpu", jsonl_path=os.path.join(tmp, "run.jsonl")) as s:
            model = torch.nn.Linear(4, 4)
            try:
                wick.torch.instrument(s, model, memory_history=True)
            except wick.Error as e:
                assert "sees no CUDA device" in str(e), e
            else:
                raise AssertionError("memory_history=True was accepted without CUDA")
        assert not os.path.exists(os.path.join(tmp, "run.memory.pickle"))


def test_training_run_snapshot():
    if not torch.cuda.is_available():
        wicktest.skip_test("torch %s sees no CUDA device: the allocator's history needs one"
                           % torch.__version__)
    dev = torch.device("cuda")
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "run.jsonl")
        with wick.Session("mh.train", device="cuda", jsonl_path=trace) as s:
            torch.manual_seed(0)
            model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                        torch.nn.Linear(1024, 256)).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
            inst = wick.torch.instrument(s, model, opt, memory_history=True)
            for _ in range(3):
                with inst.step():
                    loss = model(torch.randn(64, 256, device=dev)).square().mean()
                    loss.backward()
                    opt.step()
                    opt.zero_grad()
        snap = wick.torch.memory_history_path_for(trace)
        assert os.path.exists(snap), "no snapshot beside the trace"
        assert getattr(inst, "memory_history_written", None) == snap
        out = subprocess.run([wicktest.WICK_TRACE, "memory", "--json", snap], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
        d = json.loads(out)
        print("snapshot:", {k: d[k] for k in ("segments", "reserved_bytes", "allocated_bytes",
                                                "trace_entries", "peak_allocated_bytes")})
        assert d["segments"] > 0 and d["reserved_bytes"] > 0
        assert d["trace_entries"] > 0, "no history recorded"
        keep = os.environ.get("WICK_MEMORY_HISTORY_OUT")
        if keep:  # the GPU machine's run keeps the pair for the app and docs
            os.makedirs(keep, exist_ok=True)
            shutil.copy(trace, os.path.join(keep, "memory-history-run.jsonl"))
            shutil.copy(snap, os.path.join(keep, "memory-history-run.memory.pickle"))
        # AdamW's state (two buffers per parameter) was allocated inside the history
        assert d["peak_allocated_bytes"] >= 3 * sum(p.numel() * 4 for p in model.parameters())


if __name__ == "__main__":
    wicktest.run_tests(globals())
