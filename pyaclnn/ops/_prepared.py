"""Plans: one operator prepared once (a repeatable executor) for fixed layouts and attributes.

A plan owns its executor, its ``aclTensor`` descriptors and its workspace. It runs in one of two ways:
on the caller's tensors (:func:`pyaclnn.ops.prepare`, below: in-place and ``out=`` operators), or with
outputs it makes itself on every execution (:func:`pyaclnn.ops.plan`, :mod:`pyaclnn.ops._plan`).

    plan = pyaclnn.ops.prepare("AmpUpdateScale", scale, tracker, found_inf, 2.0, 0.5, 1000,
                               new_scale, new_tracker)
    plan()                                   # launch again on the same tensors
    plan(s2, t2, f2, ns2, nt2)               # new tensors (same layouts): patch addresses, launch
    plan(foundInf=f3)                        # patch only some
    plan.close()

Phase 1 runs once; ``aclSetAclOpExecutorRepeatable`` keeps the executor; each later launch is the
address setters (``aclSetInputTensorAddr`` / ``aclSetOutputTensorAddr``, only for addresses that
changed) and phase 2.  The plan owns its own aclTensor handles, because the setters write into them.

New tensors must have the layout the plan was prepared with (dtype, shape, strides, offset,
format); attributes are fixed.  A plan may be called from several threads: calls are serialised
(each one re-points the executor and queues its launch before the next one starts), so every
call gets the results of its own tensors; for parallel launches prepare one plan per thread.
"""
from __future__ import annotations

import array
import ctypes
import operator
import threading
import weakref
from typing import TYPE_CHECKING, Any

from .._exceptions import ArgumentTypeError, ClosedError, InvalidArgumentError, UnsupportedError

from .. import _release, capi
from .._release import _put
from .._release import finalizer as _finalizer
from .._boundary import Crossing
from ..errors import make_error, recent_error_message
from ..runtime import Stream, _BindScope, _tls
from ..runtime.devices import _drop_reference
from ..signatures.model import Kind, Role
from ..tensor import Tensor
from . import _marshal, _native
from ._errors import op_error
from ._plan import OwnedOutputs
from ._registry import snake_case

if TYPE_CHECKING:
    from ._launcher import OpFunction

_byref = ctypes.byref




class _Slot:
    """One tensor parameter of a plan."""
    __slots__ = ("name", "param_index", "setters", "handle", "key", "copy_back")

    def __init__(self, name, param_index, setters, handle, key, copy_back):
        self.name = name
        self.param_index = param_index
        self.setters = setters      # ((setter function, index), ...): two for an in-place tensor
        self.handle = handle        # the plan's aclTensor (None: an absent optional tensor)
        self.key = key              # interned layout key (None: absent)
        self.copy_back = copy_back  # an output: numpy arrays given for it are copied back


def _release_plan(execs: list, handles: list, destroys: list, ws: list, ws_nbytes: list, pool,
                  streams: list, ref: list, destroy_executor, destroy_tensor) -> None:
    # Resumable (pyaclnn._release): each handle leaves its list in the C call that destroys it.
    try:
        if execs or handles or ws:
            for r in streams:
                s = r()
                if s is not None and s._handle is not None:
                    with _BindScope(s._state):
                        if s.pool._sync(s._handle):
                            recent_error_message()
        if _release.drain(destroy_executor, execs):
            recent_error_message()
        if _release.drain(destroy_tensor, handles):
            recent_error_message()
        _marshal.finish(destroys)
        if ws:
            pool.free_cell(ws, ws_nbytes[0])
    except Exception:       # noqa: BLE001 -- finalizers must not raise
        pass
    _drop_reference(ref)


class Plan(OwnedOutputs):
    """One operator prepared for fixed layouts and attributes: it owns the repeatable executor, the
    ``aclTensor`` descriptors and the workspace.

    From :func:`pyaclnn.ops.prepare` (or ``OpFunction.prepare``), it runs on the caller's tensors: call
    it with the tensor parameters (positional, in C order, all of them) or some of them by name;
    omitted ones keep their current tensor. Returns the output tensors. From :func:`pyaclnn.ops.plan`,
    it owns its outputs too: :meth:`execute` takes the inputs and returns new outputs.
    :meth:`close` (or garbage collection, or its stream closing) destroys the executor, the
    descriptors and the workspace.
    """

    def __init__(self, fn: OpFunction, args, stream: Stream, keep_refs: bool = True):
        gws, launch = fn.bind()
        if stream._handle is None:
            raise ClosedError("stream is closed")
        if fn.data_dependent:
            # phase 2 would write the real output shape into the plan's own aclTensor, which the
            # caller never sees (the result would keep its full, allocated shape)
            raise UnsupportedError(
             f"prepare(): {fn.__name__} sets its output shape from the data at launch; a prepared call "
             f"cannot hand that shape back -- call the operator directly (ops.{fn.__name__}(...) or its "
             f"friendly function), which returns the real shape")
        self.op = fn
        self._launch = launch
        self._keep = keep_refs
        self.stream = stream if keep_refs else None     # cached plans must not keep their stream
        state = stream._state
        handles: list[int] = []         # the plan's aclTensors
        destroys: list = []             # its attribute objects (a _marshal post list)
        slots: list[_Slot] = []
        objs: list = []
        crossing = Crossing(stream)     # numpy / torch arguments given at prepare time
        executor = ctypes.c_void_p()
        execs = [executor]              # phase 1 writes the executor into it
        ws: list = []                   # the workspace block
        ws_nbytes = [0]
        ref: list = []                  # the device reference
        self._streams = [weakref.ref(stream)]
        # The finalizer owns every container before anything is made: an
        # exception at any point -- a KeyboardInterrupt included -- leaves nothing unowned.
        fin = None
        try:
            fin = self._finalizer = _finalizer(
                self, _release_plan, execs, handles, destroys, ws, ws_nbytes, stream.pool, self._streams, ref,
                capi.aclDestroyAclOpExecutor, capi.aclDestroyTensor)
            state.acquire_into(ref)
            state.bind()
            cargs = []
            n_in = n_out = 0
            for i, (p, a) in enumerate(zip(fn.params, args)):
                if p.kind is Kind.TENSOR_LIST:
                    raise UnsupportedError(
                     f"prepare(): {fn.__name__} has a tensor-list parameter ({p.name}); prepared "
                     f"calls support plain tensors only -- call the operator directly")
                if p.kind is not Kind.TENSOR:
                    # Attribute objects (aclScalar, aclIntArray ...) live as long as the executor.
                    conv = fn._by_value[i] or fn._convs[i]
                    cargs.append(conv(a, stream, destroys))
                    continue
                setters = []
                if p.role is not Role.OUT:
                    setters.append((capi.cfunc("aclSetInputTensorAddr"), n_in))       # ctypes: C gets its address
                    n_in += 1
                if p.role is not Role.IN:
                    setters.append((capi.cfunc("aclSetOutputTensorAddr"), n_out))
                    n_out += 1
                copy_back = p.role is not Role.IN
                t = crossing.tensor(a, output=copy_back, name=p.name)
                if t is None:
                    slots.append(_Slot(p.name, i, (), None, None, copy_back))
                    objs.append(None)
                    cargs.append(None)
                    continue
                t._mem.note_stream(stream)
                t._new_acl_tensor_into(handles, None)
                h = handles[-1]
                slots.append(_Slot(p.name, i, tuple(setters), h, t._key, copy_back))
                objs.append(t)
                cargs.append(h)
            size = ctypes.c_uint64()
            status = gws(*cargs, _byref(size), _byref(executor))
            if status:
                raise op_error(status, fn.signature.workspace_function, fn.name)
            status = capi.aclSetAclOpExecutorRepeatable(executor)
            if status:
                raise make_error(status, "aclSetAclOpExecutorRepeatable")   # (the finalizer destroys it)
            self.workspace_size = size.value
            if size.value:
                ws_nbytes[0] = size.value
                stream.pool.allocate_into(size.value, ws)
            workspace = (stream.pool, ws[0], ws_nbytes[0]) if ws else None
        except BaseException:
            if fin is not None:
                fin()                   # resumable: cut short, the releaser finishes it
            crossing.finish(ok=False)
            raise
        self._executor = executor.value
        self._slots = tuple(slots)
        self._keys = tuple(s.key for s in slots)
        self._objs = objs if keep_refs else [None] * len(slots)
        self._nones = [None] * len(slots)
        start = [o._ptr if o is not None else 0 for o in objs]
        self._addrs = array.array("Q", start)       # wanted addresses (the fast path reads them)
        self._bound = array.array("Q", start)       # addresses the executor holds
        self._by_name = {}
        for k, s in enumerate(slots):
            self._by_name[s.name] = k
            self._by_name.setdefault(snake_case(s.name), k)
        self._outputs = tuple(k for k, s in enumerate(slots) if s.copy_back)
        self._pick_outputs = operator.itemgetter(*self._outputs) if self._outputs else (lambda objs: None)
        self._workspace = workspace
        self._ws_ptr = workspace[1] if workspace else None
        self._home = stream._handle                 # the stream its workspace is ordered on
        self._initial_crossing = crossing  # numpy inputs given at prepare time stay uploaded
        # Host-memory torch tensors (emulator) are read by torch right after a call: every launch
        # of a plan bound to one waits for its stream.
        self._host_sync = crossing.sync
        self._failed = -1
        self._lock = threading.RLock()     # serialises calls of several threads (see _call_slow)
        self._depth = 0
        self._setup_fast(stream, state)
        if keep_refs:
            stream._users.add(self)

    def _on_stream_closed(self) -> None:
        """Its stream was closed: calls without stream= raise from now on (hook of the subclass)."""

    def _setup_fast(self, stream: Stream, state) -> None:
        """Hook of the accelerated subclass (hands the plan's state to C)."""

    # -- lifetime ---------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Wait for launched work, then destroy the executor, handles and workspace, and give the kept
        output blocks back to the pool (outputs the caller still holds stay valid; idempotent)."""
        self._executor = None
        self._on_close()
        self._finalizer()
        self._objs[:] = self._nones                 # let the bound tensors go
        self._initial_crossing = None
        self._forget_owned()

    def _on_close(self) -> None:
        """Hook of the accelerated subclass."""

    def __enter__(self) -> "Plan":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            state = "closed"
        elif self._specs is not None:
            state = f"{self.n_in} inputs, {len(self._specs)} outputs"
        else:
            state = f"{len(self._slots)} tensor slots"
        return f"<pyaclnn.ops.Plan {self.op.name} ({state})>"

    @property
    def tensor_names(self) -> tuple[str, ...]:
        """The tensor parameters a call takes, in order."""
        return tuple(s.name for s in self._slots)

    accelerated = False
    """True when common calls run in the C accelerator (see pyaclnn.ops._native)."""

    # -- launching --------------------------------------------------------------------------------
    def _call_slow(self, /, *tensors: Any, stream: Stream | None = None, **named: Any):
        # (self positional-only: many operators name a tensor parameter "self", given as plan(self=x))
        """The whole call in Python (the accelerator sends every case it does not handle here)."""
        if self._specs is not None:
            # (It keeps no tensors between executions: a launch on "the current ones" would write
            # into blocks an earlier execution's caller owns.)
            raise UnsupportedError(
                f"this plan of {self.op.__name__} owns its outputs (ops.plan): plan.execute(*inputs) "
                f"returns new ones; ops.prepare makes a plan that is called on your tensors")
        return self._serialised(tensors, stream, named)

    def _serialised(self, tensors: tuple, stream: Stream | None, named: dict):
        """Holds the plan's lock, so that calls from several threads do not mix their tensors (the
        addresses and bound tensors are per plan); the accelerator's C path defers to it meanwhile."""
        with self._lock:
            self._depth += 1
            if self._depth == 1:
                self._set_busy(True)
            try:
                return self._call_locked(tensors, stream, named)
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._set_busy(False)

    def _set_busy(self, flag: bool) -> None:
        """Hook of the accelerated subclass (its C path must not run meanwhile)."""

    def _call_locked(self, tensors: tuple, stream: Stream | None, named: dict):
        if self._executor is None:
            raise ClosedError("prepared call is closed")
        if stream is None:
            stream = self.stream
            if stream is None:
                raise ArgumentTypeError("this prepared call has no default stream: pass stream=")
            if stream._handle is None:
                raise ClosedError(
                   f"stream is closed: the stream this call was prepared on ({stream!r}) was closed; "
                   f"pass stream= an open stream of device {stream.device_id}, or prepare the call again")
        elif stream._handle != self._home:
            self._note_stream(stream)
        state = stream._state
        if getattr(_tls, "binding", None) is not state.binding:
            state.bind()
        crossing = None
        if tensors:
            keys = self._keys
            if len(tensors) != len(keys):
                raise ArgumentTypeError(f"expected the {len(keys)} tensor arguments {self.tensor_names}, "
                                        f"got {len(tensors)}")
            addrs = self._addrs
            objs = self._objs
            for i, t in enumerate(tensors):
                try:
                    k = t._key
                except AttributeError:              # numpy / torch / None: the slow path
                    if crossing is None:
                        crossing = Crossing(stream)
                    t = self._coerce(i, t, crossing)    # the original is returned, not its device view
                    if t is None:
                        continue
                    k = t._key
                if k is not keys[i] and k != keys[i]:
                    self._layout_error(self._slots[i], t)
                addrs[i] = t._ptr
                s = t._mem.streams
                if not s or s[0] is not stream:
                    t._mem.note_stream(stream)
                objs[i] = t
        if named:
            crossing = self._apply_named(named, stream, crossing)
        if crossing is not None and not self._host_sync and crossing.sync:
            self._host_sync = True
            self._on_host_memory()
        status = self._run(stream)
        if status:
            if not self._keep:
                self._objs[:] = self._nones
            if crossing is not None:
                crossing.finish(ok=False)
            raise self._failure(status)
        if crossing is not None:
            originals = crossing.originals
            crossing.finish(ok=True)
            if self._keep and originals:
                vals = [originals.get(k, self._objs[k]) for k in self._outputs]
                return vals[0] if len(vals) == 1 else tuple(vals)
        elif self._host_sync:
            stream.synchronize()
        if not self._keep:
            self._objs[:] = self._nones
            return None
        return self._pick_outputs(self._objs)

    __call__ = _call_slow

    def _on_host_memory(self) -> None:
        """Hook of the accelerated subclass: launches must now wait, so leave the C path."""

    def _run(self, stream: Stream) -> int:
        """Re-point the changed addresses (one ctypes call each) and launch; returns the status."""
        ws_ptr = self._ws_ptr
        temps = None
        if self._workspace is not None and stream._handle != self._home:
            temps = _marshal.CallTemps(stream.pool)   # a workspace ordered on that stream
        try:
            if temps is not None:
                temps.nbytes = self.workspace_size
                stream.pool.allocate_into(self.workspace_size, temps.ws)
                ws_ptr = temps.ws[0]
            status = self._repoint_and_launch(ws_ptr, stream)
            if temps is not None:
                temps.release()                   # (stream-ordered: after the launch)
            return status
        except BaseException:
            if temps is not None:
                _put(temps)                       # the first call: the releaser gives it back
            raise

    def _repoint_and_launch(self, ws_ptr, stream: Stream) -> int:
        addrs, slots, executor = self._addrs, self._slots, self._executor
        for i, slot in enumerate(slots):
            a = addrs[i]
            if slot.handle is not None and a != self._bound_get(i):
                for setter, index in slot.setters:
                    status = setter(executor, index, slot.handle, a)
                    if status:
                        self._failed = i
                        return status
                self._bound_set(i, a)
        self._failed = len(slots)
        return self._launch(ws_ptr, self.workspace_size, executor, stream._handle)

    def _bound_get(self, i: int) -> int:
        return self._bound[i]

    def _bound_set(self, i: int, addr: int) -> None:
        self._bound[i] = addr

    def _failed_slot(self) -> int:
        return self._failed

    def _failure(self, status: int):
        failed = self._failed_slot()
        if 0 <= failed < len(self._slots):
            slot = self._slots[failed]
            return op_error(status, f"{slot.setters[0][0].__name__} ({slot.name})", self.op.name)
        return op_error(status, self.op.name, self.op.name)

    def _raise_failure(self, status: int) -> None:
        raise self._failure(status)

    def _coerce(self, i: int, value: Any, crossing: Crossing) -> Tensor | None:
        slot = self._slots[i]
        if value is None:
            if slot.handle is not None:
                raise InvalidArgumentError(f"{slot.name} was given at prepare time; it cannot become NULL")
            return None
        if slot.handle is None:
            raise InvalidArgumentError(f"{slot.name} was NULL at prepare time; a prepared call cannot add it")
        return crossing.tensor(value, output=slot.copy_back, name=slot.name, key=i)

    def _apply_named(self, named: dict, stream: Stream, crossing: Crossing | None) -> Crossing | None:
        for name, value in named.items():
            k = self._by_name.get(name)
            if k is None:
                raise ArgumentTypeError(f"{self.op.__name__} has no tensor parameter {name!r}; "
                                        f"tensor parameters: {self.tensor_names}")
            if not isinstance(value, Tensor):
                if crossing is None:
                    crossing = Crossing(stream)
                t = self._coerce(k, value, crossing)
            else:
                t = value
            if t is None:
                continue
            if t._key is not self._keys[k] and t._key != self._keys[k]:
                self._layout_error(self._slots[k], t)
            self._addrs[k] = t._ptr
            t._mem.note_stream(stream)
            self._objs[k] = t
        return crossing

    def _note_stream(self, stream: Stream) -> None:
        if stream._handle is None:
            raise ClosedError("stream is closed")
        if self.stream is not None and stream._state is not self.stream._state:
            raise InvalidArgumentError("a prepared call runs on the device it was prepared on")
        if not any(r() is stream for r in self._streams):
            self._streams.append(weakref.ref(stream))
        for t in self._objs:                       # the bound tensors are used there too
            if t is not None:
                t._mem.note_stream(stream)

    @staticmethod
    def _layout_error(slot: _Slot, t: Tensor) -> None:
        if t.closed:
            t.ptr                                   # raises ClosedError
        names = ("dtype", "shape", "strides", "offset", "format", "storage dims")
        diffs = [f"{n} {_marshal.enum_text(n, a)} != {_marshal.enum_text(n, b)}"
                 for n, a, b in zip(names, t._key, slot.key) if a != b]
        raise InvalidArgumentError(f"{slot.name}: layout differs from the prepared one ({'; '.join(diffs)}); "
                                   f"prepare another call for this layout")


_plan_class: type | None = None


def plan_class() -> type:
    """Plan, or its accelerated subclass when the C accelerator is available."""
    global _plan_class
    if _plan_class is None:
        mod = _native.module()
        _plan_class = Plan if mod is None else _accelerated_class(mod.PlanBase)
    return _plan_class


def owning_plan(fn: OpFunction, args: list, stream: Stream, *, holds_stream: bool = True) -> Plan:
    """A plan that owns its outputs (:func:`pyaclnn.ops.plan`): ``args`` is the operator's full argument
    list, the outputs (last tensor slots) as new tensors of the layouts wanted (each made by
    :func:`pyaclnn.empty`: whole and contiguous; None where an optional output is absent)."""
    plan = plan_class()(fn, args, stream, keep_refs=False)
    try:
        plan._own_outputs(args, stream, holds_stream)
    except BaseException:
        plan.close()
        raise
    return plan


#: The name plans had before they could own their outputs (the same class).
PreparedCall = Plan


def _accelerated_class(base: type) -> type:
    class AcceleratedPlan(base, Plan):
        """A Plan whose common calls run in C (``_fastcall.c``); see Plan."""

        accelerated = True
        _bound_get = base._fast_get_bound
        _bound_set = base._fast_set_bound

        def _setup_fast(self, stream: Stream, state) -> None:
            addr = _native.function_address
            slots = self._slots
            self._fast_setup(
                self._executor, addr(self._launch), self._ws_ptr or 0, self.workspace_size, self.stream,
                self._home or 0, _tls, state, self._keys, self._objs, [s.handle or 0 for s in slots],
                [addr(s.setters[0][0]) if s.setters else 0 for s in slots],
                [s.setters[0][1] if s.setters else 0 for s in slots],
                [addr(s.setters[1][0]) if len(s.setters) > 1 else 0 for s in slots],
                [s.setters[1][1] if len(s.setters) > 1 else 0 for s in slots],
                list(self._bound), list(self._outputs), self._addrs.buffer_info()[0])
            if self._host_sync:
                self._fast_disable()        # launches must wait: the Python path does that

        def _raise_failure(self, status: int) -> None:     # called from C
            self._failed = self._fast_failed
            raise self._failure(status)

        def _on_close(self) -> None:
            self._fast_disable()

        def _set_busy(self, flag: bool) -> None:
            self._fast_busy(flag)

        def _on_host_memory(self) -> None:
            self._fast_disable()

        def _on_stream_closed(self) -> None:
            self._fast_disable()        # the Python path raises "stream is closed"

    return AcceleratedPlan
