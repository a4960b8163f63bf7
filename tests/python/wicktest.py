"""Helpers of the python suite: skips (exit 77) with a reason, paths, and a
child's output waited for line by line with deadlines (never a fixed sleep)."""
import os
import queue
import subprocess
import sys
import threading
import time

SKIP = 77
SOURCE = os.environ.get("WICK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WICK_TRACE = os.environ.get("WICK_TRACE", "")
EXAMPLE = os.path.join(SOURCE, "examples", "torch_train.py")


def skip(reason):
    """Skips the whole file (exit 77): for what every test needs."""
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


class SkipTest(Exception):
    """Raised by skip_test: run_tests goes on with the file's other tests."""


def skip_test(reason):
    """Skips only the running test, so one test's condition (CUDA present,
    say) does not hide the file's other tests."""
    raise SkipTest(reason)


def require_torch():
    try:
        import torch  # noqa: F401
    except ImportError as e:
        skip("torch is not importable by %s (%s); install python3-torch" % (sys.executable, e))
    import torch

    return torch


def require_wick_trace():
    if not WICK_TRACE or not os.access(WICK_TRACE, os.X_OK):
        skip("wick-trace is not built (the app is disabled), so traces cannot be checked by the document model")
    return WICK_TRACE


def check_trace(path):
    """wick-trace check --json: the verdict as a dict."""
    import json

    out = subprocess.run([require_wick_trace(), "check", "--json", path], capture_output=True, text=True)
    assert out.stdout.strip(), out.stderr
    return json.loads(out.stdout.strip().splitlines()[0])


def health_errors(verdict):
    return [h for h in verdict["health"] if h["severity"] == "error"]


TRACE_KINDS = {"meta", "span_start", "span_end", "op", "tensor", "tensor_stats", "memory",
               "device_memory", "device_interval", "gradient", "edge", "terminal"}


def read_records(path):
    """The trace's records. Every line must be of a kind candle-graph's reader
    knows (Wick's own facts ride in wick_ keys, never in a kind)."""
    import json

    with open(path) as f:
        records = [json.loads(line) for line in f if line.strip()]
    for r in records:
        assert r.get("kind") in TRACE_KINDS, "a line of kind %r in %s" % (r.get("kind"), path)
    return records


def wick_records(path):
    """Wick's own records of a trace, as Wick's reader finds them: the objects
    of every "wick_records" key, and each thread identity a span_start carries
    as a wick_thread record (docs/format.md, "Wick keys")."""
    out = []
    for r in read_records(path):
        if r["kind"] == "span_start" and "wick_thread_name" in r:
            out.append({"kind": "wick_thread", "thread": r["wick_thread"], "os_tid": r.get("wick_os_tid"),
                        "name": r["wick_thread_name"], "timestamp_ns": r["start_ns"]})
        out.extend(r.get("wick_records", []))
    return out


class Lines:
    """The lines a child process prints on stream, read by a thread so the
    test can wait for a line with a deadline (and see what came before it)."""

    def __init__(self, stream):
        self._queue = queue.Queue()
        self.seen = []
        self.ended = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream):
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def _take(self, timeout):
        """The next line, None at the end; queue.Empty after timeout (0: now)."""
        if self.ended:
            return None
        line = self._queue.get(timeout=timeout) if timeout > 0 else self._queue.get_nowait()
        if line is None:
            self.ended = True
        else:
            self.seen.append(line)
        return line

    def wait_for(self, predicate, timeout, what):
        """The lines up to and including the first one predicate accepts;
        fails naming what when the output ends or stays silent first."""
        deadline = time.monotonic() + timeout
        taken = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("%s: not within %g s; its last lines: %r" % (what, timeout, self.seen[-8:]))
            try:
                line = self._take(left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError("%s: its output ended first; its last lines: %r" % (what, self.seen[-8:]))
            taken.append(line)
            if predicate(line):
                return taken

    def pending(self):
        """The lines printed so far and not yet taken, without waiting."""
        out = []
        while True:
            try:
                line = self._take(0)
            except queue.Empty:
                return out
            if line is None:
                return out
            out.append(line)

    def rest(self, timeout):
        """Everything up to the end of the output (once the process exits)."""
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the output did not end within %g s" % timeout
        return self.pending()


def run_tests(namespace):
    """Runs every test_* function of the module; exits 1 on the first failure."""
    names = sorted(n for n in namespace if n.startswith("test_") and callable(namespace[n]))
    skipped = 0
    for name in names:
        print("# " + name, flush=True)
        try:
            namespace[name]()
        except SkipTest as e:
            skipped += 1
            print("ok %s # SKIP %s" % (name, e), flush=True)
            continue
        print("ok " + name, flush=True)
    print("1..%d" % len(names))
    if names and skipped == len(names):
        print("SKIP: every test skipped", flush=True)
        sys.exit(SKIP)
