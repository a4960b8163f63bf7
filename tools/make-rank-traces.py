#!/usr/bin/python3
"""Writes the per-rank PyTorch profiler (kineto) traces of a simulated multi-node
training job, with known clock offsets and a planted straggler, and the ground
truth beside them:

  tools/make-rank-traces.py OUTDIR [--ranks 8] [--nodes 2] [--steps 6] [--seed 1]
      [--straggler 5] [--straggler-ms 1.5] [--kernels 4] [--gzip] [--no-seq]
      [--legacy-names] [--outlier]

OUTDIR/rank-N.json (or .json.gz) for every rank, and OUTDIR/truth.json.

The job, in true time: each step runs chunks of compute kernels, each chunk
followed by a collective. Per step: on each node's tensor-parallel group
(process groups "1" for the first node's ranks, "2" for the second's, ...),
two all-reduces; then on the world group "0", three all-reduces (gradient
buckets), one all-gather and one reduce-scatter. A collective's kernel starts
on a rank when its compute chunk is done (its arrival) and ends, on every
rank of the group, at the last arrival plus the transfer time (plus a few
µs of noise per rank), so the kernels of one collective end together in true
time. The straggler's compute chunks take --straggler-ms longer; the others
wait for it in every collective it belongs to.

Each rank's clock is off true time: every rank by a few ms, and every rank of
the second node by more than one second besides. Its trace is stamped as
kineto stamps it: `baseTimeNanoseconds` is the rank's local wall clock at the
start rounded down to the second, and every `ts` is µs since then (ns
precision). truth.json gives, per rank, clock_offset_ns (local clock minus
true time) and expected_offset_ns, the correction that brings the rank's
base-aligned times (baseTimeNanoseconds + ts) onto the reference rank's
(the lowest rank); the straggler; and every collective with its group, Seq,
ranks, bytes, the last rank to arrive and its true arrival skew.

NCCL kernels carry the args kineto copies from record_param_comms:
Collective name, Process Group Name/Description/Ranks, Seq (unless
--no-seq), In/Out msg nelems, Group size, dtype, In/Out split size. World
collectives use modern ncclDevKernel_* names, group ones legacy ncclKernel_*
names (--legacy-names: all legacy). CPU pids collide across nodes (each node
numbers its processes alike), as on a real cluster. --outlier makes one
collective end 400 µs late on one rank (a robust estimate ignores it).

No dependencies beyond the Python standard library.
"""
import argparse
import gzip
import json
import os
import random

DTYPES = {"Float": (4, "f32", "float"), "BFloat16": (2, "bf16", "bfloat16")}


def kernel_name(coll, dtype, legacy):
    size, short, long_ = DTYPES[dtype]
    camel = {"allreduce": "AllReduce", "allgather": "AllGather",
             "reduce_scatter": "ReduceScatter"}[coll]
    if legacy:
        return f"ncclKernel_{camel}_RING_LL_Sum_{long_}(ncclDevComm*, unsigned long, ncclWork*)"
    return f"ncclDevKernel_{camel}_Sum_{short}_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--nodes", type=int, default=2)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--straggler", type=int, default=5)
    ap.add_argument("--straggler-ms", type=float, default=1.5)
    ap.add_argument("--kernels", type=int, default=4,
                    help="compute kernels per chunk (the trace's size grows with it)")
    ap.add_argument("--gzip", action="store_true")
    ap.add_argument("--no-seq", action="store_true")
    ap.add_argument("--legacy-names", action="store_true")
    ap.add_argument("--outlier", action="store_true")
    a = ap.parse_args()
    if a.ranks < 2 or a.nodes < 1 or a.ranks % a.nodes:
        ap.error("--ranks must be at least 2 and a multiple of --nodes")
    if not 0 <= a.straggler < a.ranks:
        a.straggler = -1
    rnd = random.Random(a.seed)
    per_node = a.ranks // a.nodes
    os.makedirs(a.outdir, exist_ok=True)

    # Clocks: local = true + clock_offset. A few ms everywhere, > 1 s on node 1.
    clock = []
    for r in range(a.ranks):
        off = int(rnd.uniform(-6e6, 6e6))
        node = r // per_node
        if node == 1:
            off += 1_370_000_000 + node * 11_000
        elif node > 1:
            off -= 250_000_000 * node
        clock.append(off)

    world = list(range(a.ranks))
    groups = {"0": ("default_pg", world)}
    node_group = {}
    for n in range(a.nodes):
        name = str(n + 1)
        members = list(range(n * per_node, (n + 1) * per_node))
        if len(members) >= 2:
            groups[name] = ("tp", members)
            for m in members:
                node_group[m] = name
    seq = {g: 0 for g in groups}

    events = {r: [] for r in range(a.ranks)}
    corr = [1000]
    truth_colls = []
    t_true = 1_764_000_000_123_456_789  # true time, ns (2025)
    ready = {r: t_true for r in range(a.ranks)}  # when each rank's GPU is free
    steps = []
    outlier_done = not a.outlier

    def compute_chunk(r, base_ns):
        t = ready[r]
        for k in range(a.kernels):
            d = int(base_ns / a.kernels * rnd.uniform(0.9, 1.1))
            if r == a.straggler:
                d += int(a.straggler_ms * 1e6 / a.kernels)
            corr[0] += 1
            events[r].append(("kernel", f"void gemm_kernel_{k % 3}<float>(float const*, float*)",
                              t, d, corr[0], None))
            t += d + int(rnd.uniform(1000, 3000))
        ready[r] = t

    def collective(gname, coll, nelems, dtype):
        nonlocal outlier_done
        desc, members = groups[gname]
        seq[gname] += 1
        size = DTYPES[dtype][0]
        n = len(members)
        if coll == "allreduce":
            in_n, out_n = nelems, nelems
        elif coll == "allgather":
            in_n, out_n = nelems // n, nelems
        else:
            in_n, out_n = nelems, nelems // n
        nbytes = max(in_n, out_n) * size
        arrive = {r: ready[r] for r in members}
        last = max(members, key=lambda r: arrive[r])
        # the last rank arrives at least 30 µs after the others, so that who
        # was last is a fact of the job, not of the noise of its clocks
        second = max(arrive[r] for r in members if r != last)
        arrive[last] = max(arrive[last], second + 30_000)
        ordered = sorted(arrive.values())
        busbw = 150e9  # bytes/s
        factor = 2 * (n - 1) / n if coll == "allreduce" else (n - 1) / n
        xfer = int(nbytes * factor / busbw * 1e9) + 8000
        end = arrive[last] + xfer
        legacy = a.legacy_names or gname != "0"
        for r in members:
            e = end + int(rnd.gauss(0, 2000))
            if not outlier_done and r == 2 and seq[gname] == 3:
                e += 400_000
                outlier_done = True
            corr[0] += 1
            args = {
                "Collective name": coll, "In msg nelems": in_n, "Out msg nelems": out_n,
                "Group size": n, "dtype": dtype, "In split size": "[]", "Out split size": "[]",
                "Process Group Name": gname, "Process Group Description": desc,
                "Process Group Ranks": str(members),
            }
            if not a.no_seq:
                args["Seq"] = seq[gname]
            events[r].append(("nccl", kernel_name(coll, dtype, legacy), arrive[r],
                              max(e - arrive[r], 1000), corr[0], args))
            ready[r] = e + int(rnd.uniform(2000, 5000))
        truth_colls.append({"group": gname, "seq": seq[gname], "name": coll,
                            "ranks": members, "bytes": nbytes, "last_rank": last,
                            "arrival_skew_ns": ordered[-1] - ordered[0],
                            "straggler_delay_ns": ordered[-1] - ordered[-2]})

    for s in range(a.steps):
        start = {r: ready[r] for r in range(a.ranks)}
        for r in range(a.ranks):
            compute_chunk(r, 400_000)
        for i in range(2):
            for r in range(a.ranks):
                if i:
                    compute_chunk(r, 300_000)
            for gname in sorted(set(node_group.values())):
                collective(gname, "allreduce", 4 << 20, "BFloat16")
        for r in range(a.ranks):
            compute_chunk(r, 900_000)
        for b in range(3):
            collective("0", "allreduce", (8 + 4 * b) << 20, "Float")
            for r in range(a.ranks):
                compute_chunk(r, 150_000)
        collective("0", "allgather", 16 << 20, "BFloat16")
        collective("0", "reduce_scatter", 16 << 20, "Float")
        for r in range(a.ranks):
            compute_chunk(r, 100_000)
        steps.append({r: (start[r], ready[r]) for r in range(a.ranks)})
        # the next step starts together after a host-side barrier-free gap
        t_next = max(ready.values()) + 50_000
        for r in range(a.ranks):
            ready[r] = t_next

    truth_ranks = []
    ext = ".json.gz" if a.gzip else ".json"
    pg_config = [{"pg_name": g, "pg_desc": d, "backend_config": "cuda:nccl",
                  "pg_size": len(m), "ranks": m} for g, (d, m) in groups.items()]
    for r in range(a.ranks):
        node, local = divmod(r, per_node)
        first_local = t_true + clock[r] - 2_000_000
        base = first_local // 1_000_000_000 * 1_000_000_000

        def us(t_true_ns):
            local_ns = t_true_ns + clock[r] - base
            return round(local_ns / 1000, 3)

        pid = 4000 + local  # collides across nodes on purpose
        tev = []
        tev.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": "python3"}})
        tev.append({"ph": "M", "name": "process_labels", "pid": pid, "tid": 0,
                    "args": {"labels": f"CPU"}})
        tev.append({"ph": "M", "name": "process_name", "pid": local, "tid": 0,
                    "args": {"name": "python3"}})
        tev.append({"ph": "M", "name": "process_labels", "pid": local, "tid": 0,
                    "args": {"labels": f"GPU {local}"}})
        for si, st in enumerate(steps):
            s0, s1 = st[r]
            tev.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{si}",
                        "pid": pid, "tid": pid, "ts": us(s0 - 30_000),
                        "dur": round((s1 - s0 + 30_000) / 1000, 3), "args": {"External id": si + 1}})
        for kind, name, t0, d, c, args in events[r]:
            stream = 7 if kind == "kernel" else 20 + (0 if args["Process Group Name"] == "0" else 4)
            launch = t0 - 25_000
            cpu_name = "record_param_comms" if kind == "nccl" else "aten::mm"
            cpu_args = {"External id": c}
            if kind == "nccl":
                cpu_args.update({k: v for k, v in args.items()})
            tev.append({"ph": "X", "cat": "cpu_op", "name": cpu_name, "pid": pid, "tid": pid,
                        "ts": us(launch - 4000), "dur": 6.0, "args": cpu_args})
            tev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": pid,
                        "tid": pid, "ts": us(launch), "dur": 3.5,
                        "args": {"External id": c, "correlation": c}})
            kargs = {"External id": c, "queued": 0, "device": local, "context": 1,
                     "stream": stream, "correlation": c, "registers per thread": 96,
                     "shared memory": 0, "grid": [16, 1, 1], "block": [512, 1, 1]}
            if args:
                kargs.update(args)
            tev.append({"ph": "X", "cat": "kernel", "name": name, "pid": local, "tid": stream,
                        "ts": us(t0), "dur": round(d / 1000, 3), "args": kargs})
            tev.append({"ph": "s", "id": c, "pid": pid, "tid": pid, "ts": us(launch),
                        "cat": "ac2g", "name": "ac2g"})
            tev.append({"ph": "f", "id": c, "pid": local, "tid": stream, "ts": us(t0),
                        "cat": "ac2g", "name": "ac2g", "bp": "e"})
        doc = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": local, "name": "NVIDIA H200", "totalGlobalMem": 150_000_000_000}],
            "distributedInfo": {"backend": "nccl", "rank": r, "world_size": a.ranks,
                                "pg_count": len(groups), "pg_config": pg_config,
                                "nccl_version": "2.21.5"},
            "record_shapes": 1,
            "traceEvents": tev,
            "traceName": f"node{node}_{pid}.pt.trace.json",
            "displayTimeUnit": "ms",
            "baseTimeNanoseconds": base,
        }
        path = os.path.join(a.outdir, f"rank-{r}{ext}")
        data = json.dumps(doc, separators=(", ", ": ")).encode()
        if a.gzip:
            with gzip.open(path, "wb", compresslevel=3) as f:
                f.write(data)
        else:
            with open(path, "wb") as f:
                f.write(data)
        truth_ranks.append({"rank": r, "file": os.path.basename(path), "node": node,
                            "clock_offset_ns": clock[r], "base_time_ns": base,
                            "expected_offset_ns": clock[0] - clock[r]})
    truth = {"reference_rank": 0, "straggler": a.straggler, "ranks": truth_ranks,
             "collectives": truth_colls, "seq": not a.no_seq}
    with open(os.path.join(a.outdir, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)


if __name__ == "__main__":
    main()
