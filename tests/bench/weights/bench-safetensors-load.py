"""Baseline for bench-weight-store: PyTorch's safetensors.torch.load_file
onto the GPU, on the same file, in the same run. Prints the median seconds
of REPS loads after one warm-up load as `safetensors_load_seconds S`."""
import statistics
import sys
import time

import torch
from safetensors.torch import load_file


def main() -> None:
    path = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    torch.zeros(1, device="cuda")
    tensors = load_file(path, device="cuda")
    torch.cuda.synchronize()
    del tensors
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        tensors = load_file(path, device="cuda")
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        del tensors
    print(f"safetensors_load_seconds {statistics.median(times):.6f}")


if __name__ == "__main__":
    main()
