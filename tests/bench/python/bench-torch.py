#!/usr/bin/env python3
"""bench-torch.py — the training step of examples/torch_train.py's model with
wick.torch.instrument, with torch.profiler(record_shapes=True,
profile_memory=True), and with neither, in the same run: rounds alternate the
three so that drift on a shared machine hits them alike. Prints the median
step time of each and the ratios to the baseline, and the cost of a span
begun and ended from Python.

    meson devenv -C _build /usr/bin/python3 tests/bench/python/bench-torch.py [--device cuda] [--rounds 7] [--steps 10]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples"))
import torch_train  # noqa: E402
import wick  # noqa: E402
import wick.torch  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=64)
    args = p.parse_args()
    dev = torch.device(args.device)
    torch.manual_seed(0)
    model = torch_train.Model().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    teacher = torch.randn(32, 8, device=dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def step():
        x = torch.randn(args.batch, 32, device=dev)
        loss = torch.nn.functional.mse_loss(model(x), x @ teacher)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    tmp = tempfile.mkdtemp()
    plan = wick.torch.gradient_plan(model)
    session = wick.Session("bench.train", contract=plan, capture_step=1, device=str(dev),
                           jsonl_path=os.path.join(tmp, "bench.jsonl"), strict=True,
                           coverage={"tensors": "complete", "logical_memory": "complete"})
    times = {"neither": [], "wick": [], "torch.profiler": []}
    for _ in range(3):
        step()
    sync()
    inst = None
    for r in range(args.rounds):
        for mode in ("neither", "wick", "torch.profiler"):
            if mode == "wick":
                if inst is None:
                    inst = wick.torch.instrument(session, model, opt)
                else:
                    inst._install(True)  # the hooks again (removed after the round)
                    inst.optimizer = opt
            t0 = time.perf_counter()
            if mode == "torch.profiler":
                acts = [torch.profiler.ProfilerActivity.CPU]
                if dev.type == "cuda":
                    acts.append(torch.profiler.ProfilerActivity.CUDA)
                with torch.profiler.profile(activities=acts, record_shapes=True, profile_memory=True):
                    for _ in range(args.steps):
                        step()
                    sync()
            elif mode == "wick":
                for _ in range(args.steps):
                    with inst.step():
                        step()
                sync()
            else:
                for _ in range(args.steps):
                    step()
                sync()
            times[mode].append((time.perf_counter() - t0) / args.steps * 1e3)
            if mode == "wick":
                inst.remove()
    base = statistics.median(times["neither"])
    print("device %s, torch %s, %d rounds of %d steps, batch %d" % (dev, torch.__version__, args.rounds, args.steps, args.batch))
    for mode, values in times.items():
        med = statistics.median(values)
        print("  %-15s median %8.3f ms/step  (min %.3f, max %.3f)  ratio %.3f" % (mode, med, min(values), max(values), med / base))
    w = statistics.median(times["wick"]) - base
    pr = statistics.median(times["torch.profiler"]) - base
    print("  overhead: wick %+.3f ms/step, torch.profiler %+.3f ms/step" % (w, pr))
    # span cost
    raw = session._s
    n = 200000
    span = session.span
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            with span("hot"):
                pass
        best.append((time.perf_counter() - t0) / n * 1e9)
    t0 = time.perf_counter()
    for _ in range(n):
        pass
    loop = (time.perf_counter() - t0) / n * 1e9
    reused = raw.span("hot2")
    t0 = time.perf_counter()
    for _ in range(n):
        with reused:
            pass
    reuse = (time.perf_counter() - t0) / n * 1e9
    print("  span begin+end from Python: `with session.span(name):` median %.0f ns (of 5 x %d; empty loop %.0f ns); a reused Span %.0f ns; dropped %d"
          % (statistics.median(best), n, loop, reuse, session.dropped))
    session.finish()
    session.close()


if __name__ == "__main__":
    main()
