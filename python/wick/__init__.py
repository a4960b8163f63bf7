"""wick — record ML workloads with libwick: candle-graph/trace/10 traces and a
live session that the Wick app attaches to.

    import wick
    with wick.Session("mlp.train", phase="train", capture_step=3,
                      jsonl_path="run.jsonl") as session:
        with session.span("data"):
            ...
        @session.span("forward", kind="module", step="forward")
        def forward(x): ...

Every libwick failure raises wick.Error with libwick's sentence. A wrong type
raises TypeError (a bad value ValueError) naming the argument. A call on a
finished session raises wick.Error saying so; what was recorded stays.

wick.torch (imported on demand) instruments a torch model, registers its
modules with the weight store and its stages for capture; docs/python.md.
"""

import atexit as _atexit
import functools as _functools
import weakref as _weakref

from . import _wick

__all__ = [
    "Error",
    "Session",
    "Span",
    "GradientContract",
    "GradientCapturePlan",
    "manifest_sha256",
    "cuda_available",
]

Error = _wick.Error
GradientContract = _wick.GradientContract
GradientCapturePlan = _wick.GradientCapturePlan


def manifest_sha256(expected):
    """The manifest digest ("sha256:<hex>") of [(root, key, family)], as libwick."""
    return _wick.manifest_sha256(expected)


def cuda_available():
    """(available, why_not) for stage capture in this libwick."""
    return _wick.cuda_available()


# A span: a context manager, and a decorator that opens one per call.
# Made by Session.span(name, kind="function", step=None) with kind "function",
# "op" or "module" and step None, "forward", "backward" or "optimizer". Its
# parent is the innermost span open on the thread (the root s1 when none).
Span = _wick.Span


def _decorate(span, fn):
    raw, name, kind, step = span.session, span.name, span.kind, span.step

    @_functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with raw.span(name, kind, step):
            return fn(*args, **kwargs)

    return wrapper


_wick._set_span_decorator(_decorate)


_COVERAGE_KEYS = (
    "operations",
    "tensors",
    "gradients",
    "logical_memory",
    "physical_memory",
    "device_timing",
)


class Session:
    """A libwick recording session.

    Session(entrypoint, phase="train"|"infer", capture_step=1, warmup_steps=0,
            device="cpu", contract=None, jsonl_path=None, strict=False,
            control=False, coverage=None, measurement_scope="profiled_work",
            timing_mode="host", tags=None, policy="drop")

    contract: a wick.GradientContract or a wick.GradientCapturePlan (then
    coverage["gradients"] defaults to "complete"). coverage: a dict of the
    capture contract's coverage fields (operations, tensors, gradients,
    logical_memory, physical_memory, device_timing) to "none", "partial" or
    "complete". strict writes pure trace/10 (no wick_ records). control
    listens on the control socket (also WICK_CONTROL=1).

    As a context manager: finish() on a normal exit, finish_failed() with the
    exception's text when one escapes; close() either way.
    """

    def __init__(
        self,
        entrypoint,
        phase="train",
        capture_step=1,
        warmup_steps=0,
        device="cpu",
        contract=None,
        jsonl_path=None,
        strict=False,
        control=False,
        coverage=None,
        measurement_scope="profiled_work",
        timing_mode="host",
        tags=None,
        policy="drop",
    ):
        self.plan = None
        if isinstance(contract, GradientCapturePlan):
            self.plan = contract
            contract = contract.contract
        cov = {}
        if contract is not None:
            cov["gradients"] = "complete"
        if coverage is not None:
            if not isinstance(coverage, dict):
                raise TypeError("coverage must be a dict of str to str")
            for key in coverage:
                if key not in _COVERAGE_KEYS:
                    raise ValueError(
                        "coverage: unknown field %r; the fields are %s"
                        % (key, ", ".join(_COVERAGE_KEYS))
                    )
            cov.update(coverage)
        if jsonl_path is not None and not isinstance(jsonl_path, str):
            jsonl_path = str(jsonl_path)  # os.PathLike
        self._s = _wick.Session(
            entrypoint,
            phase=phase,
            capture_step=capture_step,
            warmup_steps=warmup_steps,
            device=device,
            contract=contract,
            jsonl_path=jsonl_path,
            strict=bool(strict),
            control=bool(control),
            coverage=cov,
            measurement_scope=measurement_scope,
            timing_mode=timing_mode,
            tags=tags,
            policy=policy,
        )
        self.jsonl_path = jsonl_path
        # the C method itself: no Python frame on the span path
        self.span = self._s.span
        self.capture_step = capture_step
        self.warmup_steps = warmup_steps
        self.device = device
        self._closers = []  # called before close (wick.torch's stages and hooks)
        _open_sessions.add(self)

    # --- lifetime -----------------------------------------------------------

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if not self._s.closed and not self._s.finished:
                if exc_type is None:
                    self.finish()
                else:
                    text = "%s: %s" % (exc_type.__name__, exc) if str(exc) else exc_type.__name__
                    self.finish_failed(text)
        finally:
            self.close()
        return False

    def finish(self):
        """Closes s1 and writes a complete terminal; waits for the JSONL file."""
        self._run_closers()
        self._s.finish()

    def finish_failed(self, reason):
        """Writes a failed terminal with the reason; open spans stay open."""
        self._run_closers()
        self._s.finish_failed(reason)

    def close(self):
        """Finishes failed ("session closed before finish") if neither was called; frees it."""
        self._run_closers()
        self._s.close()

    def _run_closers(self):
        closers, self._closers = self._closers, []
        for closer in reversed(closers):
            closer()

    @property
    def finished(self):
        return self._s.finished

    @property
    def closed(self):
        return self._s.closed

    @property
    def pid(self):
        return self._s.pid

    @property
    def run_id(self):
        return self._s.run_id

    @property
    def entrypoint(self):
        return self._s.entrypoint

    @property
    def strict(self):
        return self._s.strict

    @property
    def dropped(self):
        """Records the ring dropped so far (drop policy)."""
        return self._s.dropped

    @property
    def control_socket_path(self):
        return self._s.control_socket_path

    def enable_control(self):
        self._s.enable_control()

    def now_ns(self):
        """Nanoseconds since the session opened, on the session clock."""
        return self._s.now_ns()

    # --- spans ----------------------------------------------------------------

    def span(self, name, kind="function", step=None):
        """A span as a context manager (`with session.span("x"):`) or decorator."""
        return self._s.span(name, kind, step)  # replaced per instance by the C method

    def measurement(self, name):
        """The measured region (one per session), as a context manager."""
        return _Measurement(self._s, name)

    def current_span(self):
        """The innermost span open on this thread (1: the root)."""
        return self._s.current_span()

    # --- records ----------------------------------------------------------------

    def record_op(self, op_name, **fields):
        """An op: inputs, output, shape, dtype, device, duration_ns, timestamp_ns,
        span, output_dense_bytes, input_dense_bytes."""
        self._s.record_op(op_name, **fields)

    def record_tensor(self, tensor_id, shape, dtype, device, category, **fields):
        """A tensor with its memory category (parameter, activation, gradient,
        optimizer, other); label, requires_grad, span, dense_bytes."""
        self._s.record_tensor(tensor_id, shape, dtype, device, category, **fields)

    def record_tensor_stats(self, label, shape, dtype, elements, non_finite, rms, abs_max, mean, **fields):
        self._s.record_tensor_stats(label, shape, dtype, elements, non_finite, rms, abs_max, mean, **fields)

    def record_memory(self, storage_id, tensor_id, bytes, action, category, device, **fields):
        """A logical allocation ("alloc") or free ("free") of a storage; span,
        op_name, shape, dtype, timestamp_ns, address (the storage's device
        address, e.g. data_ptr(): written as wick_address, which lets an
        allocator snapshot's blocks be matched to the record)."""
        self._s.record_memory(storage_id, tensor_id, bytes, action, category, device, **fields)

    def record_device_memory(self, device, **fields):
        """A device memory sample: used_bytes, free_bytes, reserved_bytes, capacity_bytes."""
        self._s.record_device_memory(device, **fields)

    def record_device_interval(self, device, stream_id, clock_id, backend, start_ns, duration_ns, **fields):
        self._s.record_device_interval(device, stream_id, clock_id, backend, start_ns, duration_ns, **fields)

    def record_call_edge(self, from_span, to_span, host_duration_ns):
        self._s.record_call_edge(from_span, to_span, host_duration_ns)

    def record_data_edge(self, from_tensor, to_tensor):
        self._s.record_data_edge(from_tensor, to_tensor)

    def record_gradient(self, root, key, state, norm=None):
        """state: present (norm > 0), zero (norm 0.0), missing, non_finite (no norm)."""
        self._s.record_gradient(root, key, state, norm)

    def record_gradients(self, norms, plan=None):
        """One norm (None: no gradient) per key of the plan, in manifest order."""
        plan = plan if plan is not None else self.plan
        if plan is None:
            raise Error("record_gradients: the session has no GradientCapturePlan; pass plan=")
        plan.record(self._s, norms)

    def mark(self, label):
        """A wick_mark record (not in strict files)."""
        self._s.mark(label)


# Sessions not yet closed, for the interpreter's exit: a session that threads
# still hold (daemon threads recording) is never collected, so without this
# its file would end with no terminal.
_open_sessions = _weakref.WeakSet()

_EXIT_REASON = "the interpreter exited before the session finished"


@_atexit.register
def _close_at_exit():
    for session in list(_open_sessions):
        try:
            if not session._s.closed and not session._s.finished:
                session.finish_failed(_EXIT_REASON)
        except Error:
            pass  # finish_failed's sentence is on stderr when it matters; close still runs
        finally:
            session._s.close()


class _Measurement:
    __slots__ = ("_raw", "_name", "id")

    def __init__(self, raw, name):
        self._raw, self._name, self.id = raw, name, 0

    def __enter__(self):
        self.id = self._raw.measurement_begin(self._name)
        return self

    def __exit__(self, exc_type, exc, tb):
        if not self._raw.closed and not self._raw.finished:
            self._raw.span_end(self.id)
        return False
