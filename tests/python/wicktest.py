"""Helpers of the python suite: skips (exit 77) with a reason, paths."""
import os
import subprocess
import sys

SKIP = 77
SOURCE = os.environ.get("WICK_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WICK_TRACE = os.environ.get("WICK_TRACE", "")
EXAMPLE = os.path.join(SOURCE, "examples", "torch_train.py")


def skip(reason):
    print("SKIP: " + reason, flush=True)
    sys.exit(SKIP)


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


def read_records(path):
    import json

    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def run_tests(namespace):
    """Runs every test_* function of the module; exits 1 on the first failure."""
    names = sorted(n for n in namespace if n.startswith("test_") and callable(namespace[n]))
    for name in names:
        print("# " + name, flush=True)
        namespace[name]()
        print("ok " + name, flush=True)
    print("1..%d" % len(names))
