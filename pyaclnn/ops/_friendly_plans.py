"""Cached explicit plans behind friendly functions, for repeated calls at decode shapes.

A friendly call on pyaclnn tensors repeated with the same layouts and attributes -- a decode loop --
would run phase 1 again each time, make its outputs and their ``aclTensor`` descriptors, and pass
through the host-data boundary.  Instead, the first such call makes an explicit plan
(:class:`~pyaclnn.ops.Plan`: it owns its descriptors, workspace and outputs' memory) and keeps it,
looked up by (operator, attributes, layouts); every later call is that plan's launch: one C call
(``_fastcall.c``: ``make_kept`` and ``_fast_friendly``) makes the call's new outputs, checks the
arguments, re-points the addresses that changed and queues the launch.  Results are identical: the
same kernel runs on the same data.

Why it is safe:

* The key is everything phase 1 sees except data addresses: the operator, its attributes and each
  tensor's interned layout (dtype, shape, strides, offset, format, storage dims).  Every launch
  re-points every slot whose address differs from the one the executor holds, so an executor never
  runs with an address of an earlier call.
* The outputs belong to the caller alone: they are new for each call, never recycled while anyone
  holds one. Their block (one per call) comes back to the plan's kept blocks when the caller has
  closed or dropped every output (``tensor.set_maker``, ``runtime.set_blocks``), and is handed out
  again only to a later call of the same plan on the same stream, which runs after every earlier use;
  closing the plan gives the kept blocks back to the stream's pool.
* Only default streams of the device pyaclnn holds for the whole process keep such caches, so a
  cache changes no lifetime; when such a stream closes its plans stop launching (the call then takes
  the ordinary path and raises what it raises).
* Anything unusual -- another stream, large numpy data (:func:`run_numpy` takes small numpy calls),
  NPU torch tensors, a thread not bound to the device,
  the interpreter exiting, no C accelerator -- takes the ordinary path.

torch CPU tensors on the emulator (:func:`run_torch`) use the same plans: the inputs are wrapped in
place as the boundary wraps them, the outputs are new ``torch.empty`` tensors as the ordinary path's,
registered with the emulator for the duration of the call only (so no registration outlives its
torch storage), and the call waits for its stream, since torch reads the results at once.

Bounds: :data:`ENTRIES` plans per stream (the oldest goes first), each with its workspace.
``pyaclnn.empty_cache()`` drops them.
"""
from __future__ import annotations

import ctypes
import math
import sys
from typing import Any, Callable

import numpy as np
from .._mutex import mutex as _mutex

from .. import dtypes
from .. import _release
from .._release import _put
from ..errors import PyaclnnError, recent_error_message
from ..runtime import Stream, _BindScope, _tls, current_stream, holds_forever, is_stub, on_empty_cache
from ..runtime.host import hold_host_ranges, release_host_ranges
from ..tensor import empty
from . import _native
from ._prepared import Plan, owning_plan, plan_class

ENTRIES = 32        # cached plans per stream

_MISSING = object()


class _Entry:
    """One cached plan and what its friendly function returns of its outputs."""
    __slots__ = ("plan", "specs", "returns", "torch_specs", "torch_sizes", "staging", "lock")

    def __init__(self, plan: Plan, specs: tuple, returns: tuple | None):
        self.plan = plan
        self.staging: tuple | None = None         # numpy calls: the plan's own input tensors
        self.lock: Any = None                     # (and the lock of a call using them)
        self.torch_specs: list | None = None      # (shape, torch dtype, nbytes) per output, once known
        self.torch_sizes: list | None = None      # their nbytes
        self.specs = specs              # ((shape, aclDataType), ...) of the outputs, in slot order
        self.returns = returns          # output positions returned, None where inactive; None: all

    def close(self) -> None:
        self.plan.close()           # (its kept output blocks go back to the pool)


class _StreamPlans:
    __slots__ = ("entries", "last", "lock")

    def __init__(self):
        self.entries: dict = {}
        # (operator, attributes) -> (entry, its key): the plan the last call of that kind took. Tried
        # first: C checks every input's layout against the plan's, so a call of other layouts is
        # refused and looked up by its full key (building and hashing that key is most of a lookup).
        self.last: dict = {}
        self.lock = _mutex()


_streams: dict = {}         # Stream -> _StreamPlans (default streams held for the whole process only)
_streams_lock = _mutex()
_off: list = []             # [reason] when the C accelerator is missing
_is_stub: list = []         # [is_stub()] once known (the backend never changes)
_cpu: list = []             # [torch.device("cpu")]
_from_torch: list = []      # [pyaclnn.torch.from_torch] once imported


def _stub() -> bool:
    if not _is_stub:
        _is_stub.append(is_stub())
    return _is_stub[0]


def _plans_for(stream: Stream) -> _StreamPlans | None:
    if _off or not stream.is_default or not holds_forever(stream):
        return None
    if not getattr(plan_class(), "accelerated", False):
        _off.append("no C accelerator")
        return None
    with _streams_lock:
        sp = _streams.get(stream)
        if sp is None:
            sp = _streams[stream] = _StreamPlans()
    return sp


def run(key: tuple, inputs: tuple, build: Callable[..., Any]):
    """The outputs of a friendly call through its cached plan, or None when the call must take the
    ordinary path (nothing has been launched then).

    ``key``: the operator and its attributes (hashable); ``inputs``: the tensor arguments that come
    first in the operator's slots, Tensors or None; ``build(*inputs)`` -> ``(fn, args, specs,
    returns)``: the OpFunction, its full argument list (outputs last, as None), the outputs'
    ``(shape, aclDataType)`` and which of them the caller gets (None: all, in order), called on a miss.
    """
    stream = current_stream()
    sp = _streams.get(stream) or _plans_for(stream)    # a _StreamPlans is always true
    if sp is None:
        return None
    try:
        last = sp.last.get(key)
    except TypeError:                           # an unhashable attribute
        return None
    if last is not None and stream._handle is not None:
        entry, full = last
        plan = entry.plan
        try:
            r = plan._fast_friendly(inputs, plan._maker(stream), stream)
        except Exception:
            _discard(sp, full, entry)       # refused at launch (see below)
            raise
        if r is not None:
            returns = entry.returns
            if returns is None:
                return r
            return tuple([None if i is None else r[i] for i in returns])
    kind = key
    try:
        key = (key, *[None if v is None else v._key for v in inputs])
        entry = sp.entries.get(key, _MISSING)
    except (AttributeError, TypeError):         # not Tensors
        return None
    if entry is _MISSING:
        entry = _add(sp, key, stream, build, inputs)
    if entry is None or stream._handle is None:
        return None
    try:
        r = entry.plan.launch(inputs, stream)
        if r is None:
            return None
    except Exception:
        # refused at launch (the vendor tiles then): keep no plan for it. (Not on a KeyboardInterrupt:
        # the plan is sound, and preparing it again on every interrupt only costs.)
        _discard(sp, key, entry)
        raise
    if sp.entries.get(key) is entry:
        sp.last[kind] = (entry, key)
    returns = entry.returns
    if returns is None:
        return r
    return tuple([None if i is None else r[i] for i in returns])


NUMPY_MAX_BYTES = 1 << 20     # host inputs beyond this take the ordinary path (used in place on the emulator)


def run_numpy(key: tuple, values: tuple, build: Callable[..., Any]):
    """:func:`run` for numpy arrays (small ones: the call's cost is its overhead): the plan owns a
    device tensor per input (its *staging*), which each call overwrites with the caller's data,
    then it launches, waits for the stream (the caller gets host arrays) and copies the outputs
    into new numpy arrays. The staging tensors are the plan's alone and used under its lock, one
    call at a time, and every upload is ordered after the work queued before it (so after an
    earlier call cut short by an interrupt). Returns the numpy outputs, or None (nothing launched)
    for the ordinary path."""
    nd = np.ndarray
    total = 0
    for v in values:
        if v is not None:
            if v.__class__ is not nd:
                return None
            total += v.nbytes
    if total > NUMPY_MAX_BYTES:
        return None
    stream = current_stream()
    sp = _streams.get(stream) or _plans_for(stream)    # a _StreamPlans is always true
    if sp is None:
        return None
    try:
        key = (key, "numpy", *[None if v is None else (v.dtype, v.shape) for v in values])
        entry = sp.entries.get(key, _MISSING)
    except TypeError:                           # an unhashable attribute
        return None
    if entry is _MISSING:
        try:
            staging = tuple([None if v is None else empty(v.shape, dtypes.from_numpy(v.dtype), stream=stream)
                             for v in values])
        except (PyaclnnError, TypeError, ValueError):
            return None                         # (a dtype pyaclnn has no name for: the ordinary path says so)
        entry = _add(sp, key, stream, build, staging)
        if entry is not None and entry.staging is None:
            entry.staging, entry.lock = staging, _mutex()
    if entry is None or entry.staging is None or stream._handle is None:
        return None
    with entry.lock:
        staging = entry.staging
        try:
            for t, v in zip(staging, values):
                if t is not None and v.size:
                    t.copy_from(v, stream)
            r = entry.plan.launch(staging, stream)
            if r is None:
                return None
        except Exception:
            _discard(sp, key, entry)            # (refused at launch: see run)
            raise
        stream.synchronize()
        returns = entry.returns
        if returns is not None:
            r = [None if i is None else r[i] for i in returns]
        return tuple([None if o is None else o.numpy() for o in r])


def run_torch(key: tuple, values: tuple, build: Callable[..., Any]):
    """:func:`run` for torch CPU tensors on the emulator (its device memory is host memory): the
    inputs are wrapped in place (:func:`pyaclnn.torch.from_torch`, cached while each tensor lives),
    the outputs are new ``torch.empty`` tensors, registered with the emulator only for this call, and
    the call waits for its stream (torch reads the results at once), as the ordinary path does.
    Returns the torch outputs, or None (nothing launched) for the ordinary path."""
    torch = sys.modules.get("torch")
    if torch is None or not _stub():
        return None
    Tensor_ = torch.Tensor
    for v in values:
        if v is not None and (not isinstance(v, Tensor_) or not v.is_cpu):
            return None
    if not _from_torch:
        from ..torch import from_torch
        _from_torch.append(from_torch)
    from_torch = _from_torch[0]
    inputs = tuple([None if v is None else from_torch(v) for v in values])
    stream = current_stream()
    sp = _streams.get(stream) or _plans_for(stream)    # a _StreamPlans is always true
    if sp is None:
        return None
    try:
        key = (key, *[None if v is None else v._key for v in inputs])
        entry = sp.entries.get(key, _MISSING)
    except TypeError:
        return None
    if entry is _MISSING:
        entry = _add(sp, key, stream, build, inputs)
    if entry is None or stream._handle is None:
        return None
    specs = entry.torch_specs
    if specs is None:
        specs = entry.torch_specs = _torch_specs(entry.specs, torch)
        if not specs:
            return None
        entry.torch_sizes = [n for _, _, n in specs]
    empty_ = torch.empty
    cpu = _cpu[0] if _cpu else _cpu.append(torch.device("cpu")) or _cpu[0]
    outs = [empty_(shape, dtype=dt, device=cpu) for shape, dt, _ in specs]
    addrs = [o.data_ptr() for o in outs]
    # What this call holds, owned from before it is taken: the new torch tensors themselves (an
    # interrupted call drops them, and the kernel may still be writing them), and the ranges
    # registered by _fast_host (the common case: a True lands in `fresh` inside the C call that
    # registers) or by the shared bookkeeping (`held`, the fallback). Released after the stream
    # ran, inline, or -- on any exception, a KeyboardInterrupt included -- by the releaser thread.
    hold = _TorchHold(stream, addrs, list(outs))   # (its own list: the release empties it)
    launched = False
    try:
        if not _fast_host(addrs, entry.torch_sizes, hold.fresh) and \
                not hold_host_ranges([(a, n) for a, (_, _, n) in zip(addrs, specs)], hold.held):
            return None
        fast = entry.plan._fast_friendly
        r = fast(inputs, addrs, stream)
        if r is None:
            for v in inputs:
                if v is not None:
                    v._mem.note_stream(stream)
            state = stream._state
            if getattr(_tls, "binding", None) is not state.binding:
                state.bind()
            r = fast(inputs, addrs, stream)
            if r is None:
                hold.release(wait=False)
                return None
        launched = True
        stream.synchronize()
        hold.release(wait=False)
    except BaseException as exc:
        _put(hold)                  # the first call: the releaser waits for the stream, then lets go
        if not launched and not isinstance(exc, KeyboardInterrupt):
            _discard(sp, key, entry)
        raise
    returns = entry.returns
    if returns is None:
        return tuple(outs)
    return tuple([None if i is None else outs[i] for i in returns])


_native_mod: list = []      # [the accelerator, with the emulator's registration functions set]


class _TorchHold:
    """The new torch outputs of a call and the host ranges it registered for them (see run_torch);
    calling it waits for the stream, lets the ranges go, then the tensors (torch may free or reuse
    their memory only once no kernel writes it and the emulator no longer knows the range).

    Owned by the calling frame and let go whatever happens, as ``_marshal.CallTemps`` is: by
    :meth:`release`, by the handler's ``_put(hold)``, or -- should the handler not run (Python 3.10
    checks for signals at an ``except`` clause's entry) -- by its finalizer when the frame drops it
    (nothing is registered or launched before the hold exists)."""
    __slots__ = ("stream", "addrs", "fresh", "held", "owners", "_fin", "__weakref__")

    def __init__(self, stream: Stream, addrs: list, owners: list):
        self.stream = stream
        self.addrs = addrs
        self.fresh: list = []       # [True] once _fast_host registered the ranges
        self.held: list = []        # bases held through runtime.host's bookkeeping
        self.owners = owners        # the torch tensors over those ranges
        self._fin = _release.finalizer(self, _let_go, stream, addrs, self.fresh, self.held, owners)

    def release(self, wait: bool = True) -> None:
        _let_go(self.stream, self.addrs, self.fresh, self.held, self.owners, wait)
        fin = self._fin                 # released: the finalizer goes (see CallTemps.release)
        self._fin = None
        _release._live.pop(fin, None)

    __call__ = release


def _let_go(stream: Stream, addrs: list, fresh: list, held: list, owners: list, wait: bool = True) -> None:
    """A _TorchHold's release. Resumable: the C call that unregisters also clears ``fresh``, each base
    leaves ``held`` with its count, and ``owners`` empties last."""
    if wait:
        _sync_quietly(stream)           # the kernel must be done with the memory first
    if fresh:
        _native_mod[0].unregister_ranges(addrs, fresh)
    release_host_ranges(held)
    owners.clear()


def _fast_host(addrs: list, sizes: list, flag: list | None = None) -> bool:
    """Register a call's new torch outputs with the emulator in one C call (all or none): nobody
    else can know that memory yet, so the shared bookkeeping (runtime.host) is not needed. False:
    use that bookkeeping instead (it shares ranges and flushes dropped wrappers' registrations).
    The outcome lands in ``flag`` inside the C call that registers."""
    if not _native_mod:
        from ..runtime import _stub_fn
        mod = _native.module()
        if mod is None or not hasattr(mod, "register_ranges"):
            return False
        import ctypes
        reg = _stub_fn("pyaclnn_stub_mem_register", ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t])
        unreg = _stub_fn("pyaclnn_stub_mem_unregister", ctypes.c_int, [ctypes.c_void_p])
        mod.set_host_fns(_native.function_address(reg), _native.function_address(unreg))
        _native_mod.append(mod)
    if flag is None:
        flag = []
    flag.extend(map(_native_mod[0].register_ranges, (addrs,), (sizes,)))
    if flag[-1]:
        return True
    del flag[:]
    recent_error_message()      # the refusal's message is not the caller's
    return False


def _torch_specs(specs: tuple, torch) -> list | None:
    """(shape, torch dtype, nbytes) per output, as the ordinary path's torch.empty makes them; None
    when a dtype has no plain torch equivalent (packed types: the ordinary path handles them)."""
    out = []
    for shape, acl in specs:
        info = dtypes.info(acl)
        if info.packed or info.carrier:
            return None
        try:
            dt = dtypes.to_torch(acl)
        except ValueError:
            return None
        n = dtypes.nbytes(acl, math.prod(shape))
        if n <= 0 or torch.empty((), dtype=dt).element_size() != info.itemsize:
            return None
        out.append((tuple(shape), dt, n))
    return out


def _sync_quietly(stream: Stream) -> None:
    """Wait for the stream without raising (as the release finalizers do)."""
    try:
        if stream._handle is not None:
            with _BindScope(stream._state):
                if stream.pool._sync(stream._handle):
                    recent_error_message()
    except Exception:       # noqa: BLE001
        pass


def _add(sp: _StreamPlans, key: tuple, stream: Stream, build, inputs: tuple) -> _Entry | None:
    """Make the plan of a new key (None, remembered, when this call cannot have one: the ordinary
    path then runs it, and raises its errors)."""
    try:
        fn, args, specs, returns = build(*inputs)
        outs = [empty(shape, acl, stream=stream) for shape, acl in specs]
        args = list(args[:len(args) - len(outs)]) + outs
        del outs
        plan = owning_plan(fn, args, stream, holds_stream=False)
        del args
        entry = _Entry(plan, tuple(specs), returns) if plan._maker is not None else None
        if entry is None:
            plan.close()
    except (PyaclnnError, TypeError, ValueError, IndexError, ctypes.ArgumentError):
        entry = None            # arguments phase 1 refuses: the ordinary path runs the call and raises
    with sp.lock:
        if entry is None and len(sp.entries) >= ENTRIES:
            return None                         # do not let failures evict good plans
        old = sp.entries.get(key, _MISSING)
        if old is not _MISSING:                 # another thread was first
            if entry is not None:
                entry.close()
            return old
        sp.entries[key] = entry
        dropped = []
        while len(sp.entries) > ENTRIES:
            dropped.append(sp.entries.pop(next(iter(sp.entries))))
            _forget_last(sp, dropped[-1])
    for e in dropped:
        if e is not None:
            e.close()
    return entry


def _forget_last(sp: _StreamPlans, entry: _Entry) -> None:
    for kind, (e, _) in list(sp.last.items()):
        if e is entry:
            sp.last.pop(kind, None)


def _discard(sp: _StreamPlans, key: tuple, entry: _Entry) -> None:
    with sp.lock:
        _forget_last(sp, entry)
        if sp.entries.get(key) is not entry:
            return
        del sp.entries[key]
    entry.close()


def clear() -> None:
    """Close every cached plan."""
    with _streams_lock:
        sps = list(_streams.values())
    for sp in sps:
        with sp.lock:
            entries = list(sp.entries.values())
            sp.entries.clear()
            sp.last.clear()
        for e in entries:
            if e is not None:
                e.close()


def info() -> dict:
    """Per stream: the cached plans (for tests and benchmarks)."""
    with _streams_lock:
        items = list(_streams.items())
    return {repr(s): {"plans": sum(e is not None for e in sp.entries.values())} for s, sp in items}


on_empty_cache(clear)
