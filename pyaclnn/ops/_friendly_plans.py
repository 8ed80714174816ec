"""Cached prepared calls behind friendly functions, for repeated calls at decode shapes (issue 13).

A friendly call on pyaclnn tensors repeated with the same layouts and attributes -- a decode loop --
would run phase 1 again each time, make its outputs and their ``aclTensor`` descriptors, and pass
through the host-data boundary.  Instead, the first such call prepares a repeatable executor
(:class:`~pyaclnn.ops.PreparedCall`, which owns its own descriptors and workspace) and keeps it with a
few sets of output tensors; later calls are one C call (``_fastcall.c``: ``_fast_friendly``) that
checks the arguments, re-points the addresses that changed and queues the launch.  Results are
identical: the same kernel runs on the same data.

Why it is safe:

* The key is everything phase 1 sees except data addresses: the operator, its attributes and each
  tensor's interned layout (dtype, shape, strides, offset, format, storage dims).  Every launch
  re-points every slot whose address differs from the one the executor holds, so an executor never
  runs with an address of an earlier call.
* An output set is handed out again only when nobody else refers to any of its tensors (the caller
  dropped the results, no view of their memory is open) and their memory was used on this stream
  alone: work queued later on the stream runs after every earlier use -- the rule of the stream's
  memory pool and of :mod:`pyaclnn._reuse`.  When the caller still holds the results, another set is
  made (at most :data:`SETS` per entry; beyond that a fresh set is made for the call and not kept).
* The check and the launch happen in one C call under the GIL, so two threads never get the same set.
* Only default streams of the device pyaclnn holds for the whole process keep such caches (as
  :mod:`pyaclnn._reuse`), so a cache changes no lifetime; when such a stream closes its plans stop
  launching (the call then takes the ordinary path and raises what it raises).
* Anything unusual -- another stream, numpy or torch data, a thread not bound to the device, the
  interpreter exiting, no C accelerator -- takes the ordinary path.

Bounds: :data:`ENTRIES` plans per stream (the oldest goes first), each with its workspace and at most
:data:`SETS` output sets.  ``pyaclnn.empty_cache()`` and ``pyaclnn.ops.clear_executor_cache()`` drop
them.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from ..runtime import Stream, _tls, current_stream, holds_forever, on_empty_cache
from ..tensor import empty
from ._prepared import _clear_hooks, plan_class

ENTRIES = 32        # cached plans per stream
SETS = 4            # output sets kept per plan

_MISSING = object()


class _Entry:
    """One prepared call and its output sets."""
    __slots__ = ("plan", "specs", "sets", "returns", "lock", "stream_plans")

    def __init__(self, plan, specs: tuple, returns: tuple | None):
        self.plan = plan
        self.stream_plans: list | None = None     # the stream's list of plan finalizers
        self.specs = specs              # ((shape, aclDataType), ...) of the outputs, in slot order
        self.sets: list = []            # lists of output Tensors (only these lists refer to them)
        self.returns = returns          # output positions returned, None where inactive; None: all
        self.lock = threading.Lock()    # adding sets

    def new_set(self, stream: Stream) -> list:
        return [empty(shape, acl, stream=stream) for shape, acl in self.specs]

    def launch(self, inputs: tuple, stream: Stream):
        fast = self.plan._fast_friendly
        for outs in self.sets:
            r = fast(inputs, outs, stream)
            if r.__class__ is tuple or r is None:
                return r
        # Every kept set is still held by the caller: another one.
        with self.lock:
            outs = self.new_set(stream)
            if len(self.sets) < SETS:
                self.sets.append(outs)
        r = fast(inputs, outs, stream)
        return r if r.__class__ is tuple else None

    def close(self) -> None:
        self.sets = []
        if self.stream_plans is not None:
            try:
                self.stream_plans.remove(self.plan._finalizer)
            except ValueError:
                pass
        self.plan.close()


class _StreamPlans:
    __slots__ = ("entries", "lock")

    def __init__(self):
        self.entries: dict = {}
        self.lock = threading.Lock()


_streams: dict = {}         # Stream -> _StreamPlans (default streams held for the whole process only)
_streams_lock = threading.Lock()
_off: list = []             # [reason] when the C accelerator is missing


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


def run(key: tuple, inputs: tuple, build: Callable[[Stream], Any]):
    """The outputs of a friendly call through its cached plan, or None when the call must take the
    ordinary path (nothing has been launched then).

    ``key``: the operator and its attributes (hashable); ``inputs``: the tensor arguments that come
    first in the operator's slots, Tensors or None; ``build(stream)`` -> ``(args, specs, returns)``:
    the full argument list of the operator with its outputs, the outputs' ``(shape, aclDataType)``
    and which of them the caller gets (None: all, in order), called on a miss.
    """
    stream = current_stream()
    sp = _streams.get(stream)
    if sp is None:
        sp = _plans_for(stream)
        if sp is None:
            return None
    try:
        key = (key, *[None if v is None else v._key for v in inputs])
        entry = sp.entries.get(key, _MISSING)
    except (AttributeError, TypeError):         # not Tensors, or an unhashable attribute
        return None
    if entry is _MISSING:
        entry = _add(sp, key, stream, build)
    if entry is None or stream._handle is None:
        return None
    try:
        r = entry.launch(inputs, stream)
        if r is None:
            # Inputs not yet used on this stream, or a thread not yet bound to the device: do what
            # the ordinary path would do, then once more.
            for v in inputs:
                if v is not None and v._ptr is not None:
                    v._mem.note_stream(stream)
            state = stream._state
            if getattr(_tls, "binding", None) is not state.binding:
                state.bind()
            r = entry.launch(inputs, stream)
            if r is None:
                return None
    except BaseException:
        _discard(sp, key, entry)        # refused at launch (the vendor tiles then): keep no plan for it
        raise
    returns = entry.returns
    if returns is None:
        return r
    return tuple([None if i is None else r[i] for i in returns])


def _add(sp: _StreamPlans, key: tuple, stream: Stream, build) -> _Entry | None:
    """Prepare the plan of a new key (None, remembered, when this call cannot have one: the
    ordinary path then runs it, and raises its errors)."""
    outs = None
    try:
        fn, args, specs, returns = build(stream)
        entry = _Entry(None, tuple(specs), returns)
        outs = entry.new_set(stream)
        n_out = len(outs)
        plan = plan_class()(fn, list(args[:len(args) - n_out]) + outs, stream, keep_refs=False)
    except Exception:       # noqa: BLE001 -- invalid arguments: the ordinary path raises
        entry = plan = None
    if plan is not None:
        slots = plan._slots
        if (len(slots) < n_out or any(not s.copy_back for s in slots[-n_out:])
                or any(s.copy_back for s in slots[:-n_out])):
            plan.close()         # outputs must be the last slots, inputs the first
            entry = None
        else:
            entry.plan = plan
            entry.sets.append(outs)
            stream._users.add(plan)             # told when the stream closes: stops launching
            stream._plans.append(plan._finalizer)     # destroyed with the stream at the latest
            entry.stream_plans = stream._plans
    del outs
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
    for e in dropped:
        if e is not None:
            e.close()
    return entry


def _discard(sp: _StreamPlans, key: tuple, entry: _Entry) -> None:
    with sp.lock:
        if sp.entries.get(key) is not entry:
            return
        del sp.entries[key]
    entry.close()


def clear() -> None:
    """Close every cached plan (and drop its output sets)."""
    with _streams_lock:
        sps = list(_streams.values())
    for sp in sps:
        with sp.lock:
            entries = list(sp.entries.values())
            sp.entries.clear()
        for e in entries:
            if e is not None:
                e.close()


def info() -> dict:
    """Per stream: the cached plans and output sets (for tests and benchmarks)."""
    with _streams_lock:
        items = list(_streams.items())
    return {repr(s): {"plans": sum(e is not None for e in sp.entries.values()),
                      "sets": sum(len(e.sets) for e in sp.entries.values() if e is not None)}
            for s, sp in items}


on_empty_cache(clear)
_clear_hooks.append(clear)
