"""wick.torch.instrument's instructions, for callgrind (docs/performance.md,
"wick.torch instrument cost, py22c"). Four os.getppid() calls split the run:
with `valgrind --tool=callgrind --dump-before=getppid` dump 2 holds N loops of
a model of 10 identity leaves (11 module calls a loop, no_grad) and dump 4
holds S training steps of a 4-block MLP (Linear, GELU, LayerNorm: 14 module
calls a step), AdamW, each inside inst.step() when instrumented. Subtract the
writer thread (start_thread's inclusive count) for the main thread's figure.

    valgrind --tool=callgrind --dump-before=getppid python3 THIS MODE 1000 20

MODE: plain, nomem (instrument(memory=False)) or memory (instrument)."""
import contextlib, os, sys, tempfile, torch, wick, wick.torch
mode, n, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
ident = torch.nn.Sequential(*[torch.nn.Identity() for _ in range(10)])
blocks = []
for _ in range(4):
    blocks += [torch.nn.Linear(64, 64), torch.nn.GELU(), torch.nn.LayerNorm(64)]
mlp = torch.nn.Sequential(*blocks)
opt = torch.optim.AdamW(mlp.parameters(), lr=1e-3)
x, xb, yb = torch.ones(4), torch.randn(8, 64), torch.randn(8, 64)
path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
with wick.Session("cg", device="cpu", jsonl_path=path) as s:
    if mode == "plain":
        step = contextlib.nullcontext
    def train():
        loss = torch.nn.functional.mse_loss(mlp(xb), yb)
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
    def calls():
        with torch.no_grad():
            ident(x)
    if mode != "plain":
        inst = wick.torch.instrument(s, ident, None, memory=(mode == "memory"))
    for _ in range(50): calls()
    os.getppid()
    for _ in range(n): calls()
    os.getppid()
    if mode != "plain":
        inst.remove(); s._wick_torch = None
        inst = wick.torch.instrument(s, mlp, opt, memory=(mode == "memory"))
        step = inst.step
    for _ in range(3):
        with step(): train()
    os.getppid()
    for _ in range(steps):
        with step(): train()
    os.getppid()
