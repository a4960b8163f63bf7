#!/usr/bin/env python3
"""bench-graph-process.py MODE — which part of a torch process makes a
128-kernel CUDA graph of bench-stage-replay's kernels replay faster (0.805 us
a kernel) than in the C benchmark's process (0.984), with the same library
code and the same timed loop (stage_test_time_launches), when a 512-kernel
graph costs the same in both. PROBE_LIBS names the nvcc
build of tests/cuda/stages/stage-test-kernels.cu (its first sass entry).

Modes, each its own process:
  ctypes          no torch at all: the library makes the context and graphs
  torch-imported  `import torch` first (its libraries loaded, CUDA untouched)
  torch-after     graphs made and timed first, then torch initialises CUDA
                  (a tensor on the device), then the same graphs timed again
                  and new ones made and timed
Prints PROCESS lines (median of 11 blocks, us a kernel)."""
import ctypes
import os
import statistics
import sys

N = 128
ROUNDS = 11


def load():
    path = next(p for p in os.environ["PROBE_LIBS"].split(":") if p.endswith("sass.so"))
    lib = ctypes.CDLL(path)
    lib.stage_test_alloc.restype = ctypes.c_void_p
    lib.stage_test_alloc.argtypes = [ctypes.c_size_t]
    lib.stage_test_stream_new.restype = ctypes.c_void_p
    lib.stage_test_bare_graph_variant.restype = ctypes.c_void_p
    lib.stage_test_bare_graph_variant.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                  ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    lib.stage_test_time_launches.restype = ctypes.c_double
    lib.stage_test_time_launches.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_double]
    return lib


def make(lib, stream, kernels):
    inp = lib.stage_test_alloc(N * 4)
    out = lib.stage_test_alloc(N * 4)
    return lib.stage_test_bare_graph_variant(inp, out, N, kernels, 128, 0, stream)


def measure(lib, stream, graphs, mode, when):
    for kernels, exec_ in graphs:
        launches = 50 if kernels < 512 else 20
        lib.stage_test_time_launches(exec_, stream, launches, 0.0)
        values = [lib.stage_test_time_launches(exec_, stream, launches, 0.0) * 1e3 / (launches * kernels)
                  for _ in range(ROUNDS)]
        print(f"PROCESS mode={mode} when={when} kernels={kernels} us_per_kernel={statistics.median(values):.4f} "
              f"min={min(values):.4f} max={max(values):.4f}", flush=True)


def main():
    mode = sys.argv[1]
    if mode == "torch-imported":
        import torch  # noqa: F401  (libraries loaded, CUDA not initialised)
    lib = load()
    stream = ctypes.c_void_p(lib.stage_test_stream_new())
    graphs = [(k, ctypes.c_void_p(make(lib, stream, k))) for k in (128, 512)]
    measure(lib, stream, graphs, mode, "first")
    if mode == "torch-after":
        import torch
        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        measure(lib, stream, graphs, mode, "after-torch-init")
        fresh = [(k, ctypes.c_void_p(make(lib, stream, k))) for k in (128, 512)]
        measure(lib, stream, fresh, mode, "new-after-torch-init")
        s2 = torch.cuda.Stream()
        measure(lib, ctypes.c_void_p(s2.cuda_stream), fresh, mode, "new-on-torch-stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
