"""wick.torch's weight store: a torch module's parameters in libwick's store.

register_module() moves the module's parameters into memory the store can
release and map again at the same address (one libwick allocation per module:
wick_weight_alloc_host on the CPU, the CUDA VMM allocator on a GPU) and points
each Parameter's .data at its place there, so evict/restore by the app or
`wick-trace control PID evict|restore MODULE` frees and brings back the bytes
with every pointer (and any CUDA graph that reads them) unchanged. Parameters
already in libwick's CUDA memory (allocated inside weights_pool()) are
registered where they are, without a copy.
"""

import contextlib as _contextlib
import ctypes as _ctypes
import hashlib as _hashlib
import os as _os
import threading as _threading
import time as _time

import torch as _torch

from . import _wick
from . import Error

_ST_DTYPES = {
    _torch.float32: "F32",
    _torch.float16: "F16",
    _torch.bfloat16: "BF16",
    _torch.float64: "F64",
    _torch.int64: "I64",
    _torch.int32: "I32",
    _torch.int16: "I16",
    _torch.int8: "I8",
    _torch.uint8: "U8",
    _torch.bool: "BOOL",
}

_ALIGN = 256


def _st_dtype(t, name):
    try:
        return _ST_DTYPES[t.dtype]
    except KeyError:
        raise Error("parameter %s: dtype %s has no safetensors name" % (name, t.dtype)) from None


def _torch_version():
    from .torch import torch_version

    return torch_version()


class _CudaBuffer:
    """A device allocation seen through __cuda_array_interface__."""

    def __init__(self, address, nbytes):
        self.__cuda_array_interface__ = {
            "shape": (nbytes,),
            "typestr": "|u1",
            "data": (address, False),
            "version": 2,
        }


def _byte_view(address, nbytes, device):
    if device.type == "cuda":
        return _torch.as_tensor(_CudaBuffer(address, nbytes), device=device)
    buf = (_ctypes.c_uint8 * nbytes).from_address(address)
    return _torch.frombuffer(buf, dtype=_torch.uint8)


def save_checkpoint(path, module, prefix=""):
    """Writes the module's parameters (tied ones once) to a safetensors file
    with libwick's writer; keys are prefix + named_parameters() names."""
    tensors, keep = [], []
    for name, p in module.named_parameters():
        t = p.detach()
        if not t.is_contiguous():
            t = t.contiguous()
        keep.append(t)
        tensors.append((prefix + name, t.data_ptr(), _st_dtype(t, name), list(t.shape)))
    memory = "cuda" if keep and keep[0].is_cuda else "host"
    if memory == "cuda":
        _torch.cuda.synchronize()
    _wick.safetensors_write(str(path), tensors, memory, {"format": "pt", "producer": "wick.torch"})


class RegisteredModule:
    """A module in the weight store. stats(), evict(tier), restore(),
    is_resident(); used by wick.torch's hooks to hold it resident."""

    def __init__(self, session, name, module, checkpoint, when_evicted, verify_restore):
        self.session = session
        self.raw = session._s
        self.name = name
        self.module = module
        self.checkpoint = checkpoint
        self.when_evicted = when_evicted
        self.verify_restore = verify_restore
        self.address = 0
        self.nbytes = 0
        self.memory = "host"
        self.copied = False
        self.uses = 0
        self.waits = 0
        self.restores_verified = 0
        self.restore_mismatches = 0
        self._digest = None
        self._keep = None
        self._forward_holds = 0

    # --- layout -------------------------------------------------------------------

    def _register(self):
        named = _named_parameters_all(self.module)
        if not named:
            raise Error("register_module '%s': the module has no parameters" % self.name)
        devices = {p.device for _, p in named}
        if len(devices) != 1:
            raise Error(
                "register_module '%s': its parameters are on %s; a module lives on one device"
                % (self.name, ", ".join(sorted(str(d) for d in devices)))
            )
        device = devices.pop()
        self.memory = "cuda" if device.type == "cuda" else "host"
        for name, p in named:
            _st_dtype(p, name)
        params = self._entries(named)
        # From here the store's memory records are these parameters' (its
        # evictions ride on them): wick.torch's tracker frees its own
        # records of them, so the trace counts them once.
        tracker = getattr(getattr(self.session, "_wick_torch", None), "tracker", None)
        forgotten = tracker.forget(p for _, p in named) if tracker is not None else []
        try:
            if self.memory == "cuda":
                _torch.cuda.synchronize(device)
                try:  # in place: parameters allocated inside weights_pool()
                    self.raw.weights_register(self.name, params, self.memory, self.checkpoint)
                    return
                except Error as e:
                    if "checkpoint" in str(e):
                        raise
            self._move(named, device)
            self.raw.weights_register(self.name, self._entries(named), self.memory, self.checkpoint)
        except BaseException:
            for name, p in named:
                if id(p) in forgotten:
                    tracker.track(p, "parameter", name)
            raise

    @staticmethod
    def _entries(named):
        return [(n, p.data_ptr(), _ST_DTYPES[p.dtype], list(p.shape)) for n, p in named]

    def _move(self, named, device):
        # one allocation, each distinct storage once (tied parameters share it)
        places, offset = {}, 0
        keys = [(p.data_ptr(), p.numel() * p.element_size()) for _, p in named]
        for key in keys:
            if key not in places:
                places[key] = offset
                offset += (key[1] + _ALIGN - 1) // _ALIGN * _ALIGN
        nbytes = max(offset, 1)
        if self.memory == "cuda":
            address = _wick.alloc_device(nbytes)
        else:
            address = _wick.alloc_host(nbytes)
        base = _byte_view(address, nbytes, device)
        moved = {}
        with _torch.no_grad():
            for (_, p), key in zip(named, keys):
                if key in moved:
                    p.data = moved[key]
                    continue
                off = places[key]
                view = base[off : off + key[1]].view(p.dtype).view(p.shape)
                view.copy_(p.data)
                moved[key] = view
                p.data = view
        if self.memory == "cuda":
            _torch.cuda.synchronize(device)
        self.address, self.nbytes, self.copied, self._keep = address, nbytes, True, base

    # --- residency --------------------------------------------------------------------

    def is_resident(self):
        return self.raw.weights_is_resident(self.name)

    def stats(self):
        return self.raw.weights_stats(self.name)

    def evict(self, tier="auto"):
        return self.raw.weights_evict(self.name, tier)

    def restore(self):
        return self.raw.weights_restore(self.name)

    def param_info(self):
        out, i = [], 0
        while True:
            info = self.raw.weights_param_info(self.name, i)
            if info is None:
                return out
            out.append(info)
            i += 1

    def digest(self):
        """SHA-256 of the module's parameter bytes (tied ones once)."""
        h = _hashlib.sha256()
        seen = set()
        with _torch.no_grad():
            for _, p in self.module.named_parameters():
                if p.data_ptr() in seen:
                    continue
                seen.add(p.data_ptr())
                h.update(p.detach().reshape(-1).view(_torch.uint8).cpu().numpy().tobytes())
        return h.hexdigest()

    def _acquire(self):
        acquire_group(self.session, [self])

    def _release(self):
        release_group(self.session, [self])

    def _forward_pre(self, module, inputs):
        inst = getattr(self.session, "_wick_torch", None)
        if inst is not None and inst.in_step:
            return  # the step holds every registered module
        self._acquire()
        self._forward_holds += 1

    def _forward_post(self, module, inputs, output):
        if self._forward_holds > 0:
            self._forward_holds -= 1
            self._release()


_holding = _threading.local()


def acquire_group(session, regs):
    """Holds every module of regs resident (use_begin), the residency check
    and the use_begin calls as one step with respect to the control socket's
    weight commands (under its control lock, as wick-demo does). An evicted
    module makes it wait for a restore (when_evicted="wait") or restores it
    ("restore"). A thread that already holds modules takes more without the
    control lock: an eviction waiting for its use_end holds that lock."""
    raw = session._s
    if raw.closed or not regs:
        return
    depth = getattr(_holding, "depth", 0)
    if depth > 0:
        for r in regs:
            raw.weights_use_begin(r.name)
            r.uses += 1
        _holding.depth = depth + 1
        return
    waiting = []
    span = 0
    while True:
        raw.lock_control()
        try:
            absent = [r for r in regs if r.when_evicted == "wait" and not raw.weights_is_resident(r.name)]
            if not absent:
                for r in regs:
                    raw.weights_use_begin(r.name)
                    r.uses += 1
                break
        finally:
            raw.unlock_control()
        for r in absent:
            if r not in waiting:
                waiting.append(r)
                r.waits += 1
        if not span and not raw.finished:
            span = raw.span_begin("waiting_for_weights", _wick.SPAN_FUNCTION, _wick.STEP_NONE)
        _time.sleep(0.02)
    _holding.depth = 1
    if span and not raw.finished:
        raw.span_end(span)
    for r in waiting:
        if r.verify_restore and r._digest is not None:
            if r.digest() == r._digest:
                r.restores_verified += 1
            else:
                r.restore_mismatches += 1


def release_group(session, regs):
    raw = session._s
    if raw.closed or not regs:
        return
    for r in reversed(regs):
        if r.uses == 0:
            continue
        if r.verify_restore:
            r._digest = r.digest()
        r.uses -= 1
        raw.weights_use_end(r.name)
    _holding.depth = max(getattr(_holding, "depth", 1) - 1, 0)


def _named_parameters_all(module):
    """(name, parameter) for every name, tied parameters under each of theirs."""
    out = []

    def walk(mod, prefix, seen):
        if id(mod) in seen:
            return
        seen = seen | {id(mod)}
        for pname, p in mod._parameters.items():
            if p is not None:
                out.append((prefix + pname, p))
        for cname, child in mod._modules.items():
            if child is not None:
                walk(child, prefix + cname + ".", seen)

    walk(module, "", frozenset())
    return out


def _accepts_remove_duplicate(module):
    import inspect

    try:
        return "remove_duplicate" in inspect.signature(module.named_parameters).parameters
    except (TypeError, ValueError):
        return False


def register_module(session, name, module, checkpoint=None, when_evicted="wait", verify_restore=False):
    """Registers module's parameters in the session's weight store as `name`.

    checkpoint: a .safetensors file or a sharded directory; parameters that
    match it (key found, equal shape, first and last 64 KiB equal) go to the
    disk tier on eviction, the others to the RAM tier. when_evicted: what a
    forward through the module does while it is evicted — "wait" for a
    restore (the app's or the control socket's) or "restore" it at once.
    verify_restore: compare a SHA-256 of the bytes before eviction and after
    restore (counted in restores_verified / restore_mismatches).
    """
    if not isinstance(module, _torch.nn.Module):
        raise TypeError("module must be a torch.nn.Module, not %s" % type(module).__name__)
    if not isinstance(name, str):
        raise TypeError("name must be a str, not %s" % type(name).__name__)
    if when_evicted not in ("wait", "restore"):
        raise ValueError("when_evicted must be 'wait' or 'restore', got %r" % (when_evicted,))
    if checkpoint is not None:
        checkpoint = _os.fspath(checkpoint)
    if getattr(module, "_wick_registered", None) is not None:
        raise Error("register_module '%s': the module is already registered as '%s'" % (name, module._wick_registered.name))
    reg = RegisteredModule(session, name, module, checkpoint, when_evicted, verify_restore)
    reg._register()
    module._wick_registered = reg
    if not hasattr(session, "_wick_modules"):
        session._wick_modules = {}
    session._wick_modules[name] = reg
    # resident while used: for an instrumented step's whole length, else for
    # the forward
    reg._handles = (
        module.register_forward_pre_hook(reg._forward_pre),
        module.register_forward_hook(reg._forward_post),
    )
    return reg


@_contextlib.contextmanager
def weights_pool(session):
    """Allocates the CUDA tensors made inside it through libwick's CUDA VMM
    allocator (a torch.cuda.MemPool over a CUDAPluggableAllocator), so that
    register_module() registers a model's parameters where they are and
    restore brings them back at the same address. Needs torch >= 2.5 with
    CUDA."""
    version = _torch_version()
    if version < (2, 5):
        raise Error(
            "weights_pool needs torch >= 2.5 (torch.cuda.MemPool with a pluggable allocator); "
            "this is torch %s" % _torch.__version__
        )
    if not _torch.cuda.is_available():
        raise Error("weights_pool needs a CUDA device; torch %s sees none" % _torch.__version__)
    ok, why = _wick.cuda_available()
    if not ok:
        raise Error("weights_pool: %s" % why)
    pools = getattr(session, "_wick_pools", None)
    if pools is None:
        pools = session._wick_pools = []
        allocator = _torch.cuda.memory.CUDAPluggableAllocator(
            _wick.__file__, "wick_torch_cuda_malloc", "wick_torch_cuda_free"
        )
        session._wick_allocator = allocator
    pool = _torch.cuda.MemPool(session._wick_allocator.allocator())
    pools.append(pool)  # alive as long as the session: the tensors live in it
    with _torch.cuda.use_mem_pool(pool):
        yield pool
