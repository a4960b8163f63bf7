#!/usr/bin/env python3
# On the GPU machine: python3 tools/device/make-gpu-data.py OUTDIR writes the torch 2.x traces and
# allocator snapshots Wick is checked against (eager, with_stack + memory timeline, torch.compile,
# CUDA-graph replay, two streams, training/expandable/OOM snapshots, a 2-rank gloo run on one GPU).
# The 2026-12-01 outputs (H200, torch 2.11) are what tests/data/{gpu,snapshot,ranks}/h200-* came from.
# Makes torch 2.x profiler traces and allocator snapshots on the GPU machine for Wick's tests.
import os, sys, json, gzip, time, traceback, subprocess, shutil
import torch, torch.nn as nn, torch.nn.functional as F
from torch.profiler import profile, ProfilerActivity, schedule, record_function
OUT = sys.argv[1]
os.makedirs(OUT, exist_ok=True)
dev = "cuda"
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0), flush=True)

class Block(nn.Module):
    def __init__(s, d, h):
        super().__init__(); s.ln1 = nn.LayerNorm(d); s.attn = nn.MultiheadAttention(d, h, batch_first=True)
        s.ln2 = nn.LayerNorm(d); s.mlp = nn.Sequential(nn.Linear(d, 4*d), nn.GELU(), nn.Linear(4*d, d))
    def forward(s, x):
        y = s.ln1(x); x = x + s.attn(y, y, y, need_weights=False)[0]
        return x + s.mlp(s.ln2(x))
class GPT(nn.Module):
    def __init__(s, v=4096, d=256, L=4, h=4):
        super().__init__(); s.emb = nn.Embedding(v, d); s.blocks = nn.ModuleList([Block(d, h) for _ in range(L)])
        s.ln = nn.LayerNorm(d); s.head = nn.Linear(d, v)
    def forward(s, idx):
        x = s.emb(idx)
        for b in s.blocks: x = b(x)
        return s.head(s.ln(x))

def train_steps(model, opt, n, prof=None, bs=8, T=128):
    for i in range(n):
        idx = torch.randint(0, 4096, (bs, T), device=dev)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(idx).view(-1, 4096).float(), idx.view(-1))
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        if prof is not None: prof.step()
    torch.cuda.synchronize()

def step(name, fn):
    t = time.time()
    try:
        fn(); print(f"OK {name} {time.time()-t:.1f}s", flush=True)
    except Exception:
        print(f"FAILED {name}", flush=True); traceback.print_exc()

def eager(with_stack, tag):
    torch.manual_seed(0); m = GPT().to(dev); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    train_steps(m, opt, 2)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=1, warmup=1, active=3),
                 record_shapes=True, profile_memory=True, with_stack=with_stack) as p:
        train_steps(m, opt, 5, p)
    p.export_chrome_trace(f"{OUT}/{tag}.json")
    if with_stack:
        try:
            p.export_memory_timeline(f"{OUT}/{tag}-memtl.json", device="cuda:0")
            p.export_memory_timeline(f"{OUT}/{tag}-memtl.raw.json.gz", device="cuda:0")
        except Exception: traceback.print_exc()

def compiled():
    torch.manual_seed(0); m = GPT().to(dev); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    cm = torch.compile(m)
    train_steps(cm, opt, 3)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=0, warmup=1, active=3, repeat=1),
                 record_shapes=True) as p:
        train_steps(cm, opt, 4, p)
    p.export_chrome_trace(f"{OUT}/compile.json")

def cudagraph():
    torch.manual_seed(0); m = GPT(L=2).to(dev).eval(); idx = torch.randint(0, 4096, (8, 128), device=dev)
    s = torch.cuda.Stream(); s.wait_stream(torch.cuda.current_stream())
    with torch.no_grad(), torch.cuda.stream(s):
        for _ in range(3): m(idx)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.no_grad(), torch.cuda.graph(g): out = m(idx)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=0, warmup=1, active=4, repeat=1)) as p:
        for i in range(5):
            with record_function(f"replay_{i}"): g.replay()
            with torch.no_grad(): m(idx)  # eager beside it
            p.step()
    torch.cuda.synchronize(); p.export_chrome_trace(f"{OUT}/cudagraph.json")

def multistream():
    a = torch.randn(2048, 2048, device=dev); b = torch.randn(2048, 2048, device=dev)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream(); h = torch.empty(2048*2048, pin_memory=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=schedule(wait=0, warmup=1, active=3, repeat=1)) as p:
        for i in range(4):
            with record_function("two_streams"):
                with torch.cuda.stream(s1): c = a @ b; c.relu_()
                with torch.cuda.stream(s2): d = b @ a; h.copy_(d.view(-1), non_blocking=True)
                e = torch.zeros(1024, 1024, device=dev)
            torch.cuda.synchronize(); p.step()
    p.export_chrome_trace(f"{OUT}/multistream.json")

def snap_train():
    torch.cuda.memory._record_memory_history(max_entries=20000)
    torch.manual_seed(0); m = GPT().to(dev); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    train_steps(m, opt, 3)
    torch.cuda.memory._dump_snapshot(f"{OUT}/snap-train.pickle")
    torch.cuda.memory._record_memory_history(enabled=None)

def snap_oom():
    torch.cuda.memory._record_memory_history(max_entries=5000)
    keep = []
    try:
        x = torch.empty(int(1.5e9), dtype=torch.float32, device=dev); keep.append(x)
        free, total = torch.cuda.mem_get_info()
        keep.append(torch.empty(int(free*1.5), dtype=torch.uint8, device=dev))
    except torch.OutOfMemoryError as e:
        print("OOM as planned:", str(e)[:120])
    torch.cuda.memory._dump_snapshot(f"{OUT}/snap-oom.pickle")
    torch.cuda.memory._record_memory_history(enabled=None); del keep; torch.cuda.empty_cache()

def snap_expandable():
    env = dict(os.environ, PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True", WICK_GEN_ONLY="snap_train_exp")
    subprocess.run([sys.executable, os.path.abspath(__file__), OUT], env=env, check=True, timeout=300)

def ranks2():
    port = "29577"
    code = r'''
import os, sys, torch, torch.distributed as dist
from torch.profiler import profile, ProfilerActivity
r = int(sys.argv[1]); out = sys.argv[2]
dist.init_process_group("gloo", rank=r, world_size=2, init_method="tcp://127.0.0.1:%s")
t = torch.randn(1<<20, device="cuda"); w = torch.randn(1024,1024, device="cuda")
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
    for i in range(6):
        with torch.profiler.record_function("ProfilerStep#%%d" %% i):
            y = w @ w
            if r == 1: torch.cuda._sleep(2000000*(1 if i != 3 else 10))
            c = t.cpu(); dist.all_reduce(c); dist.broadcast(c, 0); t.copy_(c)
            torch.cuda.synchronize()
p.export_chrome_trace(f"{out}/rank{r}.json")
dist.destroy_process_group()
''' % port
    open("/tmp/r.py", "w").write(code)
    ps = [subprocess.Popen([sys.executable, "/tmp/r.py", str(r), OUT]) for r in range(2)]
    for p in ps: p.wait(timeout=240)

if os.environ.get("WICK_GEN_ONLY") == "snap_train_exp":
    torch.cuda.memory._record_memory_history(max_entries=20000)
    torch.manual_seed(0); m = GPT().to(dev); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    train_steps(m, opt, 3)
    torch.cuda.memory._dump_snapshot(f"{OUT}/snap-expandable.pickle"); sys.exit(0)

step("eager", lambda: eager(False, "eager"))
step("eager_stack", lambda: eager(True, "eager-stack"))
step("compile", compiled)
step("cudagraph", cudagraph)
step("multistream", multistream)
step("snap_train", snap_train)
step("snap_oom", snap_oom)
step("snap_expandable", snap_expandable)
step("ranks2", ranks2)
for f in sorted(os.listdir(OUT)): print(f, os.path.getsize(f"{OUT}/{f}"))
