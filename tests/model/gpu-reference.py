#!/usr/bin/python3
"""An independent reference for `wick-trace gpu --json` (docs/gpu.md), over
json.load of the trace and nothing of Wick's: per kernel name its count,
total, min, max, mean and share; per device the union of its kernel, memcpy
and memset intervals and the sums; per operator (cpu_op) its count, total,
self and launched GPU time; per ProfilerStep#N its window, GPU busy, idle,
compute, communication, memcpy and CPU-only time; and the launches (correlation ids).

Times: the file's µs written in decimal to ns exactly (json.load with
Decimal; the fourth decimal rounds half up, later ones are ignored, as the
importer does).

As a TAP test:  gpu-reference.py WICK_TRACE FILE...   (one test per file:
wick-trace gpu --json against this, every figure exactly equal)
As a tool:      gpu-reference.py --print FILE          (the reference's JSON)
"""
import collections
import decimal
import gzip
import json
import re
import subprocess
import sys

KERNEL = {"kernel", "Kernel", "hip_kernel"}
MEMCPY = {"gpu_memcpy", "Memcpy"}
MEMSET = {"gpu_memset", "Memset"}
DEVICE = KERNEL | MEMCPY | MEMSET | {"gpu_user_annotation", "gpu_op", "mtia_ccp_events"}
RUNTIME = {"cuda_runtime", "cuda_driver", "hip_runtime", "hip_driver", "Runtime",
           "privateuse1_runtime", "mtia_runtime"}
OPERATOR = {"cpu_op", "Operator"}
STEP = re.compile(r"^ProfilerStep#[0-9]+$")


def load(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    d = json.loads(raw, parse_float=decimal.Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def ns(v):
    """µs as written -> ns: the fourth decimal rounds half up."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v * 1000
    if isinstance(v, str):
        try:
            v = decimal.Decimal(v.strip())
        except decimal.InvalidOperation:
            return None
    q = abs(v) * 1000
    whole = int(q)
    if int((q - whole) * 10) >= 5:
        whole += 1
    return -whole if v < 0 else whole


def number(v):
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, decimal.Decimal)):
        return int(v)
    return None


def is_comm(name):
    n = name.lower()
    return "nccl" in n or "rccl" in n


def union(intervals):
    out = []
    for s, e in sorted(intervals):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def within(u, s, e):
    return sum(max(0, min(b, e) - max(a, s)) for a, b in u)


def reference(path):
    events = load(path)
    work = []   # (start, end, kind, name, device, correlation)
    stream_work = []  # (device, stream, start, end, correlation)
    graph_work = []  # the same and the `graph id` arg (None when not written)
    host = collections.defaultdict(list)  # thread -> [(ts, -dur, seq, event)]
    # a job merged by wick-trace ranks names each rank's processes
    # "rank N · NAME": each rank's devices are its own ("rank N cuda:0")
    rank_of_pid = {}
    for e in events:
        if isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name":
            m = RANK_PROCESS.match(str((e.get("args") or {}).get("name", "")))
            if m:
                rank_of_pid[str(e.get("pid", 0))] = "rank %s " % m.group(1)
    for seq, e in enumerate(events):
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        ts = ns(e["ts"])
        if ts is None:
            continue
        dur = ns(e.get("dur"))
        dur = dur if dur is not None and dur > 0 else 0
        cat = e.get("cat")
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        if cat in DEVICE:
            if cat not in KERNEL | MEMCPY | MEMSET:
                continue
            kind = "kernel" if cat in KERNEL else "memcpy" if cat in MEMCPY else "memset"
            dev = number(args.get("device"))
            device = "cuda:%d" % dev if dev is not None else str(e.get("pid", 0))
            device = rank_of_pid.get(str(e.get("pid", 0)), "") + device
            corr = number(args.get("correlation")) or 0
            work.append((ts, ts + dur, kind, e.get("name", ""), device, corr))
            st = number(args.get("stream"))
            stream = str(st) if st is not None else str(e.get("tid", 0))
            stream_work.append((device, stream, ts, ts + dur, corr))
            gid = number(args.get("graph id"))
            graph_work.append((ts, ts + dur, kind, e.get("name", ""), device, corr,
                               gid if gid is not None and gid >= 0 else None))
            continue
        host[(str(e.get("pid", 0)), str(e.get("tid", e.get("pid", 0))))].append(
            (ts, -dur, seq, e.get("name", ""), cat, args))

    # host nesting per thread: by start, longer first, then file order; a
    # slice nests under the innermost one that has not ended by its start
    spans = []  # [start, dur, name, cat, parent, child_ns, corr]
    for key in sorted(host):
        stack = []
        for ts, mdur, seq, name, cat, args in sorted(host[key]):
            dur = -mdur
            while stack and spans[stack[-1]][0] + spans[stack[-1]][1] <= ts:
                stack.pop()
            parent = stack[-1] if stack else -1
            corr = number(args.get("correlation")) if cat in RUNTIME else None
            spans.append([ts, dur, name, cat, parent, 0, corr or 0])
            if parent >= 0:
                p = spans[parent]
                spans[parent][5] += max(0, min(ts + dur, p[0] + p[1]) - ts)
            stack.append(len(spans) - 1)

    launcher = {}
    for i, s in enumerate(spans):
        if s[6] and (s[6] not in launcher or s[0] < spans[launcher[s[6]]][0]):
            launcher[s[6]] = i

    devices = collections.defaultdict(lambda: {"busy": [], "kernel_ns": 0, "memcpy_ns": 0,
                                               "memset_ns": 0, "comm_ns": 0})
    kernels = {}
    gpu_of_span = collections.Counter()
    delays = []
    launches = set()
    unmatched = 0
    for s, e, kind, name, device, corr in work:
        d = devices[device]
        d["busy"].append((s, e))
        d[kind + "_ns"] += e - s
        if kind == "kernel":
            if is_comm(name):
                d["comm_ns"] += e - s
            k = kernels.setdefault(name, {"count": 0, "total_ns": 0, "min_ns": None, "max_ns": 0})
            k["count"] += 1
            k["total_ns"] += e - s
            k["min_ns"] = e - s if k["min_ns"] is None else min(k["min_ns"], e - s)
            k["max_ns"] = max(k["max_ns"], e - s)
        if corr and corr in launcher:
            L = launcher[corr]
            launches.add(L)
            delays.append(s - spans[L][0])
            p = L
            while p >= 0:
                if spans[p][3] in OPERATOR:
                    gpu_of_span[p] += e - s
                p = spans[p][4]
        else:
            unmatched += 1
    total = sum(k["total_ns"] for k in kernels.values())
    for name, k in kernels.items():
        k["mean_ns"] = k["total_ns"] / k["count"]
        k["share"] = k["total_ns"] / total if total else 0
        k["name"] = name

    operators = {}
    for i, s in enumerate(spans):
        if s[3] not in OPERATOR:
            continue
        o = operators.setdefault(s[2], {"name": s[2], "count": 0, "cpu_self_ns": 0,
                                        "cpu_total_ns": 0, "gpu_ns": 0})
        o["count"] += 1
        o["cpu_total_ns"] += s[1]
        o["cpu_self_ns"] += max(0, s[1] - s[5])
        o["gpu_ns"] += gpu_of_span[i]

    u_all = union([(s, e) for s, e, *_ in work])
    u_compute = union([(s, e) for s, e, kind, name, *_ in work
                       if kind == "kernel" and not is_comm(name)])
    u_cc = union([(s, e) for s, e, kind, *_ in work if kind == "kernel"])
    # the GPU waiting on the host: host operators and runtime calls, with
    # the GPU's work, less the GPU's work
    u_host = union([(s, e) for s, e, *_ in work]
                   + [(s[0], s[0] + s[1]) for s in spans if s[3] in OPERATOR | RUNTIME])
    steps = []
    for s in spans:
        if not STEP.match(s[2]):
            continue
        a, b = s[0], s[0] + s[1]
        busy = within(u_all, a, b)
        compute = within(u_compute, a, b)
        cc = within(u_cc, a, b)
        steps.append({"name": s[2], "start_ns": a, "dur_ns": s[1], "gpu_busy_ns": busy,
                      "idle_ns": s[1] - busy, "compute_ns": compute, "comm_ns": cc - compute,
                      "memcpy_ns": busy - cc, "cpu_only_ns": within(u_host, a, b) - busy})
    steps.sort(key=lambda x: (x["start_ns"], x["name"]))

    delays.sort()

    def rank(p):
        k = max(1, (p * len(delays) + 99) // 100)
        return delays[k - 1] if delays else 0

    # CUDA graphs: the work of one graph launch (its launcher named
    # cudaGraphLaunch...) by start; the same graph id, or else the same
    # kernel names in the same order, is the same graph; its stage is the
    # "wick stage: NAME" slice around the launch
    replays = collections.defaultdict(list)
    for seq, (s, e, kind, name, device, corr, gid) in enumerate(graph_work):
        L = launcher.get(corr) if corr else None
        if L is not None and spans[L][2].startswith(GRAPH_LAUNCH):
            replays[L].append((s, seq, e - s, kind, name, gid))
    graphs = {}
    for L in sorted(replays, key=lambda L: spans[L][0]):
        items = sorted(replays[L])
        gid = items[0][5]
        key = ("id", gid) if gid is not None else ("names", tuple(i[4] for i in items))
        stage = None
        p = L
        while p >= 0:
            if spans[p][2].startswith(STAGE) and len(spans[p][2]) > len(STAGE):
                stage = spans[p][2][len(STAGE):]
                break
            p = spans[p][4]
        g = graphs.setdefault(key, {"graph_id": gid, "nodes": len(items), "replays": 0,
                                    "kernels": 0, "gpu_ns": 0, "stage": stage, "by_kernel": {}})
        g["replays"] += 1
        for s, seq, dur, kind, name, _ in items:
            g["gpu_ns"] += dur
            if kind == "kernel":
                g["kernels"] += 1
                k = g["by_kernel"].setdefault(name, {"name": name, "count": 0, "total_ns": 0})
                k["count"] += 1
                k["total_ns"] += dur
    stages = {}
    for g in graphs.values():
        if g["stage"] is None:
            continue
        st = stages.setdefault(g["stage"], {"name": g["stage"], "graphs": 0, "replays": 0,
                                           "kernels": 0, "gpu_ns": 0, "by_kernel": {}})
        st["graphs"] += 1
        for f in ("replays", "kernels", "gpu_ns"):
            st[f] += g[f]
        for name, k in g["by_kernel"].items():
            sk = st["by_kernel"].setdefault(name, {"name": name, "count": 0, "total_ns": 0})
            sk["count"] += k["count"]
            sk["total_ns"] += k["total_ns"]
    for g in graphs.values():
        del g["by_kernel"]
    for st in stages.values():
        st["by_kernel"] = sorted(st["by_kernel"].values(), key=lambda k: k["name"])

    idle, stretches = idle_gaps(stream_work, spans, launcher)
    for st in steps:
        a, b = st["start_ns"], st["start_ns"] + st["dur_ns"]
        st["launch_bound_ns"] = sum(max(0, min(e, b) - max(s, a)) for s, e, *_ in stretches)
    short = [k for s, e, kind, *_ in work if kind == "kernel" for k in [e - s] if k < SHORT_NS]
    span_ns = (max(e for s, e, *_ in work) - min(s for s, *_ in work)) if work else 0
    total = sum(e - s for s, e, *_ in stretches)
    longest = sorted(stretches, key=lambda x: (-(x[1] - x[0]), x[0]))[:10]
    return {
        "idle": idle,
        "launch_bound": {"stretches": len(stretches), "total_ns": total, "gpu_span_ns": span_ns,
                         "share": total / span_ns if span_ns else 0,
                         "longest": [{"start_ns": s, "dur_ns": e - s, "device": d, "stream": st,
                                      "launch": ln, "operator": op}
                                     for s, e, d, st, ln, op in longest]},
        "graphs": sorted(graphs.values(), key=graph_key),
        "stages": sorted(stages.values(), key=lambda st: st["name"]),
        "devices": [{"device": k, "busy_ns": within(union(v["busy"]), 0, 1 << 63),
                     "kernel_ns": v["kernel_ns"], "memcpy_ns": v["memcpy_ns"],
                     "memset_ns": v["memset_ns"], "comm_ns": v["comm_ns"]}
                    for k, v in sorted(devices.items())],
        "kernels": sorted(kernels.values(), key=lambda k: (-k["total_ns"], k["name"].encode())),
        "operators": sorted(operators.values(), key=lambda o: o["name"]),
        "steps": steps,
        "launches": {"flows": len(delays), "to_kernel": len(launches), "unmatched": unmatched,
                     "delay_p50_ns": rank(50), "delay_p99_ns": rank(99),
                     "short_kernels": len(short), "short_kernel_ns": sum(short),
                     "short_threshold_ns": SHORT_NS},
    }


SHORT_NS = 10000       # a kernel shorter than this is short
KERNEL_WAIT_NS = 10000  # a gap shorter than this, not waiting on a launch, is kernel wait
LAUNCH_SLACK_NS = 5000  # a start this soon after its launch returned waited on it


def idle_gaps(stream_work, spans, launcher):
    """Per stream (device, stream): its gaps between consecutive work (by
    start; the gap runs from the latest end so far) as host wait (the next
    interval's launch began after the stream went idle, or was still running
    then and the interval started within LAUNCH_SLACK_NS of its return),
    kernel wait (shorter than KERNEL_WAIT_NS) or other; and every host-wait
    gap as a stretch (start, end, device, stream, launch name, operator)."""
    by_stream = collections.defaultdict(list)
    for device, stream, s, e, corr in stream_work:
        by_stream[(device, stream)].append((s, e, corr))
    idle, stretches = [], []
    for (device, stream), items in sorted(by_stream.items()):
        row = {"device": device, "stream": stream, "host_wait_ns": 0, "kernel_wait_ns": 0,
               "other_ns": 0, "stretches": 0}
        items.sort(key=lambda x: (x[0], x[1]))
        idle_from = items[0][1]
        for s, e, corr in items[1:]:
            if s > idle_from:
                gap = s - idle_from
                L = launcher.get(corr) if corr else None
                waits = False
                if L is not None:
                    ls, le = spans[L][0], spans[L][0] + spans[L][1]
                    waits = ls > idle_from or (le > idle_from and s < le + LAUNCH_SLACK_NS)
                if waits:
                    row["host_wait_ns"] += gap
                    row["stretches"] += 1
                    op, p = None, L
                    while p >= 0:
                        if spans[p][3] in OPERATOR:
                            op = spans[p][2]
                            break
                        p = spans[p][4]
                    stretches.append((idle_from, s, device, stream, spans[L][2], op))
                elif gap < KERNEL_WAIT_NS:
                    row["kernel_wait_ns"] += gap
                else:
                    row["other_ns"] += gap
            idle_from = max(idle_from, e)
        idle.append(row)
    return idle, stretches


RANK_PROCESS = re.compile(r"^rank ([0-9]+) \u00b7 ")
GRAPH_LAUNCH = ("cudaGraphLaunch", "hipGraphLaunch", "cuGraphLaunch")
STAGE = "wick stage: "


def graph_key(g):
    return (g["nodes"], g["replays"], g["kernels"], g["gpu_ns"], g["stage"] or "",
            -1 if g["graph_id"] is None else g["graph_id"])


def differences(got, want):
    out = []
    got = dict(got)
    got["operators"] = sorted(got["operators"], key=lambda o: o["name"])
    # graphs as a multiset (their order is by first launch's span index in
    # Wick, by first launch's start here); a stage's kernels by name
    got["graphs"] = sorted(({k: v for k, v in g.items() if k != "graph"}
                            for g in got.get("graphs", [])), key=graph_key)
    got["stages"] = sorted((dict(st, by_kernel=sorted(st["by_kernel"], key=lambda k: k["name"]))
                            for st in got.get("stages", [])), key=lambda st: st["name"])
    for key in ("graphs", "stages"):
        if got[key] != want[key]:
            out.append("%s: %s, the reference says %s"
                       % (key, json.dumps(got[key])[:400], json.dumps(want[key])[:400]))
    got_idle = sorted(got.get("idle", []), key=lambda r: (r["device"], r["stream"]))
    if got_idle != want["idle"]:
        out.append("idle: %s, the reference says %s"
                   % (json.dumps(got_idle)[:600], json.dumps(want["idle"])[:600]))
    glb, wlb = got.get("launch_bound", {}), want["launch_bound"]
    for field in ("stretches", "total_ns", "gpu_span_ns"):
        if glb.get(field) != wlb[field]:
            out.append("launch_bound: %s is %r, the reference says %r"
                       % (field, glb.get(field), wlb[field]))
    if abs(glb.get("share", -1) - wlb["share"]) > 1e-12:
        out.append("launch_bound: share is %r, the reference says %r"
                   % (glb.get("share"), wlb["share"]))
    # the longest by length (ties by start; equal ones in either order)
    key = lambda x: (-x["dur_ns"], x["start_ns"], x["device"], x["stream"])
    if sorted(glb.get("longest", []), key=key) != sorted(wlb["longest"], key=key):
        out.append("launch_bound longest: %s, the reference says %s"
                   % (json.dumps(glb.get("longest"))[:600], json.dumps(wlb["longest"])[:600]))
    for key in ("devices", "kernels", "operators", "steps"):
        g, w = got[key], want[key]
        if len(g) != len(w):
            out.append("%s: %d rows, the reference has %d" % (key, len(g), len(w)))
        for a, b in zip(g, w):
            for field in b:
                if a.get(field) != b[field]:
                    out.append("%s %s: %s is %r, the reference says %r"
                               % (key, b.get("name", b.get("device")), field, a.get(field), b[field]))
    for field, v in want["launches"].items():
        if got["launches"].get(field) != v:
            out.append("launches: %s is %r, the reference says %r"
                       % (field, got["launches"].get(field), v))
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "--print":
        json.dump(reference(argv[2]), sys.stdout, indent=1)
        print()
        return 0
    wick_trace, files = argv[1], argv[2:]
    print("1..%d" % len(files))
    failed = 0
    for i, path in enumerate(files, 1):
        run = subprocess.run([wick_trace, "gpu", "--json", path], capture_output=True, timeout=300)
        if run.returncode not in (0, 1):
            print("not ok %d %s: wick-trace gpu exited %d: %s"
                  % (i, path, run.returncode, run.stderr.decode(errors="replace").strip()))
            failed += 1
            continue
        diff = differences(json.loads(run.stdout), reference(path))
        if diff:
            failed += 1
            print("not ok %d %s" % (i, path))
            for line in diff[:20]:
                print("# " + line)
        else:
            print("ok %d %s" % (i, path))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
