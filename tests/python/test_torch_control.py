"""Evict and restore a module of a training torch process from another
process (wick-trace control), while it trains: the memory is freed, training
waits for the weights, restore brings them back bit-exact (SHA-256 checked by
the trainer) and training continues; stage capture asked over the socket is
refused on the CPU with the CUDA sentence; the trace has no health errors.
The trainer's --progress lines (each step, and a step that begins to wait)
are what the test waits for, each with a deadline: no fixed sleeps."""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

import wicktest

wicktest.require_torch()
TRACE = wicktest.require_wick_trace()


def control(pid, *args):
    out = subprocess.run([TRACE, "control", str(pid)] + list(args), capture_output=True, text=True, timeout=120)
    text = out.stdout.strip()
    assert text, out.stderr
    return json.loads(text.splitlines()[-1])


def step_number(line):
    """The step a --progress line reports, or None for other lines."""
    words = line.split()
    return int(words[1]) if len(words) >= 2 and words[0] == "step" else None


def steps(lines):
    return [n for n in map(step_number, lines) if n is not None]


def test_evict_restore_while_training():
    tmp = tempfile.mkdtemp()
    trace = os.path.join(tmp, "t.jsonl")
    child = subprocess.Popen(
        [sys.executable, wicktest.EXAMPLE, "--control", "--steps", "0", "--rate", "40", "--trace", trace,
         "--verify-restore", "--device", "cpu", "--strict", "--progress",
         "--checkpoint", os.path.join(tmp, "w.safetensors")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines = wicktest.Lines(child.stdout)
    try:
        first = lines.wait_for(lambda line: True, 120, "torch_train's first line")[0]
        assert first.startswith("torch_train: pid %d" % child.pid), first
        lines.wait_for(lambda line: step_number(line) == 3, 120, "torch_train's third step")
        listing = control(child.pid, "list")
        assert listing["ok"], listing
        names = sorted(m["name"] for m in listing["modules"])
        assert names == ["embed", "encoder", "head"], listing
        assert [s["name"] for s in listing["stages"]] == ["refine"], listing
        reply = control(child.pid, "evict", "encoder")
        assert reply["ok"] and reply["freed_bytes"] > 0, reply
        # the next step waits for the encoder (the one running when the
        # eviction came has finished: the eviction waited for it)
        before = lines.wait_for(lambda line: line.startswith("waiting for weights"), 120,
                                "a step waiting for the evicted encoder")
        waited_after = max(steps(lines.seen))
        listing = control(child.pid, "list")
        enc = [m for m in listing["modules"] if m["name"] == "encoder"][0]
        assert enc["where"] != "resident", enc
        went_on = steps(lines.pending())
        assert not went_on, "training went on while its weights were evicted: steps %s after waiting (%s)" % (
            went_on, before)
        reply = control(child.pid, "restore", "encoder")
        assert reply["ok"], reply
        lines.wait_for(lambda line: step_number(line) == waited_after + 3, 120,
                       "three steps after the restore (the last before it was %d)" % waited_after)
        reply = control(child.pid, "capture", "refine")
        print("capture reply:", reply)
        text = json.dumps(reply)
        assert "CUDA" in text and "refused" in text, reply
    finally:
        child.send_signal(signal.SIGINT)
        child.wait(timeout=120)
    lines.rest(30)
    out = "\n".join(lines.seen)
    print(out)
    assert child.returncode == 0, out
    assert "restores verified 1, mismatched 0" in out, out
    waits = re.search(r"waited for weights (\d+) times", out)
    assert waits and int(waits.group(1)) >= 1, out
    verdict = wicktest.check_trace(trace)
    assert verdict["parse"] == "ok" and not wicktest.health_errors(verdict), verdict
    assert verdict["gradient_coverage"] == "complete", verdict


if __name__ == "__main__":
    wicktest.run_tests(globals())
