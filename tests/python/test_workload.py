"""The workload is never stopped or corrupted by Wick:
forked DataLoader workers that record, a forward or hook that raises and is
caught, a span ended on another thread, daemon threads recording at
interpreter exit. Every case runs in a real second process where it has one
(a fork, a DataLoader's workers, a child interpreter)."""
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading

import wicktest

import wick


def expect(exc, fn, *args, contains=None):
    try:
        fn(*args)
    except exc as e:
        if contains is not None:
            assert contains in str(e), str(e)
        return e
    raise AssertionError("%s was not raised" % exc.__name__)


def spans_balanced(records):
    """(starts, ends) by id: every span_start has its span_end."""
    starts = {r["id"]: r for r in records if r["kind"] == "span_start"}
    ends = {r["id"] for r in records if r["kind"] == "span_end"}
    assert set(starts) == ends, "open spans: %s" % [starts[i]["name"] for i in set(starts) - ends]
    return starts


def check_valid(path):
    if wicktest.WICK_TRACE:
        verdict = wicktest.check_trace(path)
        assert verdict["parse"] == "ok" and verdict["structurally_valid"], verdict
        assert not wicktest.health_errors(verdict), verdict


def test_forked_children_record_nothing_and_finish():
    """os.fork with a span open: the child records, finishes and closes its
    copy of the session (bounded by an alarm: it must not hang in finish on the
    parent's writer thread); the parent's file holds none of it."""
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    with wick.Session("fork.train", jsonl_path=path, strict=True) as s:
        with s.measurement("epoch"):
            pids = []
            for _ in range(2):
                pid = os.fork()
                if pid == 0:
                    signal.alarm(20)
                    code = 1
                    try:
                        for _ in range(5000):
                            with s.span("child-work"):
                                pass
                        s.record_op("child-op", shape=[1], dtype="f32", device="cpu", duration_ns=1)
                        s.finish()
                        s.close()
                        code = 0
                    finally:
                        os._exit(code)
                pids.append(pid)
            for _ in range(5000):
                with s.span("parent-work"):
                    pass
            for pid in pids:
                _, status = os.waitpid(pid, 0)
                assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (
                    "forked child: %s" % ("signal %d (SIGALRM: it hung)" % os.WTERMSIG(status)
                                          if os.WIFSIGNALED(status) else "exit %d" % os.WEXITSTATUS(status)))
        assert s.dropped == 0
    records = wicktest.read_records(path)
    assert not [r for r in records if "child" in str(r)], [r for r in records if "child" in str(r)][:3]
    starts = spans_balanced(records)
    assert sum(1 for r in starts.values() if r["name"] == "parent-work") == 5000
    assert records[-1]["kind"] == "terminal" and records[-1]["outcome"] == "complete", records[-1]
    check_valid(path)


def test_dataloader_workers_recording():
    """Two torch DataLoader workers (forked) record a span per item while the
    parent trains, never into the parent's ring (its finish would raise
    "nested spans still open", the terminal count billions lost)."""
    torch = wicktest.require_torch()
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")

    class Data(torch.utils.data.Dataset):
        def __init__(self, session):
            self.session = session

        def __len__(self):
            return 64

        def __getitem__(self, i):
            with self.session.span("load-item"):
                with self.session.span("decode"):
                    return torch.full((4,), float(i))

    with wick.Session("loader.train", jsonl_path=path, strict=True) as s:
        loader = torch.utils.data.DataLoader(Data(s), batch_size=4, num_workers=2,
                                             multiprocessing_context="fork")
        n = 0
        with s.measurement("epoch"):
            for batch in loader:
                with s.span("step"):
                    n += int(batch.shape[0])
        assert n == 64
        assert s.dropped == 0
    records = wicktest.read_records(path)
    starts = spans_balanced(records)
    assert not [r for r in starts.values() if r["name"] in ("load-item", "decode")]
    assert sum(1 for r in starts.values() if r["name"] == "step") == 16
    assert records[-1]["kind"] == "terminal" and records[-1]["outcome"] == "complete", records[-1]
    check_valid(path)


def test_span_ended_on_another_thread_is_an_error():
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    s = wick.Session("threads.train", jsonl_path=path)
    span = s.span("begun-here")
    span.__enter__()
    errors = []

    def end_elsewhere():
        try:
            span.__exit__(None, None, None)
        except wick.Error as e:
            errors.append(str(e))

    t = threading.Thread(target=end_elsewhere)
    t.start()
    t.join()
    assert len(errors) == 1, errors
    assert "span 'begun-here' was begun on thread" in errors[0], errors[0]
    assert "a span ends on the thread that began it" in errors[0], errors[0]
    # it stays open: finish says so
    expect(wick.Error, s.finish, contains="1 nested spans still open")
    s.finish_failed("the test left a span open")
    s.close()


def test_raw_span_end_on_another_thread_raises_and_is_counted():
    """The raw session's span_end(id) from another thread raises wick.Error
    with libwick's sentence (it returned False silently), and the file counts
    it: a wick_span_end_foreign record and the terminal's
    wick_span_ends_foreign key."""
    import json
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    s = wick.Session("threads.train", jsonl_path=path)
    raw = s._s
    span = s.span("begun-here")
    span.__enter__()
    errors = []

    def end_elsewhere():
        try:
            raw.span_end(span.id)
        except wick.Error as e:
            errors.append(str(e))
        # the Span object's own check counts it too
        try:
            span.__exit__(None, None, None)
        except wick.Error as e:
            errors.append(str(e))

    t = threading.Thread(target=end_elsewhere)
    t.start()
    t.join()
    assert len(errors) == 2, errors
    assert "was begun on wick thread" in errors[0], errors[0]
    assert "cannot be ended on wick thread" in errors[0], errors[0]
    # ended already, or never begun: False, as before
    assert raw.span_end(987654) is False
    s.finish_failed("the test left a span open")
    s.close()
    text = open(path).read()
    assert '"kind":"wick_span_end_foreign"' in text, text[-2000:]
    terminal = json.loads(text.strip().splitlines()[-1])
    assert terminal["kind"] == "terminal", terminal
    assert terminal.get("wick_span_ends_foreign") == 2, terminal


def test_interpreter_exit_with_daemon_threads_writes_the_terminal():
    """Daemon threads recording when the main thread's script ends: the file
    ends with a (failed) terminal that says why."""
    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    script = textwrap.dedent("""
        import sys, threading, time, wick
        s = wick.Session("daemon.train", jsonl_path=sys.argv[1])
        started = threading.Barrier(3)
        def work():
            started.wait()
            while True:
                with s.span("daemon-work"):
                    time.sleep(0.0005)
        for _ in range(2):
            threading.Thread(target=work, daemon=True).start()
        started.wait()
        time.sleep(0.2)
        print("main thread done", flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", script, path], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    records = wicktest.read_records(path)
    assert any(r["kind"] == "span_start" and r["name"] == "daemon-work" for r in records)
    last = records[-1]
    assert last["kind"] == "terminal", last
    assert last["outcome"] == "failed", last
    assert "interpreter exited" in last["reason"], last


def _net(torch):
    class Inner(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 4)
            self.fail = False

        def forward(self, x):
            if self.fail:
                self.fail = False
                raise RuntimeError("out of memory (simulated)")
            return self.fc(x)

    class Outer(torch.nn.Module):
        def __init__(self, catch_inside):
            super().__init__()
            self.block = torch.nn.Sequential(Inner(), torch.nn.ReLU())
            self.head = torch.nn.Linear(4, 1)
            self.catch_inside = catch_inside

        def forward(self, x):
            if self.catch_inside:
                try:
                    x = self.block(x)
                except RuntimeError:
                    pass  # an OOM handler skipping the block
            else:
                x = self.block(x)
            return self.head(x)

    return Outer


def _train(torch, model, path, fail_at, hook_fails=False):
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    caught = 0
    with wick.Session("raise.train", jsonl_path=path, capture_step=2) as s:
        inst = wick.torch.instrument(s, model, opt)
        for step in range(6):
            inner = model.block[0]
            if step == fail_at:
                inner.fail = True
            handle = None
            if hook_fails and step == fail_at:
                def bad_hook(module, inputs, output):
                    raise ValueError("a user's hook failed")
                handle = model.block[1].register_forward_hook(bad_hook)
            try:
                with inst.step():
                    loss = model(torch.randn(8, 4)).sum()
                    loss.backward()
                    opt.step()
                    opt.zero_grad()
            except (RuntimeError, ValueError):
                caught += 1
            finally:
                if handle is not None:
                    handle.remove()
    return caught


def test_torch_forward_raises_spans_end():
    """A submodule that raises once (caught outside the model, caught inside
    its parent's forward) and a user's forward hook that raises: the loop goes
    on, the session block ends normally (not "cannot finish trace with 2
    nested spans still open"), and every span wick.torch opened is ended."""
    torch = wicktest.require_torch()
    import wick.torch  # noqa: F401

    Outer = _net(torch)
    for catch_inside, hook_fails in ((False, False), (True, False), (False, True)):
        path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
        caught = _train(torch, Outer(catch_inside), path, fail_at=3, hook_fails=hook_fails)
        assert caught == (0 if catch_inside and not hook_fails else 1), (catch_inside, hook_fails, caught)
        records = wicktest.read_records(path)
        starts = spans_balanced(records)
        forwards = [r for r in starts.values() if r.get("step") == "forward"]
        assert len(forwards) == 6, len(forwards)
        assert records[-1]["kind"] == "terminal" and records[-1]["outcome"] == "complete", records[-1]


def test_torch_backward_raises_span_ends():
    torch = wicktest.require_torch()
    import wick.torch  # noqa: F401

    path = os.path.join(tempfile.mkdtemp(), "t.jsonl")
    model = torch.nn.Linear(4, 1)
    with wick.Session("backward.train", jsonl_path=path) as s:
        inst = wick.torch.instrument(s, model)
        with inst.step():
            loss = model(torch.randn(2, 4)).sum()
            loss.backward()
            try:
                loss.backward()  # the graph is freed: torch raises
            except RuntimeError:
                pass
    records = wicktest.read_records(path)
    starts = spans_balanced(records)
    assert sum(1 for r in starts.values() if r.get("step") == "backward") == 2


if __name__ == "__main__":
    wicktest.run_tests(globals())
