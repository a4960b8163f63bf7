#!/usr/bin/env python3
"""make-example-trace.py — write a realistic candle-graph trace/10 of an MLP training run.

The trace is what libwick would record for a small MLP trained on one GPU:
per step a host-to-device batch copy, forward (Linear/ReLU modules with matmul,
bias and activation ops), loss, backward (per-layer gradient kernels),
gradient clipping and an AdamW step; kernels on a compute stream and copies on
a copy stream (device clock offset from host time); tensors and memory by
category (parameters, activations freed during backward, gradients freed by
zero_grad, optimizer state created on the first step, cuBLAS workspaces as
"other"); device memory samples from a caching allocator; an exact gradient
contract (trunk and head active, a frozen embedding inactive) with its
manifest digest; and Wick records (marks, a weight eviction and restore, a
stage certification) unless --strict.

    tools/make-example-trace.py --output data/example-trace.jsonl
    tools/make-example-trace.py --steps 2000 --output /tmp/big.jsonl   # large file
    tools/make-example-trace.py --faults --output tests/app/data/faulty-trace.jsonl

--faults writes the mistakes instrumentation makes, for the Health view: a
gradient of the contract never recorded, a free of a storage never allocated,
a zero-length device interval, an op that outlives its span, and a layer
whose activations hold non-finite values (tensor_stats).
"""

import argparse
import hashlib
import json
import random
import struct
import sys

DTYPE_SIZE = {"bf16": 2, "f16": 2, "f32": 4, "i64": 8}


def manifest_digest(entries):
    h = hashlib.sha256()
    h.update(b"candle-graph/gradient-manifest/1")
    h.update(b"\x00")
    for root, key, family in entries:
        for s in (root, key, family):
            b = s.encode("utf-8")
            h.update(struct.pack("<Q", len(b)))
            h.update(b)
    return "sha256:" + h.hexdigest()


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Trace:
    def __init__(self, out, strict, rng, faults=False):
        self.faults = faults
        self.out = out
        self.strict = strict
        self.rng = rng
        self.next_span = 1
        self.next_tensor = 1
        self.next_storage = 1
        self.next_grad = 1
        self.t = 0
        self.latest = 0
        self.live = {}          # storage -> (bytes, category)
        self.logical = 0
        self.reserved = 0
        self.clock_offset = 7_300_000_000_000
        self.device_free_at = {"7": 0, "13": 0}

    def emit(self, record):
        self.out.write(json.dumps(record, separators=(",", ":")))
        self.out.write("\n")

    def advance(self, ns):
        self.t += int(ns)
        self.latest = max(self.latest, self.t)

    def span_start(self, name, kind, parent, step=None, measured=False):
        sid = "s%d" % self.next_span
        self.next_span += 1
        rec = {"kind": "span_start", "id": sid, "name": name, "start_ns": self.t, "span_kind": kind}
        if parent:
            rec["parent_id"] = parent
        if measured:
            rec["measured"] = True
        if step:
            rec["step"] = step
        self.emit(rec)
        return sid, self.t

    def span_end(self, span):
        sid, start = span
        self.emit({"kind": "span_end", "id": sid, "duration_ns": self.t - start})
        self.latest = max(self.latest, self.t)

    def tensor(self, span, label, shape, dtype, category, requires_grad=False):
        tid = "t%d" % self.next_tensor
        self.next_tensor += 1
        self.emit({"kind": "tensor", "span_id": span[0], "tensor_id": tid, "label": label,
                   "shape": shape, "dtype": dtype, "device": "cuda:0",
                   "requires_grad": requires_grad, "dense_bytes": numel(shape) * DTYPE_SIZE[dtype],
                   "category": category})
        return tid

    def sample(self):
        used = self.logical + 96 * 2**20  # context and allocator slack
        block = 2 * 2**20
        need = -(-used // block) * block
        self.reserved = max(self.reserved, need)
        self.emit({"kind": "device_memory", "timestamp_ns": self.t, "device": "cuda:0",
                   "used_bytes": used, "reserved_bytes": self.reserved,
                   "free_bytes": 80 * 2**30 - self.reserved, "capacity_bytes": 80 * 2**30})

    def alloc(self, span, tid, shape, dtype, category, op=None):
        sto = "st%d" % self.next_storage
        self.next_storage += 1
        nbytes = numel(shape) * DTYPE_SIZE[dtype]
        rec = {"kind": "memory", "timestamp_ns": self.t, "storage_id": sto, "tensor_id": tid,
               "span_id": span[0], "device": "cuda:0", "bytes": nbytes, "action": "alloc",
               "shape": shape, "dtype": dtype, "category": category}
        if op:
            rec["op_name"] = op
        self.emit(rec)
        self.live[sto] = (nbytes, category, tid, shape, dtype)
        self.logical += nbytes
        return sto

    def free(self, span, sto, op=None):
        nbytes, category, tid, shape, dtype = self.live.pop(sto)
        rec = {"kind": "memory", "timestamp_ns": self.t, "storage_id": sto, "tensor_id": tid,
               "span_id": span[0], "device": "cuda:0", "bytes": nbytes, "action": "free",
               "shape": shape, "dtype": dtype, "category": category}
        if op:
            rec["op_name"] = op
        self.emit(rec)
        self.logical -= nbytes

    def kernel(self, span, duration, stream="7"):
        # Device clock: host time plus an offset, after a launch latency,
        # never before the stream is free.
        start = max(self.t + 4_000, self.device_free_at[stream])
        self.device_free_at[stream] = start + duration
        self.emit({"kind": "device_interval", "span_id": span[0], "device": "cuda:0",
                   "stream_id": stream, "clock_id": "cuda:0/globaltimer", "backend": "cuda",
                   "start_ns": start + self.clock_offset, "duration_ns": duration})

    def op(self, parent, name, shape, dtype, inputs, flops_ns, out=None, workspace=False):
        span = self.span_start(name, "op", parent[0])
        self.advance(1_500 + self.rng.randint(0, 800))
        ws = None
        if workspace:
            ws_t = self.tensor(span, "cublas_workspace", [4 * 2**20], "bf16", "other")
            ws = self.alloc(span, ws_t, [4 * 2**20], "bf16", "other", op=name)
        duration = max(int(flops_ns * (0.9 + 0.2 * self.rng.random())), 1_800)
        op_start = self.t
        self.kernel(span, duration)
        self.advance(duration + 2_000)
        in_bytes = sum(numel(s) * DTYPE_SIZE[d] for s, d in inputs)
        rec = {"kind": "op", "span_id": span[0], "op_name": name,
               "inputs": ["t%d" % max(1, self.next_tensor - 1 - i) for i in range(len(inputs))],
               "shape": shape, "dtype": dtype, "device": "cuda:0", "duration_ns": duration,
               "timestamp_ns": op_start, "input_dense_bytes": in_bytes}
        if out:
            rec["output"] = out
        self.emit(rec)
        if ws:
            self.free(span, ws, op=name)
        self.advance(500)
        self.span_end(span)


def build(trace, steps, batch, dims):
    rng = trace.rng
    layers = [("fc%d" % (i + 1), dims[i], dims[i + 1]) for i in range(len(dims) - 1)]
    entries = [("model", "embed.weight", "frozen")]
    for name, _, _ in layers[:-1]:
        entries += [("model", name + ".weight", "trunk"), ("model", name + ".bias", "trunk")]
    last = layers[-1][0]
    entries += [("model", last + ".weight", "head"), ("model", last + ".bias", "head")]
    entries.sort(key=lambda e: e[1])
    families = [
        {"family": "frozen", "expectation": "inactive", "min_present": 0},
        {"family": "head", "expectation": "active", "min_present": 2},
        {"family": "trunk", "expectation": "active",
         "min_present": sum(1 for e in entries if e[2] == "trunk")},
    ]
    capture_step = min(3, steps)
    trace.emit({
        "kind": "meta", "schema": "candle-graph/trace/10", "run_id": "run-4242-1764500000000000000",
        "correlation_id": "mlp-example", "entrypoint": "train_mlp", "phase": "train",
        "timestamp": "2026-11-30T15:00:00Z", "capture_step": capture_step,
        "warmup_steps": capture_step - 1, "device": "cuda:0", "timing_mode": "host",
        "capture_contract": {
            "measurement_scope": "profiled_work", "operations": "complete", "tensors": "complete",
            "gradients": "complete",
            "gradient_contract": {
                "manifest_sha256": manifest_digest(entries),
                "expected": [{"root": r, "key": k, "family": f} for r, k, f in entries],
                "families": families,
            },
            "logical_memory": "complete", "physical_memory": "complete", "device_timing": "complete",
            "required_semantic_labels": ["train_mlp"],
        },
        "tags": {"model": "mlp-%s" % "x".join(str(d) for d in dims), "batch": str(batch),
                 "optimizer": "adamw", "generator": "tools/make-example-trace.py"},
    })
    root = trace.span_start("train_mlp", "function", None)
    trace.advance(20_000)

    # Parameters, allocated once.
    params = {}
    setup = trace.span_start("init_parameters", "function", root[0])
    emb_t = trace.tensor(setup, "embed.weight", [4096, dims[0]], "bf16", "parameter")
    params["embed.weight"] = (trace.alloc(setup, emb_t, [4096, dims[0]], "bf16", "parameter"), [4096, dims[0]])
    for name, d_in, d_out in layers:
        for suffix, shape in ((".weight", [d_out, d_in]), (".bias", [d_out])):
            t = trace.tensor(setup, name + suffix, shape, "bf16", "parameter", requires_grad=True)
            params[name + suffix] = (trace.alloc(setup, t, shape, "bf16", "parameter"), shape)
            trace.advance(15_000)
    trace.sample()
    trace.span_end(setup)
    trace.advance(30_000)

    optimizer_state = None
    for step in range(1, steps + 1):
        measured = step == capture_step
        st = trace.span_start("train_step", "function", root[0], measured=measured)
        if not trace.strict and step % 4 == 1:
            trace.emit({"kind": "wick_mark", "timestamp_ns": trace.t, "label": "step %d" % step})
        # Batch copy on the copy stream.
        load = trace.span_start("load_batch", "function", st[0])
        x_shape = [batch, dims[0]]
        xt = trace.tensor(load, "batch.x", x_shape, "bf16", "activation")
        x_sto = trace.alloc(load, xt, x_shape, "bf16", "activation")
        trace.kernel(load, 38_000 + rng.randint(0, 6_000), stream="13")
        trace.advance(45_000)
        trace.span_end(load)

        fwd = trace.span_start("forward", "function", st[0], step="forward")
        acts = [x_sto]
        shape_in = x_shape
        for li, (name, d_in, d_out) in enumerate(layers):
            mod = trace.span_start("Linear[%s]" % name, "module", fwd[0], step="forward")
            out_shape = [batch, d_out]
            at = trace.tensor(mod, name + ".out", out_shape, "bf16", "activation")
            acts.append(trace.alloc(mod, at, out_shape, "bf16", "activation", op="matmul"))
            trace.op(mod, "matmul", out_shape, "bf16", [(shape_in, "bf16"), ([d_out, d_in], "bf16")],
                     2 * batch * d_in * d_out / 90_000, out=at, workspace=True)
            trace.op(mod, "add_bias", out_shape, "bf16", [(out_shape, "bf16"), ([d_out], "bf16")],
                     numel(out_shape) / 4_000)
            if measured:
                # Activation statistics of the measured step (trace/10). With
                # --faults the last trunk layer overflows: non-finite values,
                # aggregates written as 0.0 as candle-graph's producer does.
                overflow = trace.faults and li == len(layers) - 2
                rms = 0.0 if overflow else round(0.5 + rng.random() * 1.5, 6)
                trace.emit({"kind": "tensor_stats", "span_id": mod[0], "label": name + ".out",
                            "shape": out_shape, "dtype": "bf16", "elements": numel(out_shape),
                            "non_finite": 37 if overflow else 0, "rms": rms,
                            "abs_max": 0.0 if overflow else round(rms * (3 + rng.random() * 4), 6),
                            "mean": 0.0 if overflow else round((rng.random() - 0.5) * 0.2, 6)})
            trace.span_end(mod)
            if li < len(layers) - 1:
                act = trace.span_start("ReLU", "module", fwd[0], step="forward")
                trace.op(act, "relu", out_shape, "bf16", [(out_shape, "bf16")], numel(out_shape) / 5_000)
                trace.span_end(act)
            shape_in = out_shape
            trace.advance(3_000)
        loss = trace.span_start("cross_entropy", "module", fwd[0], step="forward")
        trace.op(loss, "log_softmax", shape_in, "f32", [(shape_in, "bf16")], numel(shape_in) / 3_000)
        trace.op(loss, "nll_loss", [1], "f32", [(shape_in, "f32")], numel(shape_in) / 9_000)
        trace.span_end(loss)
        trace.sample()
        trace.span_end(fwd)
        trace.advance(8_000)

        bwd = trace.span_start("backward", "function", st[0], step="backward")
        grads = {}
        for li, (name, d_in, d_out) in reversed(list(enumerate(layers))):
            mod = trace.span_start("Linear[%s].backward" % name, "module", bwd[0], step="backward")
            for suffix in (".weight", ".bias"):
                sto, shape = params[name + suffix]
                gt = trace.tensor(mod, name + suffix + ".grad", shape, "bf16", "gradient")
                grads[name + suffix] = trace.alloc(mod, gt, shape, "bf16", "gradient", op="matmul_backward")
            trace.op(mod, "matmul_backward", [d_out, d_in], "bf16",
                     [([batch, d_out], "bf16"), ([batch, d_in], "bf16")],
                     4 * batch * d_in * d_out / 90_000, workspace=True)
            trace.op(mod, "sum_bias_grad", [d_out], "bf16", [([batch, d_out], "bf16")], batch * d_out / 4_000)
            trace.free(mod, acts.pop(), op="matmul_backward")
            trace.span_end(mod)
            trace.advance(2_000)
        trace.free(bwd, acts.pop())
        if measured:
            for index, (root_name, key, family) in enumerate(entries):
                if trace.faults and index == 3:
                    continue
                if family == "frozen":
                    trace.emit({"kind": "gradient", "event_id": "gradient-%d" % trace.next_grad,
                                "root": root_name, "key": key, "state": "missing"})
                else:
                    trace.emit({"kind": "gradient", "event_id": "gradient-%d" % trace.next_grad,
                                "root": root_name, "key": key, "state": "present",
                                "norm": round(0.05 + rng.random() * 0.9, 6)})
                trace.next_grad += 1
        trace.sample()
        trace.span_end(bwd)
        trace.advance(6_000)

        opt = trace.span_start("optimizer_step", "function", st[0], step="optimizer")
        clip = trace.span_start("clip_grad_norm", "function", opt[0], step="optimizer")
        trace.op(clip, "global_norm", [1], "f32", [([sum(numel(p[1]) for p in params.values())], "bf16")], 30_000)
        trace.span_end(clip)
        if optimizer_state is None:
            optimizer_state = []
            for name, (sto, shape) in params.items():
                if name.startswith("embed"):
                    continue
                for moment in ("exp_avg", "exp_avg_sq"):
                    t = trace.tensor(opt, "%s.%s" % (name, moment), shape, "f32", "optimizer")
                    optimizer_state.append(trace.alloc(opt, t, shape, "f32", "optimizer", op="adamw_init"))
        adam = trace.span_start("adamw", "function", opt[0], step="optimizer")
        for name, (sto, shape) in params.items():
            if name.startswith("embed"):
                continue
            trace.op(adam, "adamw_update", shape, "f32", [(shape, "bf16"), (shape, "f32"), (shape, "f32")],
                     numel(shape) / 2_500)
        trace.span_end(adam)
        zero = trace.span_start("zero_grad", "function", opt[0], step="optimizer")
        for sto in grads.values():
            trace.free(zero, sto, op="zero_grad")
        trace.advance(4_000)
        trace.span_end(zero)
        trace.sample()
        trace.span_end(opt)
        trace.advance(12_000)
        if not trace.strict and step == capture_step + 1:
            trace.emit({"kind": "wick_stage_certification", "timestamp_ns": trace.t, "stage": "denoise",
                        "verdict": "accepted", "reason": "parity cos 0.99998 >= 0.9999 and speedup 2.7x >= 1.05x",
                        "parity_cos": 0.99998, "max_abs": 0.0012, "p99_abs": 0.0004, "eager_ms": 1.92,
                        "replay_ms": 0.71, "speedup_median": 2.7, "kernel_nodes": 48})
        if trace.faults and step == 2:
            trace.emit({"kind": "memory", "timestamp_ns": trace.t, "storage_id": "st-ghost",
                        "tensor_id": "t-ghost", "span_id": st[0], "device": "cuda:0", "bytes": 4096,
                        "action": "free", "dtype": "f32", "category": "other"})
            trace.emit({"kind": "device_interval", "span_id": st[0], "device": "cuda:0",
                        "stream_id": "13", "clock_id": "cuda:0/globaltimer", "backend": "cuda",
                        "start_ns": trace.t + trace.clock_offset, "duration_ns": 0})
            trace.emit({"kind": "op", "span_id": st[0], "op_name": "all_reduce", "inputs": [],
                        "shape": [1024], "dtype": "f32", "device": "cuda:0", "duration_ns": 90_000,
                        "timestamp_ns": trace.t - 10_000, "input_dense_bytes": 4096})
        trace.span_end(st)
        trace.advance(25_000)
        if not trace.strict and step == steps - 2:
            freed = sum(trace.live[s][0] for s, _ in [params["embed.weight"]])
            trace.emit({"kind": "wick_weight_evict", "timestamp_ns": trace.t, "module": "embed",
                        "disk": 1, "ram": 0, "freed_bytes": freed, "duration_ns": 410_000})
        if not trace.strict and step == steps - 1:
            trace.emit({"kind": "wick_weight_restore", "timestamp_ns": trace.t, "module": "embed",
                        "restored": 1, "bytes": numel(params["embed.weight"][1]) * 2, "duration_ns": 380_000})

    teardown = trace.span_start("release", "function", root[0])
    for sto in list(trace.live):
        trace.free(teardown, sto)
        trace.advance(1_000)
    trace.sample()
    trace.span_end(teardown)
    trace.advance(5_000)
    trace.span_end(root)
    trace.emit({"kind": "terminal", "outcome": "complete", "timestamp_ns": trace.t})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", "-o", default="-", help="file to write (default: stdout)")
    parser.add_argument("--steps", type=int, default=8, help="training steps (default 8)")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--dims", default="1024,4096,4096,1024,10",
                        help="layer widths, input first (default 1024,4096,4096,1024,10)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--strict", action="store_true", help="pure trace/10: no wick_ records")
    parser.add_argument("--faults", action="store_true",
                        help="add instrumentation mistakes that health reports")
    args = parser.parse_args()
    dims = [int(d) for d in args.dims.split(",")]
    out = sys.stdout if args.output == "-" else open(args.output, "w", encoding="utf-8")
    with out:
        build(Trace(out, args.strict, random.Random(args.seed), args.faults), max(args.steps, 1),
              args.batch, dims)


if __name__ == "__main__":
    main()
