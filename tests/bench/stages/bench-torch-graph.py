#!/usr/bin/env python3
"""torch.cuda.CUDAGraph replay of an elementwise chain: the peer figure for
bench-stage-replay (tools/device/bench-stages.sh runs both in one call).

For chains of 128, 512 and 2048 in-place elementwise ops on 128 floats
(each step is x.mul_(a), one small kernel, as each step of bench-stage-replay
is one small kernel x = fma(x, a, b)), it captures the chain into a
CUDAGraph and times replays with CUDA events on the capture stream: 11
rounds of the same launch counts as bench-stage-replay, the median
microseconds per kernel. Prints RESULT lines.
"""
import statistics
import sys

import torch

N = 128
ROUNDS = 11


def launches_for(kernels):
    return 10 if kernels >= 2048 else 20 if kernels >= 512 else 50


def count_kernel_nodes(kernels):
    """Kernel nodes of a separate capture of the same chain, through the raw
    graph and cuda-python; None where either is unavailable."""
    try:
        from cuda.bindings import runtime as cudart
        x = torch.randn(N, device="cuda")
        graph = torch.cuda.CUDAGraph(keep_graph=True)
        with torch.cuda.graph(graph):
            for _ in range(kernels):
                x.mul_(0.999)
        raw = cudart.cudaGraph_t(init_value=graph.raw_cuda_graph())
        err, nodes, count = cudart.cudaGraphGetNodes(raw, kernels * 2)
        kinds = [cudart.cudaGraphNodeGetType(node)[1] for node in nodes[:count]]
        return sum(1 for kind in kinds if kind == cudart.cudaGraphNodeType.cudaGraphNodeTypeKernel)
    except Exception as exc:  # a figure for the notes, never a failure
        print(f"kernel node count unavailable: {exc!r}", flush=True)
        return None


def bench(kernels):
    x = torch.randn(N, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(3):
            for _ in range(kernels):
                x.mul_(0.999)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(kernels):
            x.mul_(0.999)
    torch.cuda.synchronize()
    launches = launches_for(kernels)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)

    def block():
        with torch.cuda.stream(stream):
            start.record()
            for _ in range(launches):
                graph.replay()
            stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3 / (launches * kernels)

    block()
    per_kernel = [block() for _ in range(ROUNDS)]
    print(f"RESULT kernels={kernels} torch_us_per_kernel={statistics.median(per_kernel):.4f} "
          f"torch_min={min(per_kernel):.4f} torch_max={max(per_kernel):.4f} "
          f"torch_kernel_nodes={count_kernel_nodes(kernels)}", flush=True)


def main():
    if not torch.cuda.is_available():
        print("bench-torch-graph: skipped, no CUDA device")
        return 77
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}", flush=True)
    for kernels in (128, 512, 2048):
        bench(kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main())
