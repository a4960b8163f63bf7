"""wick.torch — Wick for PyTorch: instrument a model, register its modules with
libwick's weight store and its hot stages for CUDA graph capture.

    import wick, wick.torch
    plan = wick.torch.gradient_plan(model)
    with wick.Session("mlp.train", contract=plan, capture_step=3, ...) as session:
        inst = wick.torch.instrument(session, model, optimizer)
        for batch in data:
            with inst.step():
                loss = loss_fn(model(batch.x), batch.y)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

Works with torch 1.13 (CPU, Debian's) and 2.x (CPU and CUDA); a feature a
torch lacks is refused with a sentence naming the version it needs.
docs/python.md has the long form.
"""

import contextlib as _contextlib
import operator as _operator
import os as _os
import re as _re
import threading as _threading
import time as _time

import torch as _torch

from . import _wick
from . import Error

from ._torch_weights import register_module, save_checkpoint, weights_pool, RegisteredModule  # noqa: F401
from ._torch_weights import acquire_group as _acquire_group, release_group as _release_group
from ._torch_stage import register_stage, Stage  # noqa: F401

__all__ = [
    "instrument",
    "gradient_plan",
    "register_module",
    "save_checkpoint",
    "weights_pool",
    "register_stage",
    "torch_version",
    "Instrumentation",
    "RegisteredModule",
    "Stage",
]


def torch_version():
    """torch's version as a tuple of ints (major, minor)."""
    m = _re.match(r"(\d+)\.(\d+)", _torch.__version__)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


_DTYPES = {
    _torch.float32: "f32",
    _torch.float16: "f16",
    _torch.bfloat16: "bf16",
    _torch.float64: "f64",
    _torch.int64: "i64",
    _torch.int32: "i32",
    _torch.int16: "i16",
    _torch.int8: "i8",
    _torch.uint8: "u8",
    _torch.bool: "bool",
}


def dtype_name(dtype):
    """trace/10's spelling of a torch dtype ("f32", ...); str(dtype) when it has none."""
    return _DTYPES.get(dtype, str(dtype).replace("torch.", ""))


_DEVICE_NAMES = {}


def device_name(device):
    name = _DEVICE_NAMES.get(device)
    if name is None:
        d = _torch.device(device)
        name = d.type if d.index is None else "%s:%d" % (d.type, d.index)
        if isinstance(device, _torch.device):
            _DEVICE_NAMES[device] = name
    return name


def gradient_plan(model, root="parameters", assign_family=None, families=None):
    """The exact gradient contract of a model, as libwick's plan builds it.

    Keys are model.named_parameters() names (tied parameters once), sorted by
    libwick. assign_family(key) names each key's family (default: the first
    component of the name). families: {family: (expectation, min_present)};
    by default a family is "active" with min_present = its trainable
    parameters, or "inactive" (0) when none of its parameters requires grad.
    """
    named = list(model.named_parameters())
    if not named:
        raise Error("gradient plan: the model has no parameters")
    keys = [name for name, _ in named]
    assign = assign_family or (lambda key: key.split(".", 1)[0] if "." in key else key)
    if families is None:
        trainable = {}
        for name, p in named:
            fam = assign(name)
            trainable[fam] = trainable.get(fam, 0) + (1 if p.requires_grad else 0)
        fams = [
            (fam, "active" if n > 0 else "inactive", n) for fam, n in sorted(trainable.items())
        ]
    else:
        fams = [(fam, exp, n) for fam, (exp, n) in families.items()]
    return _wick.GradientCapturePlan(root, keys, assign, fams)


# How a tensor's storage is fetched: its untyped storage (torch 2.x), else
# torch 1.13's _storage() (an UntypedStorage, cheaper than storage()'s typed one).
if hasattr(_torch.Tensor, "untyped_storage"):
    _STORAGE_METHOD = "untyped_storage"
elif hasattr(_torch.Tensor, "_storage"):
    _STORAGE_METHOD = "_storage"
else:
    _STORAGE_METHOD = "storage"


def _tracker(raw):
    """The storages and their memory records (wick._wick._Tracker): one alloc
    per storage while alive, a free when the last tensor object we saw on it
    is collected; a tensor record per new storage and per labelled tensor.
    The per-tensor work (storage identity, bytes, shape, dtype, device) runs
    in C, a module call's outputs in one call."""
    return _wick._Tracker(raw, _torch.Tensor, _DTYPES, dtype_name, _DEVICE_NAMES, device_name,
                          _STORAGE_METHOD)


class _OpMode:
    """aten op records through a dispatch mode (ops=True)."""

    def __init__(self, inst):
        from torch.utils._python_dispatch import TorchDispatchMode

        raw = inst.raw
        now = raw.now_ns

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                start = now()
                out = func(*args, **(kwargs or {}))
                end = now()
                first = out[0] if isinstance(out, (tuple, list)) and out else out
                if isinstance(first, _torch.Tensor):
                    shape, dtype, device = list(first.shape), dtype_name(first.dtype), device_name(first.device)
                else:
                    shape, dtype, device = [], "f32", inst.device
                try:
                    raw.record_op(
                        str(func.__name__ if hasattr(func, "__name__") else func),
                        shape=shape,
                        dtype=dtype,
                        device=device,
                        duration_ns=max(end - start, 1),
                        timestamp_ns=max(start, 1),
                    )
                    inst.ops_recorded += 1
                except Error:
                    inst.record_errors += 1
                return out

        self.mode_class = Mode
        self.mode = None

    def __enter__(self):
        self.mode = self.mode_class()
        self.mode.__enter__()

    def __exit__(self, *exc):
        self.mode.__exit__(*exc)
        self.mode = None


class Instrumentation:
    """What wick.torch.instrument() installed; remove() takes it all out
    (also done when the session finishes)."""

    def __init__(self, session, model, optimizer, ops, memory, module_spans, memory_history=False,
                 memory_history_path=None):
        self.session = session
        self.memory_history_path = None
        if memory_history:
            self.memory_history_path = _start_memory_history(session, memory_history_path)
        self.raw = session._s
        self.model = model
        self.optimizer = optimizer
        self.plan = session.plan
        self.ops = ops
        self.memory = memory
        self.device = str(session.device)
        self.step_number = 0
        self.in_step = False
        self._record_errors = 0
        self.ops_recorded = 0
        self.tracker = _tracker(self.raw)
        self._torch_device = None
        self._statm = None  # (fd, pid, page size, memory bytes) of /proc/self/statm, on CPU
        self._handles = []
        self._module_spans = {}  # thread-local stacks of (module, span id)
        self._local = _threading.local()
        self._backward_span = 0
        self._module_call = None  # the wick._wick._ModuleCall, made by _patch_call
        self._patched_backward = None
        self._patched_call = None
        self._op_mode = _OpMode(self) if ops else None
        self._names = {m: (n or type(model).__name__) for n, m in model.named_modules()}
        self._install(module_spans)
        session._closers.append(self.remove)
        session._wick_torch = self

    @property
    def _suspended(self):
        """suspended() blocks in progress (the module call reads it in C)."""
        return self._module_call.suspended

    @_suspended.setter
    def _suspended(self, value):
        self._module_call.suspended = value

    @property
    def record_errors(self):
        """Records libwick refused (the tracker's among them)."""
        return self._record_errors + self.tracker.errors

    @record_errors.setter
    def record_errors(self, value):
        self._record_errors = value - self.tracker.errors

    # --- install / remove -----------------------------------------------------

    def _install(self, module_spans):
        raw = self.raw
        # parameters: tensors and their storages, category parameter
        with self.session.span("setup"):
            if self.memory:
                # a registered module's parameters are the weight store's
                # memory records, not the tracker's
                stored = {
                    id(p)
                    for m in self.model.modules()
                    if getattr(m, "_wick_registered", None) is not None
                    for p in m.parameters()
                }
                for name, p in self.model.named_parameters():
                    if id(p) in stored:
                        try:
                            raw.record_tensor(
                                name, list(p.shape), dtype_name(p.dtype), device_name(p.device),
                                "parameter", label=name, requires_grad=bool(p.requires_grad),
                            )
                        except Error:
                            self.record_errors += 1
                        continue
                    self.tracker.track(p, "parameter", name)
            self._sample_device_memory()
        # Module spans come from a wrapper of Module.__call__, not from forward
        # hooks: a module with hooks takes torch's slow call path (the hooks'
        # dispatch cost more than the spans), and a forward (or a user's hook)
        # that raises never reaches a post hook, so the wrapper ends what it
        # opened. Modules outside the model pass straight through.
        self._spanned = dict(self._names) if module_spans else {self.model: self._names[self.model]}
        self._params = list(self.model.named_parameters())
        self._grad_labels = [("grad." + name, p) for name, p in self._params]
        self._patch_call()
        # backward: Tensor.backward and torch.autograd.backward, wrapped while
        # the instrumentation is installed
        self._patch_backward()
        if self.optimizer is not None:
            self._wrap_optimizer(self.optimizer)

    def remove(self):
        raw = self.raw
        if self.memory_history_path is not None:
            path, self.memory_history_path = self.memory_history_path, None
            _dump_memory_history(path)
            self.memory_history_written = path
        if self.memory and not raw.closed and not raw.finished and self.tracker.live:
            with self.session.span("teardown"):
                self.tracker.free_all()
        self._close_statm()
        for h in self._handles:
            h.remove()
        self._handles = []
        if self._patched_backward is not None:
            _torch.Tensor.backward = self._patched_backward
            self._patched_backward = None
        if self._patched_call is not None:
            _torch.nn.Module.__call__ = self._patched_call
            self._patched_call = None
        opt = self.optimizer
        if opt is not None and "step" in opt.__dict__:
            del opt.step
        if opt is not None and "zero_grad" in opt.__dict__:
            del opt.zero_grad

    @_contextlib.contextmanager
    def suspended(self):
        """Wick's recording off for the block, as if the model were not
        instrumented: modules open no spans and track no tensors, any forward
        hooks of this instrumentation are taken out of their modules (and put
        back in their places after), backward and the optimizer record
        nothing, the op dispatch mode is lifted. A stage's speedup gate times its eager rounds inside this, so
        the graph is not credited with the cost of Wick's own hooks."""
        saved = []
        ours = {}
        for h in self._handles:
            hooks = h.hooks_dict_ref() if hasattr(h, "hooks_dict_ref") else None
            if hooks is not None:
                ours.setdefault(id(hooks), (hooks, set()))[1].add(h.id)
        for hooks, ids in ours.values():
            saved.append((hooks, list(hooks.items())))
            for key in ids:
                hooks.pop(key, None)
        self._suspended += 1
        try:
            if self._op_mode is not None and self._op_mode.mode is not None:
                from torch.utils._python_dispatch import _disable_current_modes

                with _disable_current_modes():
                    yield
            else:
                yield
        finally:
            self._suspended -= 1
            for hooks, items in saved:
                added = [(k, v) for k, v in hooks.items()]
                hooks.clear()
                hooks.update(items)
                for k, v in added:
                    hooks.setdefault(k, v)

    # --- steps ------------------------------------------------------------------

    @_contextlib.contextmanager
    def step(self):
        """One training step: a `train_step` span (the measured region on the
        session's capture step), gradients recorded after its backward on the
        capture step, a device memory sample at its end; registered modules
        stay resident for its whole length."""
        regs = list(getattr(self.session, "_wick_modules", {}).values())
        _acquire_group(self.session, regs)  # waits while one is evicted
        self.step_number += 1
        measured = self.step_number == self.session.capture_step
        region = self.session.measurement("train_step") if measured else self.session.span("train_step")
        self.in_step = True
        try:
            with region:
                if self._op_mode is not None:
                    with self._op_mode:
                        yield self.step_number
                else:
                    yield self.step_number
                self._sample_device_memory()
        finally:
            self.in_step = False
            _release_group(self.session, regs)

    # --- forward ------------------------------------------------------------------

    def _stack(self):
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _unwind(self, module, include):
        """Ends the spans this thread's stack holds above module's newest
        entry (innermost first) and, with include, module's own; False when
        module has no entry."""
        stack = self._stack()
        index = len(stack) - 1
        while index >= 0 and stack[index][0] is not module:
            index -= 1
        if index < 0:
            return False
        raw = self.raw
        keep = index if include else index + 1
        while len(stack) > keep:
            _, sid = stack.pop()
            if not raw.closed and not raw.finished:
                raw.span_end(sid)
        return True

    def _patch_call(self):
        if self._patched_call is not None:
            return
        original = _torch.nn.Module.__call__
        # One C call a module call (wick._wick._ModuleCall): the module's span
        # (the step's `forward` for the model's outermost call with grad on),
        # the model's inputs and every output tracked, the thread's stack of
        # (module, span id) that _unwind reads
        self._module_call = _wick._ModuleCall(
            original, self._spanned, self.model, self.session, self.raw, self.tracker, self._local,
            self._unwind, _torch.is_grad_enabled, bool(self.memory))
        self._patched_call = original
        _torch.nn.Module.__call__ = self._module_call

    # --- backward -------------------------------------------------------------------

    def _patch_backward(self):
        original = _torch.Tensor.backward
        inst = self

        def backward(tensor, *args, **kwargs):
            raw = inst.raw
            if raw.closed or raw.finished or inst._suspended:
                return original(tensor, *args, **kwargs)
            sid = raw.span_begin("backward", _wick.SPAN_MODULE, _wick.STEP_BACKWARD)
            ok = False
            try:
                result = original(tensor, *args, **kwargs)
                ok = True
                return result
            finally:
                try:
                    if ok and not raw.finished:
                        inst._after_backward(sid)
                finally:
                    if not raw.closed and not raw.finished:
                        raw.span_end(sid)

        self._patched_backward = original
        _torch.Tensor.backward = backward

    def _after_backward(self, sid):
        if self.memory:
            self.tracker.track_gradients(self._grad_labels, sid)
        if self.plan is not None and self.step_number == self.session.capture_step:
            self.record_gradients()

    def record_gradients(self):
        """Records one gradient per manifest entry: L2 norms on the device,
        one readback for all of them."""
        plan = self.plan
        by_name = dict(self.model.named_parameters())
        norms, present = [], []
        for key in plan.keys:
            p = by_name.get(key)
            g = p.grad if p is not None else None
            present.append(g is not None)
            if g is not None:
                norms.append(_torch.linalg.vector_norm(g.detach(), dtype=_torch.float64) if hasattr(_torch, "linalg") else g.detach().double().norm())
        values = _torch.stack([n.reshape(()) for n in norms]).cpu().tolist() if norms else []
        it = iter(values)
        out = [next(it) if has else None for has in present]
        plan.record(self.raw, out)

    # --- optimizer ----------------------------------------------------------------------

    def _wrap_optimizer(self, opt):
        inst = self
        step = opt.step  # bound method (or torch's profile-hook wrapper)
        seen = []  # the state's values at the last step (held: their ids stay theirs)

        def wrapped_step(*args, **kwargs):
            raw = inst.raw
            if raw.closed or raw.finished or inst._suspended:
                return step(*args, **kwargs)
            sid = raw.span_begin("optimizer", _wick.SPAN_FUNCTION, _wick.STEP_OPTIMIZER)
            try:
                return step(*args, **kwargs)
            finally:
                try:
                    if inst.memory and not raw.finished:
                        # After the first step the state is the same tensors,
                        # updated in place: one identity check, not a track each.
                        values = [v for state in opt.state.values() for v in state.values()]
                        if len(values) != len(seen) or not all(map(_operator.is_, values, seen)):
                            for value in values:
                                if isinstance(value, _torch.Tensor) and value.dim() > 0:
                                    inst.tracker.track(value, "optimizer", None, sid)
                            seen[:] = values
                finally:
                    if not raw.closed and not raw.finished:
                        raw.span_end(sid)

        opt.step = wrapped_step

    # --- device memory --------------------------------------------------------------------

    def _sample_device_memory(self):
        raw = self.raw
        if raw.finished:
            return
        try:
            dev = self._torch_device
            if dev is None:
                dev = self._torch_device = _torch.device(self.device)
            if dev.type == "cuda" and _torch.cuda.is_available():
                free, total = _torch.cuda.mem_get_info(dev)
                used, reserved = _allocator_bytes(dev)
                raw.record_device_memory(
                    device_name(dev),
                    used_bytes=used,
                    reserved_bytes=reserved,
                    free_bytes=int(free),
                    capacity_bytes=int(total),
                )
            else:
                statm = self._statm
                if statm is None or statm[1] != _os.getpid():
                    statm = self._open_statm()
                resident = int(_os.pread(statm[0], 128, 0).split()[1])
                raw.record_device_memory("cpu", used_bytes=resident * statm[2], capacity_bytes=statm[3])
        except (Error, OSError, ValueError):
            self.record_errors += 1

    def _open_statm(self):
        """/proc/self/statm kept open for the steps' samples (read again from
        its start each step: procfs renews it), with the process it belongs
        to (a forked child opens its own), the page size and the memory."""
        self._close_statm()
        fd = _os.open("/proc/self/statm", _os.O_RDONLY | getattr(_os, "O_CLOEXEC", 0))
        page = _os.sysconf("SC_PAGE_SIZE")
        self._statm = (fd, _os.getpid(), page, _os.sysconf("SC_PHYS_PAGES") * page)
        return self._statm

    def _close_statm(self):
        statm, self._statm = self._statm, None
        if statm is not None and statm[1] == _os.getpid():
            _os.close(statm[0])


def memory_history_path_for(jsonl_path):
    """Where memory_history=True writes the snapshot of a session writing
    @jsonl_path: beside it, run.jsonl -> run.memory.pickle (the app opens the
    two together)."""
    base = _os.fspath(jsonl_path)
    for ext in (".jsonl.gz", ".jsonl.zst", ".jsonl"):
        if base.endswith(ext):
            base = base[: -len(ext)]
            break
    return base + ".memory.pickle"


def _start_memory_history(session, path):
    if not _torch.cuda.is_available():
        raise Error(
            "memory_history=True records the CUDA caching allocator's history, and torch %s "
            "sees no CUDA device" % _torch.__version__
        )
    if path is None:
        if session.jsonl_path is None:
            raise Error("memory_history=True needs the session's jsonl_path (the snapshot is "
                        "written beside it) or memory_history_path")
        path = memory_history_path_for(session.jsonl_path)
    record = getattr(_torch.cuda.memory, "_record_memory_history", None)
    if record is None:
        raise Error("memory_history=True: torch %s has no torch.cuda.memory._record_memory_history"
                    % _torch.__version__)
    try:
        record(enabled="all", max_entries=1000000)  # torch 2.1 and later
    except TypeError:
        record(True)  # torch 1.13 / 2.0
    return _os.fspath(path)


def _dump_memory_history(path):
    _torch.cuda.synchronize()
    _torch.cuda.memory._dump_snapshot(path)
    try:
        _torch.cuda.memory._record_memory_history(enabled=None)
    except TypeError:
        _torch.cuda.memory._record_memory_history(False)


def _allocator_bytes(dev):
    """(allocated, reserved) bytes of torch's caching allocator on a CUDA
    device. torch.cuda.memory_allocated() and memory_reserved() each flatten
    the allocator's whole statistics into a new dict (about 0.3 ms a call on
    the H200's host, twice a step); the nested dict they start from holds the
    same two numbers (memory_stats_as_nested_dict, public since torch 1.4)."""
    try:
        stats = _torch.cuda.memory_stats_as_nested_dict(dev)
        return int(stats["allocated_bytes"]["all"]["current"]), int(stats["reserved_bytes"]["all"]["current"])
    except (AttributeError, KeyError, TypeError, RuntimeError):
        return int(_torch.cuda.memory_allocated(dev)), int(_torch.cuda.memory_reserved(dev))


def instrument(session, model, optimizer=None, ops=False, memory=True, module_spans=True,
               memory_history=False, memory_history_path=None):
    """Instruments a torch model for a wick.Session.

    Module spans for forward (every submodule's call, opened and ended by the
    instrumentation's wrapper of Module.__call__, the top-level one as the
    step's `forward`), `backward` around Tensor.backward
    (gradients recorded after it on the capture step by the session's
    GradientCapturePlan), `optimizer` around optimizer.step; tensors and their
    storages' memory with categories parameter, activation (forward outputs),
    gradient (.grad), optimizer (optimizer state) and other (model inputs);
    a device memory sample per step. ops=True adds an aten op record per op
    through a dispatch mode (its cost: docs/performance.md).

    memory_history=True (CUDA only) records the caching allocator's history
    (torch.cuda.memory._record_memory_history) from here on and, when the
    instrumentation is removed (the session's finish or close), writes its
    snapshot beside the trace: memory_history_path, or the session's
    jsonl_path with .memory.pickle for .jsonl (memory_history_path_for).
    Without CUDA it raises wick.Error saying so.

    Use Instrumentation.step() around each training step.
    """
    if not isinstance(model, _torch.nn.Module):
        raise TypeError("model must be a torch.nn.Module, not %s" % type(model).__name__)
    if optimizer is not None and not isinstance(optimizer, _torch.optim.Optimizer):
        raise TypeError("optimizer must be a torch.optim.Optimizer or None, not %s" % type(optimizer).__name__)
    if getattr(session, "_wick_torch", None) is not None:
        raise Error("instrument: this session already has an instrumented model")
    return Instrumentation(session, model, optimizer, ops, memory, module_spans,
                           memory_history=memory_history, memory_history_path=memory_history_path)
