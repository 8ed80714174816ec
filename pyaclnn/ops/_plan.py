"""Explicit plans: an operator prepared once for fixed layouts and attributes that owns its
descriptors, its workspace and its outputs' memory, and makes new outputs on every execution.

    plan = pyaclnn.ops.plan("AddRmsNormDynamicQuantV2", x1, x2, gamma, s1, s2, None, 1e-6, None,
                            y1, y2, x_out, scale1, scale2)     # outputs: tensors of the layouts wanted
    y1, y2, x_out, scale1, scale2 = plan.execute(x1b, x2b, gamma, s1, s2, None)
    plan.close()

Phase 1 runs once (a repeatable executor, :class:`~pyaclnn.ops.PreparedCall`, which owns the
``aclTensor`` descriptors and the workspace). Each :meth:`Plan.execute` takes the input tensors
(pyaclnn tensors of the prepared layouts, on the plan's stream's device), makes new outputs and
queues the launch; the outputs belong to the caller alone. They are cut from one block of the
stream's pool that the plan keeps between executions: when every output of an execution (and every
view of one) is closed or gone, its block goes to the plan's next execution on that stream, which
runs after every earlier use (``pyaclnn.tensor.set_maker``, ``pyaclnn.runtime.set_blocks``). No
reference count is read anywhere. Checking the inputs, making the outputs, re-pointing the executor
and queueing the launch is one C call (``_fastcall.c``) when the accelerator is built.

The friendly functions' cached plans (:mod:`pyaclnn.ops._friendly_plans`) are these plans, looked up
by (operator, attributes, layouts).
"""
from __future__ import annotations

from typing import Any

from .._exceptions import ArgumentTypeError, ClosedError, UnsupportedError
from ..runtime import Stream, _tls
from ..tensor import Tensor, empty, set_maker
from . import _native
from ._prepared import plan_class


class Plan:
    """An operator prepared for fixed layouts and attributes, owning descriptors, workspace and the
    memory of its outputs. Create with :func:`pyaclnn.ops.plan`; :meth:`execute` launches on new
    inputs with new outputs; :meth:`close` (or garbage collection, or its stream closing) destroys
    the executor and gives the kept output blocks back to the pool."""

    __slots__ = ("op", "n_in", "specs", "_call", "_maker", "_stream", "_stream_plans", "__weakref__")

    def __init__(self, fn, args: list, stream: Stream, *, holds_stream: bool = True):
        """``args``: the operator's full argument list, the outputs (last tensor slots) as new tensors
        of the layouts wanted (each made by :func:`pyaclnn.empty`: whole and contiguous; None where
        an optional output is absent). ``holds_stream=False`` for plans cached per stream (the
        stream's own list keeps them)."""
        call = plan_class()(fn, args, stream, keep_refs=False)
        try:
            slots = call._slots
            n_out = sum(s.copy_back for s in slots)
            if not n_out or any(not s.copy_back for s in slots[-n_out:]) or any(s.copy_back for s in slots[:-n_out]):
                raise UnsupportedError(
                    f"plan(): {fn.__name__} has tensors that are both input and output (or outputs before "
                    f"inputs); a plan owns its outputs -- use ops.prepare for in-place operators")
            outs = [args[s.param_index] for s in slots[-n_out:]]
            if any(o is not None and o.__class__ is not Tensor for o in outs):
                raise ArgumentTypeError("plan(): the outputs must be pyaclnn tensors (new ones, from pyaclnn.empty)")
            fast = _native.module()
            if fast is not None and getattr(call, "accelerated", False) and None not in outs:
                maker = set_maker(outs, fast)
            else:
                maker = None                # no accelerator (or an absent output): empty() per output
        except BaseException:
            call.close()
            raise
        self._maker = maker
        self.op = fn
        self.n_in = len(slots) - n_out
        self.specs = tuple(None if o is None else (o.shape, o.acl_dtype, o.format) for o in outs)
        self._call = call
        self._stream = stream if holds_stream else None
        # Destroyed with its stream at the latest, and told when it closes (stops launching).
        stream._users.add(call)
        self._stream_plans = stream._plans
        stream._plans.append(call._finalizer)
        if self._maker is not None:
            stream._plans.append(self._maker.finalizer)     # (not the blocks themselves: a dropped plan's go)

    # -- lifetime ---------------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._call.closed

    def close(self) -> None:
        """Wait for launched work, destroy the executor, descriptors and workspace, and give the kept
        output blocks back to the pool (outputs the caller still holds stay valid; idempotent)."""
        plans = self._stream_plans
        maker = self._maker
        for f in (self._call._finalizer, maker.finalizer if maker is not None else None):
            if f is not None:
                try:
                    plans.remove(f)
                except ValueError:
                    pass
        self._call.close()
        if maker is not None:
            maker.close()

    def __enter__(self) -> "Plan":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{self.n_in} inputs, {len(self.specs)} outputs"
        return f"<pyaclnn.ops.Plan {self.op.name} ({state})>"

    @property
    def input_names(self) -> tuple[str, ...]:
        """The tensor parameters :meth:`execute` takes, in order."""
        return self._call.tensor_names[:self.n_in]

    # -- execution --------------------------------------------------------------------------------
    def execute(self, *inputs: Any) -> tuple:
        """Launch on ``inputs`` (the input tensor slots in order, :attr:`input_names`; None where the
        plan has none) with new outputs, on the plan's stream (asynchronous). Returns the outputs
        (a tuple, None where an optional output is absent), owned by the caller."""
        stream = self._stream
        if stream is None:
            raise ArgumentTypeError("this plan is cached per stream: call it through its friendly function")
        r = self.launch(inputs, stream)
        if r is None:
            r = self._checked_slow(inputs, stream)      # raises why C refused, or runs it in Python
        return r

    def launch(self, inputs: tuple, stream: Stream):
        """The outputs (the launch is queued on ``stream``), or None when nothing was done: inputs
        not yet used on ``stream`` or a thread not yet bound are taken care of and tried once more;
        anything else (another layout, a closed plan or stream, the interpreter exiting, no
        accelerator) returns None."""
        maker = self._maker
        if maker is None:
            return None
        call = self._call
        r = call._fast_friendly(inputs, maker(stream), stream)
        if r is None and stream._handle is not None:
            # Inputs not yet used on this stream, or a thread not yet bound to the device: do what
            # the ordinary path would do, then once more.
            for v in inputs:
                if v.__class__ is Tensor and v._ptr is not None:
                    v._mem.note_stream(stream)
            state = stream._state
            if getattr(_tls, "binding", None) is not state.binding:
                state.bind()
            r = call._fast_friendly(inputs, maker(stream), stream)
        return r

    def _checked_slow(self, inputs: tuple, stream: Stream) -> tuple:
        """The execution in Python (no accelerator, or C refused it): clear errors for what a plan
        cannot take, else new outputs from the pool and the prepared call's Python path."""
        call = self._call
        if self.closed:
            raise ClosedError("plan is closed")
        if stream._handle is None:
            raise ClosedError(f"stream is closed: the stream this plan was made on ({stream!r}) was closed")
        if len(inputs) != self.n_in:
            raise ArgumentTypeError(f"expected the {self.n_in} input tensors {self.input_names}, got {len(inputs)}")
        for i, v in enumerate(inputs):
            slot = call._slots[i]
            if v is not None and v.__class__ is not Tensor:
                raise ArgumentTypeError(f"{slot.name}: a plan executes on pyaclnn tensors, got {type(v).__name__} "
                                        f"(pyaclnn.from_numpy / pyaclnn.torch.from_torch make one)")
        outs = [None if s is None else empty(s[0], s[1], stream=stream, format=s[2]) for s in self.specs]
        call._call_slow(*inputs, *outs, stream=stream)     # (checks layouts, devices and absent slots)
        return tuple(outs)
