"""Evict and restore a module of a training torch process from another
process (wick-trace control), while it trains: the memory is freed, training
waits for the weights, restore brings them back bit-exact (SHA-256 checked by
the trainer) and training continues; stage capture asked over the socket is
refused on the CPU with the CUDA sentence; the trace has no health errors."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import wicktest

wicktest.require_torch()
TRACE = wicktest.require_wick_trace()


def control(pid, *args):
    out = subprocess.run([TRACE, "control", str(pid)] + list(args), capture_output=True, text=True, timeout=120)
    text = out.stdout.strip()
    assert text, out.stderr
    return json.loads(text.splitlines()[-1])


def steps_in(path):
    n = 0
    with open(path) as f:
        for line in f:
            if '"name":"train_step"' in line and '"span_start"' in line:
                n += 1
    return n


def test_evict_restore_while_training():
    tmp = tempfile.mkdtemp()
    trace = os.path.join(tmp, "t.jsonl")
    child = subprocess.Popen(
        [sys.executable, wicktest.EXAMPLE, "--control", "--steps", "0", "--rate", "40", "--trace", trace,
         "--verify-restore", "--device", "cpu", "--strict", "--checkpoint", os.path.join(tmp, "w.safetensors")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        first = child.stdout.readline()
        assert first.startswith("torch_train: pid %d" % child.pid), first
        deadline = time.time() + 60
        while steps_in(trace) < 3 and time.time() < deadline:
            time.sleep(0.1)
        listing = control(child.pid, "list")
        assert listing["ok"], listing
        names = sorted(m["name"] for m in listing["modules"])
        assert names == ["embed", "encoder", "head"], listing
        assert [s["name"] for s in listing["stages"]] == ["refine"], listing
        reply = control(child.pid, "evict", "encoder")
        assert reply["ok"] and reply["freed_bytes"] > 0, reply
        n0 = steps_in(trace)
        time.sleep(1.0)
        n1 = steps_in(trace)
        assert n1 - n0 <= 1, "training went on while its weights were evicted: %d -> %d" % (n0, n1)
        listing = control(child.pid, "list")
        enc = [m for m in listing["modules"] if m["name"] == "encoder"][0]
        assert enc["where"] != "resident", enc
        reply = control(child.pid, "restore", "encoder")
        assert reply["ok"], reply
        deadline = time.time() + 30
        while steps_in(trace) < n1 + 3 and time.time() < deadline:
            time.sleep(0.1)
        n2 = steps_in(trace)
        assert n2 >= n1 + 3, "training did not continue after restore: %d -> %d" % (n1, n2)
        reply = control(child.pid, "capture", "refine")
        print("capture reply:", reply)
        text = json.dumps(reply)
        assert "CUDA" in text and "refused" in text, reply
    finally:
        child.send_signal(signal.SIGINT)
        out, _ = child.communicate(timeout=120)
    print(out)
    assert child.returncode == 0, out
    assert "restores verified 1, mismatched 0" in out, out
    verdict = wicktest.check_trace(trace)
    assert verdict["parse"] == "ok" and not wicktest.health_errors(verdict), verdict
    assert verdict["gradient_coverage"] == "complete", verdict


if __name__ == "__main__":
    wicktest.run_tests(globals())
