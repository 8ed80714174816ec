"""The generic two-phase launcher: one :class:`OpFunction` per operator signature.

A call runs, on the caller's thread:

1. the marshalling plan made once per signature (one converter per parameter, see ``_marshal``);
2. ``aclnnXxxGetWorkspaceSize(args..., &workspaceSize, &executor)``;
3. a workspace block from the stream's caching pool (when the size is non-zero);
4. ``aclnnXxx(workspace, workspaceSize, executor, stream)``, which queues the work and returns;
5. the block goes back to the pool (stream-ordered: later work on the same stream may reuse it at
   once), and the aclScalar/aclIntArray/... made for the call are destroyed.

The two C functions are capi's ctypes functions (:func:`pyaclnn.capi.operator_functions`), bound once;
tensors bring their cached ``aclTensor`` handle, so a call with device tensors costs two C calls plus a
short Python loop.
"""
from __future__ import annotations

import ctypes
import inspect
from typing import Any

from .._exceptions import ArgumentTypeError, ClosedError
from .. import _interruptible, _shutdown, capi
from .._release import _put
from .._boundary import stream_for as _default_stream_for
from .._boundary import to_tensors
from ..runtime import _tls
from ..signatures import OpSignature
from ..signatures.model import Kind, Role
from ..tensor import Tensor
from . import _marshal, _registry
from ._errors import not_exported, op_error
from ._marshal import CallTemps
from ._prepared import plan_class
from ._registry import DATA_DEPENDENT_SHAPE, available, signature, snake_case

_c_uint64 = ctypes.c_uint64
_c_void_p = ctypes.c_void_p
_byref = ctypes.byref


class OpFunction:
    """Calls one aclnn operator: ``pyaclnn.ops.AmpUpdateScale(*args, stream=None)``.

    Arguments follow the C prototype of ``aclnnXxxGetWorkspaceSize`` without the two trailing
    out-parameters, positionally or by name (C or snake_case spelling).  Tensors may be
    :class:`pyaclnn.Tensor`, numpy arrays (copied to the device, and back for outputs, which makes
    the call synchronous) or torch tensors (wrapped without a copy); attributes are Python numbers,
    strings, lists (aclIntArray / aclFloatArray / aclBoolArray) or :class:`pyaclnn.ops.Scalar`;
    ``None`` passes NULL.  Returns the output arguments (one, or a tuple).
    """

    def __init__(self, sig: OpSignature):
        self.signature = sig
        self.name = sig.name
        self.__name__ = self.__qualname__ = sig.op_name
        params = sig.user_params
        self.params = params
        self._n = len(params)
        # Output shape from the data: phase 2 synchronises (see DATA_DEPENDENT_SHAPE).
        self.data_dependent = sig.name in DATA_DEPENDENT_SHAPE
        # Numbers passed by value need no Python conversion when ctypes accepts them as they are;
        # when it does not (a numpy float32, a dtype name for an int64 ...) the call is retried
        # with the converters in `_by_value`.
        self._by_value = tuple(_marshal.converter(p) if p.kind in _BY_VALUE else None for p in params)
        # Integers always go through their converter: it checks the C type's range.
        self._convs = tuple(None if p.kind in _AS_IS else _marshal.converter(p) for p in params)
        self._outputs = tuple(i for i, p in enumerate(params) if p.role is not Role.IN)
        # Tensor parameters, and what the host-data boundary must know of each (see to_tensors).
        self._tensor_params = tuple(i for i, p in enumerate(params) if p.kind in (Kind.TENSOR, Kind.TENSOR_LIST))
        self._roles = tuple(None if p.kind not in (Kind.TENSOR, Kind.TENSOR_LIST)
                            else ("out-list" if p.role is not Role.IN else "list") if p.kind is Kind.TENSOR_LIST
                            else p.role is not Role.IN for p in params)
        self._names = tuple(p.name for p in params)
        index: dict[str, int] = {}
        for i, p in enumerate(params):
            index[p.name] = i
            index.setdefault(snake_case(p.name), i)
        self._index = index
        self._gws = None
        self._launch = None
        self.__doc__ = self._make_doc()
        # Optional parameters show a None default only where no required parameter follows.
        defaults, trailing = [], True
        for p in reversed(params):
            trailing = trailing and p.optional
            defaults.append(None if trailing else inspect.Parameter.empty)
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(snake_case(p.name), inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d)
             for p, d in zip(params, reversed(defaults))]
            + [inspect.Parameter("stream", inspect.Parameter.KEYWORD_ONLY, default=None)])

    def __repr__(self) -> str:
        return f"<pyaclnn.ops.{self.__name__}: {self.name}GetWorkspaceSize + {self.name}>"

    def _make_doc(self) -> str:
        lines = [f"{self.name}: generic two-phase launcher (from {self.signature.header}).", "",
                 "Parameters", "----------"]
        for p in self.params:
            opt = ", optional" if p.optional else ""
            lines.append(f"{snake_case(p.name)} : {p.ctype} ({p.kind.value}, {p.role.value}{opt})")
        lines += ["stream : pyaclnn.Stream, optional", "", "Returns the output tensors."]
        return "\n".join(lines)

    # -- binding ----------------------------------------------------------------------------------
    def bind(self) -> tuple:
        """Look the two C functions up (raises OperatorNotFoundError if not exported)."""
        if self._gws is None:
            gws, launch = capi.operator_functions(self.signature)
            if gws is None:
                raise not_exported(self.name, self.signature.workspace_function, available)
            if launch is None:
                raise not_exported(self.name, self.name, available)
            self._launch = launch
            self._gws = gws
        return self._gws, self._launch

    @property
    def available(self) -> bool:
        try:
            self.bind()
        except Exception:       # noqa: BLE001
            return False
        return True

    def bind_args(self, args: tuple, kwargs: dict) -> list:
        """Positional + keyword arguments -> one value per C parameter (missing optional -> None)."""
        n = self._n
        if len(args) > n:
            raise ArgumentTypeError(f"{self.__name__}() takes {n} arguments ({len(args)} given)")
        values: list = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            i = self._index.get(key)
            if i is None:
                raise ArgumentTypeError(f"{self.__name__}() got an unexpected keyword argument {key!r}")
            if values[i] is not _MISSING:
                raise ArgumentTypeError(f"{self.__name__}() got multiple values for argument {key!r}")
            values[i] = value
        for i, v in enumerate(values):
            if v is _MISSING:
                if not self.params[i].optional:
                    raise ArgumentTypeError(f"{self.__name__}() missing argument {snake_case(self.params[i].name)!r}")
                values[i] = None
        return values

    # -- calls ------------------------------------------------------------------------------------
    def __call__(self, /, *args: Any, stream=None, **kwargs: Any):     # (self=: a tensor parameter)
        if kwargs or len(args) != self._n:
            args = self.bind_args(args, kwargs)
        if stream is None:
            stream = _default_stream(args)
        for i in self._tensor_params:
            a = args[i]
            if a is not None and a.__class__ is not Tensor:
                return self._call_host(args, stream)    # host data: through the boundary
        with _shutdown.launching(self.name):   # refused once the interpreter exits (pyaclnn/_shutdown.py)
            return self.one_shot(args, stream)

    def _call_host(self, args, stream):
        """A call with numpy / torch / Python data: Tensors for them, the launch, then outputs
        copied back (numpy) and the call waited for where the host reads at once."""
        with _shutdown.launching(self.name):
            tensors, crossing = to_tensors(args, self._roles, stream, self._names)
            ok = False
            try:
                self.one_shot(tensors, stream)
                ok = True
            finally:
                crossing.finish(ok)
        outs = self._outputs
        if len(outs) == 1:
            return args[outs[0]]
        return tuple([args[i] for i in outs])

    def one_shot(self, args, stream):
        """Phase 1, workspace, phase 2 (no executor reuse)."""
        gws = self._gws
        if gws is None:
            gws = self.bind()[0]
        handle = stream._handle
        if handle is None:
            raise ClosedError("stream is closed")
        state = stream._state
        if getattr(_tls, "binding", None) is not state.binding:
            state.bind()
        if self.data_dependent:
            # Its phase 2 synchronises in C: wait for the queued work here, where Ctrl-C can land,
            # so that phase 2 only waits for this launch.
            _interruptible.until_idle(handle)
        temps = CallTemps(stream.pool)      # owns what this call makes, from before it makes it
        try:
            post = temps.post
            executor = temps.executor
            cargs = [a if c is None else c(a, stream, post) for c, a in zip(self._convs, args)]
            size = _c_uint64()
            try:
                status = gws(*cargs, _byref(size), _byref(executor))
            except ctypes.ArgumentError:
                cargs = self._convert_by_value(args, cargs, stream, post)
                status = gws(*cargs, _byref(size), _byref(executor))
            if status:
                raise op_error(status, self.signature.workspace_function, self.name)
            nbytes = size.value
            ws = None
            if nbytes:
                temps.nbytes = nbytes
                temps.pool.allocate_into(nbytes, temps.ws)
                ws = temps.ws[0]
            # Forget the executor before the launch consumes it (no interrupt point between these
            # lines): an interrupt afterwards must not destroy it again.
            ex = executor.value
            executor.value = None
            status = self._launch(ws, nbytes, ex, handle)
            if status:
                raise op_error(status, self.name, self.name)
            temps.release()                 # workspace back to the pool (stream-ordered), objects destroyed
        except BaseException:
            # Any exception, KeyboardInterrupt included: the releaser thread (which no signal
            # interrupts) releases what this call made now, resuming a release cut short. Should an
            # interrupt land before this put (Python 3.10 checks at the entry of an except clause),
            # temps' own finalizer does it when this frame goes (see CallTemps).
            _put(temps)
            raise
        outs = self._outputs
        if len(outs) == 1:
            return args[outs[0]]
        return tuple([args[i] for i in outs])

    def _convert_by_value(self, args, cargs, stream, post) -> list:
        out = list(cargs)
        for i, conv in enumerate(self._by_value):
            if conv is not None:
                try:
                    out[i] = conv(args[i], stream, post)
                except (TypeError, ValueError) as exc:
                    p = self.params[i]
                    raise ArgumentTypeError(f"{self.__name__}(): {snake_case(p.name)} ({p.ctype}) cannot take "
                                            f"{args[i]!r}: {exc}") from None
        return out

    def prepare(self, /, *args: Any, stream=None, **kwargs: Any):      # (self=: a tensor parameter)
        """A :class:`~pyaclnn.ops.Plan` that runs on these arguments' tensors (see pyaclnn.ops.prepare)."""
        if kwargs or len(args) != self._n:
            args = self.bind_args(args, kwargs)
        if stream is None:
            stream = _default_stream(args)
        return plan_class()(self, args, stream)


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()
_BY_VALUE = frozenset({Kind.DOUBLE, Kind.FLOAT, Kind.INT, Kind.BOOL, Kind.ENUM})
_AS_IS = frozenset({Kind.DOUBLE, Kind.FLOAT, Kind.BOOL})     # ctypes converts these without wrapping
def _default_stream(args):
    """The current stream; torch_npu's current stream when NPU torch tensors are passed."""
    return _default_stream_for(args)


def function(op: str) -> OpFunction:
    """The (cached) :class:`OpFunction` of an operator (any spelling of ``_registry.c_name``)."""
    functions = _registry._functions
    fn = functions.get(op)
    if fn is None:
        sig = signature(op)
        fn = functions.get(sig.name)
        if fn is None:
            fn = OpFunction(sig)
            functions[sig.name] = fn
        functions[op] = fn
    return fn
