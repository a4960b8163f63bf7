#!/usr/bin/env python3
"""bench-graph-probe.py — why does torch.cuda.CUDAGraph replay a 128-kernel
chain at ~0.85 µs a kernel when a bare CUDA graph of bench-stage-replay's
kernels takes ~0.98 (and torch's own 512-kernel graph 1.02)?

A 2 x 2 in one run, each cell timed as bench-torch-graph.py times (CUDA events
around 50 (128 kernels) or 20 (512) back-to-back launches, 11 rounds, median
µs a kernel):
  kernel  torch's x.mul_(0.999) | the stage test's fma kernel (CuPy RawKernel,
          one block of 128 threads, x = fma(x, a, b), as chain_next)
  graph   torch.cuda.graph (capture on torch's side stream, torch's
          instantiate) | a raw stream capture through cuda-python on the
          launch stream, cudaGraphInstantiate with flags 0, cudaGraphUpload,
          cudaGraphLaunch
plus launch-stream variants of the raw graph (the legacy default stream, a
high-priority stream), and the launch shape of torch's kernel node (grid,
block, dynamic shared memory, registers), read from the raw graph.
With PROBE_LIBS (colon-separated paths of shared libraries built from
tests/cuda/stages/stage-test-kernels.cu by nvcc, as tools/device/session.sh's
probe step builds them), also the C benchmark's own bare graph
(stage_test_bare_graph_variant, nvcc's kernels) built and launched from this
torch process: whether the 128-node gap follows the process or the kernel's
binary. Prints PROBE lines; never fails on timing. Needs CUDA, CuPy and cuda-python;
a cell that cannot run says why.
"""
import ctypes
import os
import statistics
import sys
import traceback

import torch

N = 128
ROUNDS = 11

FMA = r"""
extern "C" __global__ void chain_next(float *output, int n, float a, float b)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    output[i] = fmaf(output[i], a, b);
}
"""


def launches_for(kernels):
    return 20 if kernels >= 512 else 50


def per_kernel(launch, stream, kernels):
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    launches = launches_for(kernels)

    def block():
        with torch.cuda.stream(stream):
            start.record()
            for _ in range(launches):
                launch()
            stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3 / (launches * kernels)

    block()
    values = [block() for _ in range(ROUNDS)]
    return statistics.median(values), min(values), max(values)


def report(name, kernels, result):
    med, lo, hi = result
    print(f"PROBE kernels={kernels} cell={name} us_per_kernel={med:.4f} min={lo:.4f} max={hi:.4f}", flush=True)


def main():
    if not torch.cuda.is_available():
        print("bench-graph-probe: skipped, no CUDA device")
        return 77
    import cupy
    from cuda.bindings import runtime as cudart

    print(f"torch {torch.__version__}, cupy {cupy.__version__}, {torch.cuda.get_device_name()}", flush=True)
    fma = cupy.RawKernel(FMA, "chain_next")
    x = torch.randn(N, device="cuda")
    xc = cupy.asarray(x)  # the same memory

    def torch_chain(kernels):
        for _ in range(kernels):
            x.mul_(0.999)

    def fma_chain(kernels, stream):
        with cupy.cuda.ExternalStream(stream.cuda_stream):
            for k in range(kernels):
                fma((1,), (128,), (xc, cupy.int32(N), cupy.float32(0.999), cupy.float32(0.0001)))

    for kernels in (() if os.environ.get("PROBE_ONLY_SAME") else (128, 512)):
        stream = torch.cuda.Stream()
        # warm both kernels eagerly on the stream
        with torch.cuda.stream(stream):
            torch_chain(kernels)
        fma_chain(kernels, stream)
        torch.cuda.synchronize()
        # torch.cuda.graph, either kernel
        for name, body in (("torch-graph/torch-kernel", lambda: torch_chain(kernels)),
                           ("torch-graph/fma-kernel", lambda: fma_chain(kernels, torch.cuda.current_stream()))):
            try:
                g = torch.cuda.CUDAGraph()
                with torch.cuda.graph(g, stream=stream):
                    body()
                torch.cuda.synchronize()
                report(name, kernels, per_kernel(g.replay, stream, kernels))
            except Exception:
                print(f"PROBE kernels={kernels} cell={name} failed", flush=True)
                traceback.print_exc()
        # raw capture on the launch stream, either kernel, launched on several streams
        for kname, body in (("torch-kernel", lambda s: torch_chain(kernels)),
                            ("fma-kernel", lambda s: fma_chain(kernels, s))):
            try:
                cs = cudart.cudaStream_t(init_value=stream.cuda_stream)
                err, = cudart.cudaStreamBeginCapture(cs, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeThreadLocal)
                assert int(err) == 0, err
                with torch.cuda.stream(stream):
                    body(stream)
                err, graph = cudart.cudaStreamEndCapture(cs)
                assert int(err) == 0, err
                err, graph_exec = cudart.cudaGraphInstantiate(graph, 0)
                assert int(err) == 0, err
                err, = cudart.cudaGraphUpload(graph_exec, cs)
                assert int(err) == 0, err
                torch.cuda.synchronize()
                if kname == "torch-kernel" and kernels == 128:
                    describe(cudart, graph)
                streams = (("capture-stream", stream), ("high-priority", torch.cuda.Stream(priority=-1)),
                           ("legacy-default", torch.cuda.default_stream()))
                for sname, launch_stream in streams:
                    ls = cudart.cudaStream_t(init_value=launch_stream.cuda_stream)

                    def launch(ls=ls):
                        cudart.cudaGraphLaunch(graph_exec, ls)

                    report(f"raw-graph/{kname}/{sname}", kernels, per_kernel(launch, launch_stream, kernels))
                cudart.cudaGraphExecDestroy(graph_exec)
                cudart.cudaGraphDestroy(graph)
            except Exception:
                print(f"PROBE kernels={kernels} cell=raw-graph/{kname} failed", flush=True)
                traceback.print_exc()
        for lib_path in [p for p in os.environ.get("PROBE_LIBS", "").split(":") if p]:
            name = "c-helper/" + os.path.basename(lib_path)
            try:
                lib = ctypes.CDLL(lib_path)
                lib.stage_test_bare_graph_variant.restype = ctypes.c_void_p
                lib.stage_test_bare_graph_variant.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                              ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                                              ctypes.c_void_p]
                lib.stage_test_graph_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
                lib.stage_test_graph_free.argtypes = [ctypes.c_void_p]
                out = torch.empty_like(x)
                handle = ctypes.c_void_p(stream.cuda_stream)
                exec_ = lib.stage_test_bare_graph_variant(ctypes.c_void_p(x.data_ptr()), ctypes.c_void_p(out.data_ptr()),
                                                          N, kernels, 128, 0, handle)
                if not exec_:
                    raise RuntimeError("stage_test_bare_graph_variant returned NULL")
                exec_ = ctypes.c_void_p(exec_)
                torch.cuda.synchronize()
                report(name, kernels, per_kernel(lambda: lib.stage_test_graph_launch(exec_, handle), stream, kernels))
                # the C benchmark's own timed loop (bench-stage-replay's bench_gaps), here
                lib.stage_test_time_launches.restype = ctypes.c_double
                lib.stage_test_time_launches.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                         ctypes.c_double]
                launches = launches_for(kernels)
                gaps = (0.0, 2.0, 5.0, 10.0, 20.0, 50.0)
                cost = {g: [] for g in gaps}
                for r in range(-1, ROUNDS):
                    for g in (gaps if r % 2 == 0 else tuple(reversed(gaps))):
                        ms = lib.stage_test_time_launches(exec_, handle, launches, g)
                        if r >= 0:
                            cost[g].append(ms * 1e3 / (launches * kernels))
                for g in gaps:
                    print(f"GAP process=torch lib={os.path.basename(lib_path)} kernels={kernels} gap_us={g:.0f} "
                          f"us_per_kernel={statistics.median(cost[g]):.4f}", flush=True)
                lib.stage_test_graph_free(exec_)
            except Exception:
                print(f"PROBE kernels={kernels} cell={name} failed", flush=True)
                traceback.print_exc()
    same_process_stage()
    return 0


def same_process_stage():
    """Wick's certified stage (wick_stage_run, from STAGE_REPLAY_LIB, built by
    meson from stage-replay-lib.c) against torch.cuda.CUDAGraph capturing the
    very same kernels (the C chain launched through ctypes inside
    torch.cuda.graph), in this torch process, rounds alternating: the
    replay's cost a kernel where Wick's stages run, at 128, 512 and 2048."""
    lib_path = os.environ.get("STAGE_REPLAY_LIB")
    if not lib_path:
        print("SAME skipped: STAGE_REPLAY_LIB is needed", flush=True)
        return
    # torch captures the very kernels of the library Wick's stage replays (a
    # first run took nvcc's build of the probe step: another binary, and the
    # per-kernel cost of these tiny kernels follows the binary and process)
    kernels_path = lib_path
    try:
        wick = ctypes.CDLL(lib_path)
        wick.stage_replay_new.restype = ctypes.c_void_p
        wick.stage_replay_new.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        wick.stage_replay_time.restype = ctypes.c_double
        wick.stage_replay_time.argtypes = [ctypes.c_void_p, ctypes.c_int]
        wick.stage_replay_speedup.restype = ctypes.c_double
        wick.stage_replay_speedup.argtypes = [ctypes.c_void_p]
        wick.stage_replay_free.argtypes = [ctypes.c_void_p]
        k = ctypes.CDLL(kernels_path)
        k.stage_test_chain_threads.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                               ctypes.c_int, ctypes.c_void_p]
        k.stage_test_bare_graph_variant.restype = ctypes.c_void_p
        k.stage_test_bare_graph_variant.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                                    ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
        k.stage_test_time_launches.restype = ctypes.c_double
        k.stage_test_time_launches.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_double]
        for kernels in (128, 512, 2048):
            stream = torch.cuda.Stream()
            handle = wick.stage_replay_new(kernels, 128, ctypes.c_void_p(stream.cuda_stream))
            if not handle:
                print(f"SAME kernels={kernels} wick stage refused (see stderr)", flush=True)
                continue
            inp = torch.randn(N, device="cuda")
            out = torch.empty(N, device="cuda")
            with torch.cuda.stream(stream):
                for _ in range(3):
                    k.stage_test_chain_threads(ctypes.c_void_p(inp.data_ptr()), ctypes.c_void_p(out.data_ptr()), N,
                                               kernels, 128, ctypes.c_void_p(stream.cuda_stream))
            torch.cuda.synchronize()
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g, stream=stream):
                cs = torch.cuda.current_stream().cuda_stream
                k.stage_test_chain_threads(ctypes.c_void_p(inp.data_ptr()), ctypes.c_void_p(out.data_ptr()), N,
                                           kernels, 128, ctypes.c_void_p(cs))
            torch.cuda.synchronize()
            launches = 10 if kernels >= 2048 else launches_for(kernels)
            start = torch.cuda.Event(enable_timing=True)
            stop = torch.cuda.Event(enable_timing=True)

            def torch_block():
                with torch.cuda.stream(stream):
                    start.record()
                    for _ in range(launches):
                        g.replay()
                    stop.record()
                stop.synchronize()
                return start.elapsed_time(stop) * 1e3 / (launches * kernels)

            def wick_block():
                return wick.stage_replay_time(handle, launches) * 1e3 / (launches * kernels)

            bare = ctypes.c_void_p(k.stage_test_bare_graph_variant(
                ctypes.c_void_p(inp.data_ptr()), ctypes.c_void_p(out.data_ptr()), N, kernels, 128, 0,
                ctypes.c_void_p(stream.cuda_stream)))

            def bare_block():
                return k.stage_test_time_launches(bare, ctypes.c_void_p(stream.cuda_stream), launches, 0.0) * 1e3 / (
                    launches * kernels)

            cells = {"wick": wick_block, "torch": torch_block, "bare": bare_block}
            got = {name: [] for name in cells}
            for r in range(-1, ROUNDS):
                names = list(cells) if r % 2 == 0 else list(reversed(list(cells)))
                values = {name: cells[name]() for name in names}
                if r >= 0:
                    for name in cells:
                        got[name].append(values[name])
            ratio = [w / t for w, t in zip(got["wick"], got["torch"])]
            print(f"SAME kernels={kernels} wick_us_per_kernel={statistics.median(got['wick']):.4f} "
                  f"torch_us_per_kernel={statistics.median(got['torch']):.4f} "
                  f"bare_us_per_kernel={statistics.median(got['bare']):.4f} wick_over_torch={statistics.median(ratio):.4f} "
                  f"min={min(ratio):.4f} max={max(ratio):.4f} cert_speedup={wick.stage_replay_speedup(handle):.3f}",
                  flush=True)
            wick.stage_replay_free(handle)
    except Exception:
        print("SAME failed", flush=True)
        traceback.print_exc()


def describe(cudart, graph):
    """Launch shape of the first and second kernel nodes of a raw graph."""
    try:
        err, nodes, count = cudart.cudaGraphGetNodes(graph, 4)
        for node in nodes[:2]:
            result = cudart.cudaGraphKernelNodeGetParams(node)
            params = result[1] if isinstance(result, tuple) else result
            if params is None:
                raise RuntimeError("cudaGraphKernelNodeGetParams: %r" % (result,))
            attrs = cudart.cudaFuncGetAttributes(params.func)
            a = attrs[1] if isinstance(attrs, tuple) else attrs
            print(f"PROBE torch-node grid=({params.gridDim.x},{params.gridDim.y},{params.gridDim.z}) "
                  f"block=({params.blockDim.x},{params.blockDim.y},{params.blockDim.z}) "
                  f"shared={params.sharedMemBytes} regs={getattr(a, 'numRegs', '?')} "
                  f"param_bytes={getattr(a, 'maxDynamicSharedSizeBytes', '?')} "
                  f"const={getattr(a, 'constSizeBytes', '?')} local={getattr(a, 'localSizeBytes', '?')}",
                  flush=True)
    except Exception:
        print("PROBE torch-node description failed", flush=True)
        traceback.print_exc()


if __name__ == "__main__":
    sys.exit(main())
