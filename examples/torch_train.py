#!/usr/bin/env python3
"""torch_train.py — a small transformer-style block trained on synthetic data,
recorded live by Wick: module spans, memory by category, gradient coverage, a
registered stage (an inner loop over declared windows) and its modules in the
weight store.

    meson devenv -C _build /usr/bin/python3 examples/torch_train.py --steps 8 --strict --trace t.jsonl
    meson devenv -C _build /usr/bin/python3 examples/torch_train.py --control --steps 0
    wick-trace control PID list | evict encoder | restore encoder | capture refine

CPU by default, CUDA when available (--device to choose).
"""

import argparse
import os
import signal
import sys
import tempfile
import threading
import time

import torch

import wick
import wick.torch
from wick._torch_weights import save_checkpoint


class Block(torch.nn.Module):
    """LayerNorm -> Linear -> GELU -> Linear, with a residual."""

    def __init__(self, width, hidden):
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.fc1 = torch.nn.Linear(width, hidden)
        self.fc2 = torch.nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))


class Model(torch.nn.Module):
    def __init__(self, inputs=32, width=128, hidden=512, outputs=8):
        super().__init__()
        self.embed = torch.nn.Linear(inputs, width)
        self.encoder = torch.nn.Sequential(Block(width, hidden), Block(width, hidden))
        self.head = torch.nn.Linear(width, outputs)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20, help="steps to train (0: until killed)")
    p.add_argument("--trace", help="write the candle-graph trace to FILE")
    p.add_argument("--strict", action="store_true", help="pure candle-graph/trace/10 (no wick_ records)")
    p.add_argument("--control", action="store_true", help="listen on the control socket")
    p.add_argument("--checkpoint", help="write a safetensors checkpoint of the weights to FILE first (disk tier)")
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda when available)")
    p.add_argument("--ops", action="store_true", help="aten op records through a dispatch mode")
    p.add_argument("--rate", type=float, default=0.0, help="steps per second at most (0: as fast as it goes)")
    p.add_argument("--capture-step", type=int, default=3, help="the measured step (one-based)")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--no-stage", action="store_true", help="do not register the stage")
    p.add_argument("--when-evicted", choices=("wait", "restore"), default="wait")
    p.add_argument("--verify-restore", action="store_true", help="check each restore is bit-exact (SHA-256)")
    p.add_argument("--pool", action="store_true", help="allocate the model in wick.torch.weights_pool (CUDA, torch >= 2.5)")
    p.add_argument(
        "--progress",
        action="store_true",
        help="print a line after every step and when a step starts waiting for evicted weights (for scripts and tests)",
    )
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


stop = False


def on_signal(signum, frame):
    global stop
    stop = True


def report_waits(modules):
    """--progress: says "waiting for weights N" once a step has begun waiting
    for an evicted module (the N-th wait); the training thread is blocked then."""
    said = 0
    while not stop:
        waits = sum(m.waits for m in modules.values())
        if waits > said:
            said = waits
            print("waiting for weights %d" % waits, flush=True)
        time.sleep(0.01)


def main(argv=None):
    args = parse_args(argv)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    torch.manual_seed(0)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

    build = lambda: Model().to(device)  # noqa: E731
    model = build() if not args.pool else None
    plan = wick.torch.gradient_plan(model if model is not None else Model())
    session = wick.Session(
        "torch_train.train",
        phase="train",
        capture_step=args.capture_step,
        warmup_steps=max(args.capture_step - 1, 0),
        device=str(device),
        contract=plan,
        jsonl_path=args.trace,
        strict=args.strict,
        control=args.control,
        coverage={
            "operations": "partial" if args.ops else "none",
            "tensors": "complete",
            "logical_memory": "complete",
            "physical_memory": "partial",
        },
        tags={"workload": "torch_train.py: two MLP blocks on synthetic data, Adam", "torch": torch.__version__},
    )
    own_checkpoint = False
    with session:
        if model is None:
            with wick.torch.weights_pool(session):
                model = build()
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
        checkpoint = args.checkpoint
        if checkpoint is None and args.control:
            checkpoint = os.path.join(tempfile.gettempdir(), "torch_train-%d.safetensors" % os.getpid())
            own_checkpoint = True
        if checkpoint is not None:
            save_checkpoint(checkpoint, model)
        modules = {
            name: wick.torch.register_module(
                session,
                name,
                getattr(model, name),
                checkpoint=checkpoint,
                when_evicted=args.when_evicted,
                verify_restore=args.verify_restore,
            )
            for name in ("embed", "encoder", "head")
        }
        inst = wick.torch.instrument(session, model, optimizer, ops=args.ops)

        # the stage: four refinements of a declared window through the
        # encoder's first block, no autograd (an inner loop worth a graph)
        window = torch.randn(args.batch, 128, device=device)
        block = model.encoder[0]

        def refine():
            with torch.no_grad():
                h = window
                for _ in range(4):
                    h = block(h)
                return h

        stage = None
        if not args.no_stage:
            stage = wick.torch.register_stage(session, "refine", refine, windows={"x": window}, uses=[modules["encoder"]])

        teacher = torch.randn(32, 8, device=device)
        if not args.quiet:
            print(
                "torch_train: pid %d, device %s, control socket %s"
                % (os.getpid(), device, session.control_socket_path or "off"),
                flush=True,
            )
        if args.progress:
            threading.Thread(target=report_waits, args=(modules,), daemon=True).start()
        step = 0
        period = 1.0 / args.rate if args.rate > 0 else 0.0
        next_time = time.monotonic()
        while not stop and (args.steps == 0 or step < args.steps):
            step += 1
            x = torch.randn(args.batch, 32, device=device)
            y = x @ teacher
            with inst.step():
                with session.span("data"):
                    pass
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                if stage is not None:
                    with session.span("refine_stage"):
                        stage.write("x", torch.randn(args.batch, 128, device=device))
                        stage()
            if args.progress or (not args.quiet and (step == 1 or step % 100 == 0)):
                print("step %d loss %.6f" % (step, loss.item()), flush=True)
            if period:
                next_time += period
                delay = next_time - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                else:
                    next_time = time.monotonic()
        if not args.quiet:
            verified = sum(m.restores_verified for m in modules.values())
            mismatched = sum(m.restore_mismatches for m in modules.values())
            waits = sum(m.waits for m in modules.values())
            print(
                "torch_train: %d steps, final loss %.6f, waited for weights %d times, restores verified %d, mismatched %d%s"
                % (
                    step,
                    loss.item() if step else float("nan"),
                    waits,
                    verified,
                    mismatched,
                    ", stage %s (%d replays)" % (stage.state, stage.replays) if stage is not None else "",
                ),
                flush=True,
            )
    if own_checkpoint:
        os.unlink(checkpoint)
    return 0


if __name__ == "__main__":
    sys.exit(main())
