"""What a plan that owns its outputs adds to :class:`~pyaclnn.ops.Plan`: new outputs on every execution.

    plan = pyaclnn.ops.plan("AddRmsNormDynamicQuantV2", x1, x2, gamma, s1, s2, None, 1e-6, None,
                            y1, y2, x_out, scale1, scale2)     # outputs: tensors of the layouts wanted
    y1, y2, x_out, scale1, scale2 = plan.execute(x1b, x2b, gamma, s1, s2, None)
    plan.close()

Phase 1 runs once, as for every plan (the plan owns the repeatable executor, the ``aclTensor``
descriptors and the workspace). Each :meth:`execute` takes the input tensors (pyaclnn tensors of the
prepared layouts, on the plan's stream's device), makes new outputs and queues the launch; the outputs
belong to the caller alone. They are cut from one block of the stream's pool that the plan keeps
between executions: when every output of an execution (and every view of one) is closed or gone, its
block goes to the plan's next execution on that stream, which runs after every earlier use
(``pyaclnn.tensor.set_maker``, ``pyaclnn.runtime.set_blocks``). No reference count is read anywhere.
Checking the inputs, making the outputs, re-pointing the executor and queueing the launch is one C call
(``_fastcall.c``) when the accelerator is built.

The friendly functions' cached plans (:mod:`pyaclnn.ops._friendly_plans`) are these plans, looked up
by (operator, attributes, layouts).
"""
from __future__ import annotations

from typing import Any

from .._exceptions import ArgumentTypeError, ClosedError, UnsupportedError
from ..runtime import Stream, _tls
from ..tensor import Tensor, empty, set_maker
from . import _native


class OwnedOutputs:
    """The part of :class:`~pyaclnn.ops.Plan` that makes a plan's outputs (a mixin: the attributes it
    reads are the plan's). A plan from :func:`pyaclnn.ops.prepare` has none of this state."""

    _specs: tuple | None = None     # (shape, aclDataType, format) per output; None: the caller's tensors
    _maker = None                   # makes an execution's outputs in C (None: empty() per output)
    _exec_stream: Stream | None = None      # the stream execute() runs on (None: a friendly function's)
    _stream_plans: list | None = None       # the stream's list that holds this plan's finalizers
    n_in = 0

    def _own_outputs(self, args: list, stream: Stream, holds_stream: bool) -> None:
        """Make this plan (prepared without keeping its tensors) the owner of its outputs: ``args``'
        last tensor slots are new tensors of the layouts wanted. ``holds_stream=False`` for plans cached
        per stream (the stream's own list keeps them)."""
        slots = self._slots
        n_out = sum(s.copy_back for s in slots)
        name = self.op.__name__
        if not n_out or any(not s.copy_back for s in slots[-n_out:]) or any(s.copy_back for s in slots[:-n_out]):
            raise UnsupportedError(
                f"plan(): {name} has tensors that are both input and output (or outputs before inputs); "
                f"a plan owns its outputs -- use ops.prepare for in-place operators")
        outs = [args[s.param_index] for s in slots[-n_out:]]
        if any(o is not None and o.__class__ is not Tensor for o in outs):
            raise ArgumentTypeError("plan(): the outputs must be pyaclnn tensors (new ones, from pyaclnn.empty)")
        fast = _native.module()
        if fast is not None and self.accelerated and None not in outs:
            self._maker = set_maker(outs, fast)
        self.n_in = len(slots) - n_out
        self._specs = tuple(None if o is None else (o.shape, o.acl_dtype, o.format) for o in outs)
        self._exec_stream = stream if holds_stream else None
        # Destroyed with its stream at the latest, and told when it closes (stops launching).
        stream._users.add(self)
        self._stream_plans = stream._plans
        stream._plans.append(self._finalizer)
        if self._maker is not None:
            stream._plans.append(self._maker.finalizer)     # (not the blocks themselves: a dropped plan's go)

    @property
    def owns_outputs(self) -> bool:
        """True for a plan from :func:`pyaclnn.ops.plan` (:meth:`execute` makes new outputs); False for
        one from :func:`pyaclnn.ops.prepare` (called on the caller's tensors)."""
        return self._specs is not None

    @property
    def specs(self) -> tuple | None:
        """(shape, aclDataType, format) of each output (None where an optional output is absent), or
        None for a plan that runs on the caller's tensors."""
        return self._specs

    @property
    def input_names(self) -> tuple[str, ...]:
        """The tensor parameters :meth:`execute` takes, in order."""
        return self.tensor_names[:self.n_in] if self._specs is not None else ()

    def _forget_owned(self) -> None:
        """Part of close(): the stream no longer holds this plan's finalizers; the kept blocks go."""
        plans, maker = self._stream_plans, self._maker
        if plans is not None:
            for f in (self._finalizer, maker.finalizer if maker is not None else None):
                if f is not None:
                    try:
                        plans.remove(f)
                    except ValueError:
                        pass
        if maker is not None:
            maker.close()

    # -- execution --------------------------------------------------------------------------------
    def execute(self, *inputs: Any) -> tuple:
        """Launch on ``inputs`` (the input tensor slots in order, :attr:`input_names`; None where the
        plan has none) with new outputs, on the plan's stream (asynchronous). Returns the outputs
        (a tuple, None where an optional output is absent), owned by the caller."""
        if self._specs is None:
            raise UnsupportedError(
                f"this plan of {self.op.__name__} runs on the tensors it was prepared with (ops.prepare): "
                f"call it, plan() or plan(*tensors); ops.plan makes a plan whose execute() makes new outputs")
        stream = self._exec_stream
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
        r = self._fast_friendly(inputs, maker(stream), stream)
        if r is None and stream._handle is not None:
            # Inputs not yet used on this stream, or a thread not yet bound to the device: do what
            # the ordinary path would do, then once more.
            for v in inputs:
                if v.__class__ is Tensor and v._ptr is not None:
                    v._mem.note_stream(stream)
            state = stream._state
            if getattr(_tls, "binding", None) is not state.binding:
                state.bind()
            r = self._fast_friendly(inputs, maker(stream), stream)
        return r

    def _checked_slow(self, inputs: tuple, stream: Stream) -> tuple:
        """The execution in Python (no accelerator, or C refused it): clear errors for what a plan
        cannot take, else new outputs from the pool and the plan's Python path."""
        if self.closed:
            raise ClosedError("plan is closed")
        if stream._handle is None:
            raise ClosedError(f"stream is closed: the stream this plan was made on ({stream!r}) was closed")
        if len(inputs) != self.n_in:
            raise ArgumentTypeError(f"expected the {self.n_in} input tensors {self.input_names}, got {len(inputs)}")
        for i, v in enumerate(inputs):
            slot = self._slots[i]
            if v is not None and v.__class__ is not Tensor:
                raise ArgumentTypeError(f"{slot.name}: a plan executes on pyaclnn tensors, got {type(v).__name__} "
                                        f"(pyaclnn.from_numpy / pyaclnn.torch.from_torch make one)")
        outs = [None if s is None else empty(s[0], s[1], stream=stream, format=s[2]) for s in self._specs]
        self._serialised((*inputs, *outs), stream, {})     # (checks layouts, devices and absent slots)
        return tuple(outs)
