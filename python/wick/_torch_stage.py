"""wick.torch's stages: a hot piece of a torch program captured into a CUDA
graph through torch.cuda.graph, gated by libwick, replayed from then on.

The stage is a libwick "host stage" (wick_session_register_host_stage): the
app or `wick-trace control PID capture NAME` asks libwick for a capture, and
libwick hands the request to the host at its next call of the stage — here,
in Stage.__call__, on the thread that calls the stage, never on the control
socket's thread. The capture warms up on a side stream, records through
torch.cuda.graph (its own side stream and private memory pool), measures
parity against the reference (float64 sums on the device, one readback) and
times alternating eager/replay rounds with CUDA events; libwick judges both
gates with its own code, writes the certification record and sets the state.
A refused stage stays eager with libwick's sentence.
"""

import contextlib as _contextlib
import ctypes as _ctypes
import math as _math
import threading as _threading

import torch as _torch

from . import _wick
from . import Error
from ._torch_weights import acquire_group as _acquire_group, release_group as _release_group

_STAGE_DTYPES = {
    _torch.float32: "f32",
    _torch.float16: "f16",
    _torch.bfloat16: "bf16",
    _torch.float64: "f64",
    _torch.int32: "i32",
    _torch.int64: "i64",
    _torch.uint8: "u8",
}


def _stage_dtype(t, what):
    try:
        return _STAGE_DTYPES[t.dtype]
    except KeyError:
        raise Error(
            "%s: dtype %s cannot be a stage buffer (f32, f16, bf16, f64, i32, i64 or u8)" % (what, t.dtype)
        ) from None


def _new_graph():
    """A CUDAGraph that keeps its cudaGraph_t after capture where torch can
    (2.7 and later: keep_graph), so that its nodes can be counted."""
    try:
        return _torch.cuda.CUDAGraph(keep_graph=True)
    except TypeError:
        return _torch.cuda.CUDAGraph()


def _kernel_nodes(graph):
    """The kernel nodes of a captured graph, through the driver's
    cuGraphGetNodes on torch's raw graph; instantiates a kept graph. None where
    torch gives no raw graph (before 2.7) or the driver cannot be asked."""
    count = None
    raw = None
    try:
        raw = graph.raw_cuda_graph()
    except Exception:  # no raw graph in this torch, or not kept
        raw = None
    if raw:
        try:
            cuda = _ctypes.CDLL("libcuda.so.1")
            n = _ctypes.c_size_t(0)
            if cuda.cuGraphGetNodes(_ctypes.c_void_p(raw), None, _ctypes.byref(n)) == 0:
                count = 0
            if count == 0 and n.value > 0:
                count = None
                nodes = (_ctypes.c_void_p * n.value)()
                if cuda.cuGraphGetNodes(_ctypes.c_void_p(raw), nodes, _ctypes.byref(n)) == 0:
                    count = 0
                    kind = _ctypes.c_int(-1)
                    for node in nodes[: n.value]:
                        # CU_GRAPH_NODE_TYPE_KERNEL is 0
                        if cuda.cuGraphNodeGetType(_ctypes.c_void_p(node), _ctypes.byref(kind)) == 0 and kind.value == 0:
                            count += 1
        except OSError:
            count = None
    if hasattr(graph, "instantiate") and raw:
        graph.instantiate()
    return count


def _no_cuda_sentence():
    ok, why = _wick.cuda_available()
    if not ok:
        return why
    if not _torch.cuda.is_available():
        return "no CUDA device is available to torch %s: capture needs torch with CUDA" % _torch.__version__
    return None


def _off_device_sentence(stage):
    """Why a stage whose tensors are not on a CUDA device cannot be captured
    (a CUDA graph records only CUDA work: its replay would compute nothing and
    return the output of the capture), or None."""
    where = [("the output", stage._output_form[2])] + [
        ("window '%s'" % name, t.device) for name, t in stage.windows.items()
    ]
    off = ["%s on %s" % (what, device) for what, device in where if device.type != "cuda"]
    if not off:
        return None
    return (
        "stage '%s' computes on tensors off the GPU (%s): a CUDA graph records only CUDA work, so its "
        "replay would compute nothing; capture needs CUDA tensors" % (stage.name, ", ".join(off))
    )


class Stage:
    """A registered stage. Call it (stage()) where the program ran fn():
    eager until captured, the graph's replay after. write(name, tensor) puts
    new contents into a window; capture() captures now (on this thread);
    release() returns it to eager; state, certification."""

    def __init__(self, session, name, fn, windows, reference, output_of, gate_cos, min_speedup, uses):
        self.session = session
        self.name = name
        self.fn = fn
        self.windows = dict(windows)
        self.reference = reference
        self.output_of = output_of
        self.gate_cos = float(gate_cos)
        self.min_speedup = float(min_speedup)
        self.uses = list(uses or [])
        self.graph = None
        self.static_output = None
        self.calls = 0
        self.replays = 0
        self._thread = None
        out = self._select(fn())
        if not isinstance(out, _torch.Tensor):
            raise TypeError("stage '%s': fn() must return a tensor (or output_of must select one)" % name)
        self._output_form = (out.dtype, tuple(out.shape), out.device)
        wins = []
        for wname, t in self.windows.items():
            if not isinstance(t, _torch.Tensor):
                raise TypeError("stage '%s': window '%s' must be a tensor, not %s" % (name, wname, type(t).__name__))
            wins.append((wname, t.data_ptr(), _stage_dtype(t, "window '%s'" % wname), list(t.shape)))
        self._raw = session._s.register_host_stage(
            name, wins, (out.data_ptr(), _stage_dtype(out, "the output"), list(out.shape))
        )
        session._closers.append(self._abandon)

    def _select(self, result):
        if self.output_of is None:
            return result
        if callable(self.output_of):
            return self.output_of(result)
        return result[self.output_of]

    @property
    def state(self):
        """'eager', 'captured' or 'refused'."""
        return self._raw.state()

    @property
    def certification(self):
        return self._raw.certification()

    def options(self):
        return {"gate_cos": self.gate_cos, "min_speedup": self.min_speedup}

    # --- running ---------------------------------------------------------------------

    def __call__(self):
        self.calls += 1
        if self._raw.capture_requested():
            request = self._raw.take_capture_request()
            if request is not None:
                self._capture(request)
        if self.graph is not None and self._raw.state() != "captured":
            self._drop()  # released (the app or the control socket)
        _acquire_group(self.session, self.uses)
        try:
            if self.graph is not None:
                if _torch.autograd._profiler_enabled():
                    # names the replay's cudaGraphLaunch in a profiler trace:
                    # Wick attributes the graph's kernels to this stage
                    # (app/model/wick-gpu-graphs.h)
                    with _torch.autograd.profiler.record_function("wick stage: " + self.name):
                        self.graph.replay()
                else:
                    self.graph.replay()
                self.replays += 1
                return self.static_output
            return self._select(self.fn())
        finally:
            _release_group(self.session, self.uses)

    def write(self, name, tensor):
        """Copies tensor into the window `name`; refuses a different shape,
        dtype or device, as libwick refuses a coerced window write."""
        if name not in self.windows:
            # libwick's sentence names the windows there are
            self._raw.check_window(name, 0, "f32", [])
        window = self.windows[name]
        if not isinstance(tensor, _torch.Tensor):
            raise TypeError("stage '%s': write('%s') needs a tensor, not %s" % (self.name, name, type(tensor).__name__))
        if tensor.device != window.device:
            raise Error(
                "window '%s' of stage '%s' refused a device mismatch: expected %s, got %s; a replay "
                "over a coerced write would be silently wrong" % (name, self.name, window.device, tensor.device)
            )
        dtype = _STAGE_DTYPES.get(tensor.dtype, str(tensor.dtype).replace("torch.", ""))
        if dtype not in _STAGE_DTYPES.values():
            raise Error(
                "window '%s' of stage '%s' refused a dtype mismatch: expected %s, got %s"
                % (name, self.name, _STAGE_DTYPES[window.dtype], dtype)
            )
        self._raw.check_window(name, tensor.numel() * tensor.element_size(), dtype, list(tensor.shape))
        with _torch.no_grad():
            window.copy_(tensor)

    def release(self):
        self._raw.release()
        self._drop()

    def capture(self, warmup=3, timing_rounds=7, timing_iterations=20):
        """Captures now, on this thread; returns the certificate (a dict).
        The capture's span begins here (a reader of the trace sees it in
        progress) and ends with the certificate."""
        options = {
            "warmup": warmup,
            "gate_cos": self.gate_cos,
            "min_speedup": self.min_speedup,
            "timing_rounds": timing_rounds,
            "timing_iterations": timing_iterations,
        }
        self._raw.begin_capture(options=options)
        return self._capture(options)

    def _drop(self):
        self.graph = None
        self.static_output = None

    def _abandon(self):
        # a request still pending when the session ends: answer it
        if self._raw.take_capture_request() is not None:
            self._raw.complete_capture(failure="the session finished before the stage was called again")

    # --- capture -------------------------------------------------------------------------

    def _capture(self, options):
        self._drop()
        why = _no_cuda_sentence() or _off_device_sentence(self)
        if why is not None:
            return self._raw.complete_capture(options=options, failure=why)
        _acquire_group(self.session, self.uses)
        try:
            figures = self._capture_and_measure(options)
        except Exception as e:  # graph-unsafe work raises inside the capture
            self._drop()
            _torch.cuda.synchronize()
            text = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return self._raw.complete_capture(
                options=options, failure="capture through torch.cuda.graph failed: %s" % text
            )
        finally:
            _release_group(self.session, self.uses)
        cert = self._raw.complete_capture(options=options, figures=figures)
        if not cert["accepted"]:
            self._drop()
        return cert

    def _capture_and_measure(self, options):
        fn = self.fn
        current = _torch.cuda.current_stream()
        side = _torch.cuda.Stream()
        side.wait_stream(current)
        with _torch.cuda.stream(side):
            for _ in range(int(options.get("warmup", 3))):
                self._select(fn())
        current.wait_stream(side)
        _torch.cuda.synchronize()
        graph = _new_graph()
        with _torch.cuda.graph(graph):
            static = self._select(fn())
        kernel_nodes = _kernel_nodes(graph)
        if kernel_nodes == 0:
            raise Error(
                "the captured graph has no kernel nodes (counted through cuGraphGetNodes): the stage "
                "launched no CUDA kernel, so a replay would compute nothing"
            )
        if not isinstance(static, _torch.Tensor) or (static.dtype, tuple(static.shape), static.device) != self._output_form:
            raise Error("the captured output's form differs from the eager one")
        # parity: replay against the reference, float64 sums on the device
        graph.replay()
        ref = self._select(self.reference()) if self.reference is not None else self._select(fn())
        out64 = static.detach().reshape(-1).double()
        ref64 = ref.detach().reshape(-1).double()
        diff = (out64 - ref64).abs()
        n = diff.numel()
        k = max(1, (99 * n + 99) // 100)
        p99 = diff.kthvalue(k).values if n > 0 else diff.sum()
        nan = _torch.isnan(diff).any().double()
        stats = _torch.stack(
            [(out64 * ref64).sum(), (out64 * out64).sum(), (ref64 * ref64).sum(), diff.max() if n else diff.sum(), p99, nan]
        ).tolist()
        dot, osq, rsq, max_abs, p99_abs, has_nan = stats
        if has_nan:
            p99_abs = float("nan")
        # speedup: alternating rounds, per-iteration ms with CUDA events
        rounds = int(options.get("timing_rounds", 7)) or 7
        iterations = int(options.get("timing_iterations", 20)) or 20
        # The eager side runs with Wick's own recording suspended (hooks of an
        # instrument()ed model out), so the graph is not credited with their
        # cost; the same block with recording on is timed too and reported.
        inst = getattr(self.session, "_wick_torch", None)
        eager_ms, replay_ms, instrumented_ms = [], [], []
        blocks = [(0, eager_ms), (1, replay_ms)] + ([(2, instrumented_ms)] if inst is not None else [])
        for _ in range(rounds):
            for which, sink in blocks:
                begin, end = _torch.cuda.Event(enable_timing=True), _torch.cuda.Event(enable_timing=True)
                quiet = inst.suspended() if which == 0 and inst is not None else _contextlib.nullcontext()
                with quiet:
                    begin.record()
                    for _ in range(iterations):
                        if which == 1:
                            graph.replay()
                        else:
                            fn()
                    end.record()
                    end.synchronize()
                sink.append(begin.elapsed_time(end) / iterations)
        if inst is not None:
            self._raw.note_eager_timing(True, instrumented_ms)
        self.graph, self.static_output = graph, static
        return {
            "dot": dot,
            "out_squared": osq,
            "ref_squared": rsq,
            "max_abs": max_abs if _math.isfinite(max_abs) else float("nan"),
            "p99_abs": p99_abs,
            "eager_ms": eager_ms,
            "replay_ms": replay_ms,
            "kernel_nodes": kernel_nodes or 0,
        }


def register_stage(
    session, name, fn, windows=None, reference=None, output_of=None, gate_cos=0.999, min_speedup=1.02, uses=None
):
    """Registers fn as a live stage of the session.

    fn() computes the stage from its windows (tensors it reads, rewritten
    between calls with stage.write) and returns the output (or output_of
    selects it: an index, a key or a callable). reference() (optional)
    computes the eager reference output; without one, fn() eager is the
    reference. gate_cos and min_speedup are the default gates (the capture
    request may change them). uses: RegisteredModules held resident while the
    stage runs (their weights are what a replay reads).
    """
    if not callable(fn):
        raise TypeError("fn must be callable, not %s" % type(fn).__name__)
    if reference is not None and not callable(reference):
        raise TypeError("reference must be callable or None, not %s" % type(reference).__name__)
    if windows is not None and not isinstance(windows, dict):
        raise TypeError("windows must be a dict of name to tensor, not %s" % type(windows).__name__)
    return Stage(session, name, fn, windows or {}, reference, output_of, gate_cos, min_speedup, uses)
