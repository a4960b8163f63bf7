"""wick.trace — traces and the ranks of a distributed job read with Wick's model, from Python.

    import wick.trace
    doc = wick.trace.open("rank-0.pt.trace.json.gz")
    doc.kernels["dur_ns"].sum()   # NumPy structured arrays: tracks, slices, kernels, collectives
    doc.gpu["devices"]            # `wick-trace gpu --json` as plain data

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

import builtins
import json
import os
import shutil
import subprocess
import tempfile

__all__ = ["open", "Document", "ranks", "reduce_rank", "merge_partials", "Error"]


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


def _run_command(command, args, wick_trace=None):
    try:
        p = subprocess.run([_program(wick_trace), command] + args, capture_output=True,
                           timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Error("wick-trace %s ran past %d s" % (command, _TIMEOUT_S)) from None
    # 2: a parse error, what was read before it is still written
    if p.returncode not in (0, 1, 2) or not p.stdout:
        raise Error(p.stderr.decode("utf-8", "replace").strip()
                    or "wick-trace %s exited with status %d" % (command, p.returncode))
    return p


class Document:
    """A trace read by Wick's model (`wick.trace.open`).

    Attributes (NumPy structured arrays, one row an item; string fields are
    Python str objects; times in ns from `origin_ns`, the trace's earliest
    event):

    - `tracks`: kind, name, pid, tid (-1: none), events
    - `slices`: track (row of tracks; 0xFFFFFFFF for the model's root span
      of the file, which is on no track), start_ns, dur_ns, depth, name,
      category
    - `kernels`: GPU work (kernels, copies, fills): track, start_ns, dur_ns,
      name, kind ("kernel", "memcpy", "memset", ...), correlation, stream,
      device
    - `collectives`: the NCCL kernels and gloo collectives with their args:
      kernel (row of kernels, -1 for gloo), slice (row of slices, -1 for a
      kernel), name ("allreduce", ...), group (Process Group Name), seq (-1:
      none), bytes (0: unknown), group_size (0: unknown)

    and `file`, `format` ("chrome" or "candle-graph"), `origin_ns`,
    `processes` (a list of {"pid", "name"}), `warnings` (what the reader said
    on stderr). `gpu` and `ranks` are the figures of `wick-trace gpu --json`
    and `wick-trace ranks --json` on this file (as one rank), computed on
    first use, as plain dicts and lists.
    """

    def __init__(self, path, header, tables, warnings, wick_trace):
        self.file = path
        self.format = header["format"]
        self.origin_ns = header["origin_ns"]
        self.processes = header["processes"]
        self.warnings = warnings
        self.tracks = tables["tracks"]
        self.slices = tables["slices"]
        self.kernels = tables["kernels"]
        self.collectives = tables["collectives"]
        self._wick_trace = wick_trace
        self._gpu = None
        self._ranks = None

    @property
    def gpu(self):
        if self._gpu is None:
            p = _run_command("gpu", ["--json", "--", self.file], self._wick_trace)
            self._gpu = json.loads(p.stdout.decode("utf-8"))
        return self._gpu

    @property
    def ranks(self):
        if self._ranks is None:
            self._ranks = json.loads(_run(["--json", "--", self.file], self._wick_trace))
        return self._ranks

    def __repr__(self):
        return "<wick.trace.Document %s: %d tracks, %d slices, %d kernels, %d collectives>" % (
            self.file, len(self.tracks), len(self.slices), len(self.kernels),
            len(self.collectives))


def _tables(header, data, offset, np):
    """The columns after the header line, checked against the header's sizes."""
    tables = {}
    layout = []
    for name, t in header["tables"].items():
        rows = int(t["rows"])
        for c in t["columns"]:
            dtype = np.dtype("<u4" if c["dtype"] == "str" else c["dtype"])
            layout.append((name, c["name"], c["dtype"] == "str", dtype, rows))
    need = sum(rows * dtype.itemsize for _, _, _, dtype, rows in layout) + int(header["strings"])
    if len(data) - offset != need:
        raise Error("wick-trace arrays: %d bytes of columns, not the %d its header gives"
                    % (len(data) - offset, need))
    raw = {}
    for table, column, is_str, dtype, rows in layout:
        size = rows * dtype.itemsize
        raw[(table, column)] = (np.frombuffer(data, dtype=dtype, count=rows, offset=offset), is_str)
        offset += size
    strings = np.array(data[offset:].decode("utf-8").split("\0")[:-1] or [""], dtype=object)
    if len(strings) != int(header["n_strings"]):
        raise Error("wick-trace arrays: %d strings, not %d" % (len(strings), header["n_strings"]))
    for name, t in header["tables"].items():
        names, arrays = [], []
        for c in t["columns"]:
            values, is_str = raw[(name, c["name"])]
            if is_str:
                if len(values) and int(values.max()) >= len(strings):
                    raise Error("wick-trace arrays: %s.%s names a string past the table"
                                % (name, c["name"]))
                values = strings[values]
            names.append(c["name"])
            arrays.append(values)
        if arrays:
            tables[name] = np.rec.fromarrays(arrays, names=names)
        else:
            tables[name] = np.rec.array([], dtype=[])
    return tables


def open(path, wick_trace=None):
    """Reads @path (any trace Wick opens: candle-graph JSONL, Chrome or
    PyTorch profiler JSON, gzip or zstd) with Wick's model and returns a
    Document of NumPy arrays. Raises Error when the file cannot be read at all;
    a file that fails part way gives what was read before, its message in
    Document.warnings."""
    import numpy as np

    path = os.fspath(path)
    p = _run_command("arrays", ["--", path], wick_trace)
    data = p.stdout
    end = data.find(b"\n")
    if end < 0:
        raise Error("wick-trace arrays: no header line")
    header = json.loads(data[:end].decode("utf-8"))
    if header.get("version") != 1:
        raise Error("wick-trace arrays: version %r is not read" % header.get("version"))
    tables = _tables(header, data, end + 1, np)
    warnings = [l for l in p.stderr.decode("utf-8", "replace").splitlines() if l]
    return Document(path, header, tables, warnings, wick_trace)


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
            with builtins.open(name, "w", encoding="utf-8") as f:
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
