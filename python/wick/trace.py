"""wick.trace — the ranks of a distributed job read with Wick's model, from Python.

    import wick.trace
    job = wick.trace.ranks(["rank-0.json.gz", "rank-1.json.gz", ...])
    job["stragglers"][0]          # {"rank": 5, "delay_ns": 53619273}

    from dask.distributed import Client
    job = wick.trace.ranks(paths, client=Client("tcp://scheduler:8786"))

`ranks()` returns exactly what `wick-trace ranks --json` prints (docs/ranks.md):
{"ranks": [...], "collectives": [...], "stragglers": [...]}. Without a client
the reduction runs here, every core on the files. With a dask.distributed
Client, each rank's file is reduced on a worker (`wick-trace ranks --partial`,
one streaming pass; the worker must see the file at the same path and have
wick-trace), only the small per-rank partials travel back, and they are
merged here (`wick-trace ranks --partials`).

The reduction is Wick's C code run as the `wick-trace` program: $WICK_TRACE
when set, else `wick-trace` on PATH, else the wick_trace argument.
"""

import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["ranks", "reduce_rank", "merge_partials", "Error"]


class Error(Exception):
    """wick-trace failed: its message (naming the file) is the exception's."""


# A rank's pass is bounded so that a worker never hangs on a stuck file
# system; a 2 GB rank reads in well under this.
_TIMEOUT_S = 3600


def _program(wick_trace=None):
    program = wick_trace or os.environ.get("WICK_TRACE") or shutil.which("wick-trace")
    if not program:
        raise Error("wick-trace is not found: set WICK_TRACE or put it on PATH")
    return program


def _run(args, wick_trace=None, stdin=None):
    try:
        p = subprocess.run([_program(wick_trace), "ranks"] + args, input=stdin,
                           capture_output=True, timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Error("wick-trace ranks ran past %d s" % _TIMEOUT_S) from None
    if p.returncode != 0:
        raise Error(p.stderr.decode("utf-8", "replace").strip()
                    or "wick-trace ranks exited with status %d" % p.returncode)
    return p.stdout.decode("utf-8")


def reduce_rank(path, wick_trace=None):
    """One rank's streaming reduction (a dict: the partial of docs/ranks.md)."""
    return json.loads(_run(["--partial", "--", os.fspath(path)], wick_trace))


def merge_partials(partials, wick_trace=None):
    """The job from per-rank partials (reduce_rank's dicts), as ranks() returns it."""
    partials = list(partials)
    if not partials:
        raise ValueError("merge_partials needs at least one partial")
    with tempfile.TemporaryDirectory(prefix="wick-ranks-") as tmp:
        names = []
        for i, p in enumerate(partials):
            name = os.path.join(tmp, "partial-%d.json" % i)
            with open(name, "w", encoding="utf-8") as f:
                json.dump(p, f)
            names.append(name)
        return json.loads(_run(["--json", "--partials", "--"] + names, wick_trace))


def ranks(paths, client=None, wick_trace=None):
    """The job of @paths (one PyTorch profiler trace a rank).

    client: a dask.distributed Client; each file is reduced on a worker and
    the partials merged here. None: everything runs on this machine."""
    paths = [os.fspath(p) for p in paths]
    if not paths:
        raise ValueError("ranks needs at least one trace")
    if client is None:
        return json.loads(_run(["--json", "--"] + paths, wick_trace))
    program = _program(wick_trace)
    # pure=False: a file may change between calls; each is read afresh
    futures = client.map(reduce_rank, paths, wick_trace=program, pure=False)
    partials = client.gather(futures)
    return merge_partials(partials, program)
