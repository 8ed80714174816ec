"""Python values -> C arguments of ``aclnnXxxGetWorkspaceSize``, one converter per parameter kind.

A converter is ``conv(value, stream, post) -> C argument``. It may append to ``post`` what must
happen after phase 2 has returned: ``functools.partial(destroy_fn, handle)`` for an aclScalar /
aclIntArray / aclTensorList ... made for the call, put there by the same C call chain that creates
the handle (and taken out by the one that destroys it, :func:`finish`), so that a KeyboardInterrupt
never finds a handle that ``post`` does not hold.

Tensor arguments are :class:`Tensor` (or None) here: numpy arrays, torch tensors and Python data
became Tensors at the host-data boundary (:mod:`pyaclnn._boundary`) before the launcher saw them.

By-value parameters whose Python value ctypes converts by itself have no converter (``None``), so
the hot loop of a call only runs Python code for tensors and handles.
"""
from __future__ import annotations

import ctypes
import functools
import itertools
import operator
import re
from typing import Any, Callable

import numpy as np

from .._exceptions import ArgumentTypeError, InvalidArgumentError
from .. import capi, dtypes
from .._cint import bounds as _cint_bounds, check as _cint_check
from ..codecs import encode_float8_e8m0
from .. import _release
from ..errors import make_error, recent_error_message
from ..signatures.model import Kind, Param
from ..tensor import Tensor, as_acl_dtype

DESTROY = "destroy"       # (kept for callers of the old (DESTROY, fn, handle) entries)
_partial = functools.partial
_c = _release.c_callable
_FunctionType = type(lambda: None)


def _make_into(post: list, create, destroy, a, b) -> int:
    """``create(a, b)`` with its handle stored in ``post`` as ``partial(destroy, handle)`` inside the
    same C call chain; returns the handle (0 if creation failed: nothing is kept then)."""
    if create.__class__ is _FunctionType:       # (a capi stand-in: see _release.c_callable)
        create = _c(create)
    if destroy.__class__ is _FunctionType:
        destroy = _c(destroy)
    post.extend(map(_partial, (destroy,), map(create, (a,), (b,))))
    h = post[-1].args[0]
    if not h:
        del post[-1]
    return h


Converter = Callable[[Any, Any, list], Any]


class Scalar:
    """An explicit ``aclScalar`` value: ``Scalar(0.5, "float16")``.

    Plain Python values become scalars of torch_npu's types: ``bool`` -> ACL_BOOL, ``int`` ->
    ACL_INT64, ``float`` -> ACL_DOUBLE, ``complex`` -> ACL_COMPLEX128; numpy scalars keep their dtype.

    A FLOAT8_E8M0 scalar from a value of another type is encoded as the NPU casts to E8M0: the value
    is rounded to float32, then its exponent field is kept (sign and mantissa dropped, 0 -> 2^-127,
    +-inf and overflow -> 0xFE, NaN -> 0xFF; :func:`pyaclnn.codecs.encode_float8_e8m0` with
    round_mode "floor"). Pass a ``float8_e8m0fnu`` value for any other code.
    """
    __slots__ = ("value", "acl_dtype", "_data")

    def __init__(self, value: Any, dtype: Any):
        self.acl_dtype = as_acl_dtype(dtype)
        info = dtypes.info(self.acl_dtype)
        if info.packed or info.numpy is None:
            raise InvalidArgumentError(f"{info.name} cannot be an aclScalar")
        self.value = value
        if self.acl_dtype == capi.ACL_FLOAT8_E8M0 and np.asarray(value).dtype != info.numpy:
            # not ml_dtypes' astype: its float -> e8m0 rounding differs between releases
            with np.errstate(over="ignore"):
                self._data = encode_float8_e8m0(np.float32(value), "floor").view(info.numpy)
        else:
            self._data = np.array(value, dtype=info.numpy).reshape(())

    def key(self) -> tuple:
        return ("Scalar", self.acl_dtype, self._data.tobytes())

    def __repr__(self) -> str:
        return f"Scalar({self.value!r}, {dtypes.info(self.acl_dtype).name})"


def enum_text(field: str, value: Any) -> str:
    """A layout field for messages: dtypes and formats by name (``FLOAT16``, ``ND``), others as is."""
    try:
        if field == "dtype":
            return dtypes.info(value).name.removeprefix("ACL_")
        if field == "format":
            for name, v in capi.ENUM_MEMBERS["aclFormat"].items():
                if v == value:
                    return name.removeprefix("ACL_FORMAT_")
    except (ValueError, KeyError):
        pass
    return str(value)


def as_scalar(value: Any) -> Scalar:
    if isinstance(value, Scalar):
        return value
    if isinstance(value, (bool, np.bool_)):
        return Scalar(bool(value), capi.ACL_BOOL)
    if isinstance(value, np.generic):
        return Scalar(value, dtypes.from_numpy(value.dtype))
    if isinstance(value, int):
        return Scalar(value, capi.ACL_INT64)
    if isinstance(value, float):
        return Scalar(value, capi.ACL_DOUBLE)
    if isinstance(value, complex):
        return Scalar(value, capi.ACL_COMPLEX128)
    raise ArgumentTypeError(f"cannot make an aclScalar from {type(value).__name__}")


# ------------------------------------------------------------------------------------------------
# Tensors
# ------------------------------------------------------------------------------------------------

def only_tensor(value: Any, name: str = "tensor") -> Tensor | None:
    """A tensor argument as the launcher takes it: a Tensor or None."""
    if value is None or isinstance(value, Tensor):
        return value
    raise ArgumentTypeError(f"{name} expects a pyaclnn.Tensor here, got {type(value).__name__}: host data "
                            f"(numpy, torch, Python lists) goes through pyaclnn._boundary first")


def _tensor_converter(p: Param) -> Converter:
    name = p.name

    def conv(x, stream, post):
        if x.__class__ is not Tensor:
            if x is None:
                return None
            x = only_tensor(x, name)
        m = x._mem
        s = m.streams
        if not s or s[0] is not stream:
            m.note_stream(stream)
        h = x._handle
        return h if h else x._create_handle()
    return conv


def _tensor_list_converter(p: Param) -> Converter:
    def conv(xs, stream, post):
        if xs is None:
            return None
        entry = _ListEntry(capi.aclDestroyTensorList, capi.aclDestroyTensor)
        post.append(entry)              # owns the tensors, then the list that takes them over
        handles = []
        for x in xs:
            t = only_tensor(x, p.name)
            if t is None:
                handles.append(None)
                continue
            t._mem.note_stream(stream)
            t._new_acl_tensor_into(entry.members, None)
            handles.append(entry.members[-1])
        return entry.create(capi.aclCreateTensorList, "aclCreateTensorList", handles)
    return conv


# ------------------------------------------------------------------------------------------------
# Scalars and arrays
# ------------------------------------------------------------------------------------------------

class _ListEntry:
    """A ``post`` entry for an aclTensorList / aclScalarList and its members: the members' handles
    are put into ``members`` by the C calls that make them, the list's into ``lst`` by the one that
    makes it (and takes the members over). Calling it releases whichever owns them: the list if it
    was made, else each member. Resumable (pyaclnn._release)."""
    __slots__ = ("destroy_list", "destroy_member", "members", "lst")

    def __init__(self, destroy_list, destroy_member):
        self.destroy_list = _c(destroy_list)
        self.destroy_member = _c(destroy_member)
        self.members: list = []
        self.lst: list = []

    def create(self, create_list, name: str, handles: list) -> int:
        arr = (ctypes.c_void_p * max(len(handles), 1))(*handles)
        self.lst.extend(map(_c(create_list), (arr,), (len(handles),)))
        if not self.lst[-1]:
            raise make_error(capi.ACLNN_ERR_PARAM_INVALID, name)
        return self.lst[-1]

    def __call__(self) -> None:
        if self.lst and self.lst[-1]:
            del self.members[:]             # the list owns them (same run as the test)
            _release.drain(self.destroy_list, self.lst)
        else:
            del self.lst[:]
            _release.drain(self.destroy_member, self.members)


def new_scalar(value: Any) -> int:
    s = as_scalar(value)
    h = capi.aclCreateScalar(s._data.ctypes.data, s.acl_dtype)
    if not h:
        raise make_error(capi.ACLNN_ERR_PARAM_INVALID, "aclCreateScalar")
    return h


def _scalar_into(post: list, value: Any) -> int:
    s = as_scalar(value)
    h = _make_into(post, capi.aclCreateScalar, capi.aclDestroyScalar, s._data.ctypes.data, s.acl_dtype)
    if not h:
        raise make_error(capi.ACLNN_ERR_PARAM_INVALID, "aclCreateScalar")
    return h


def _scalar(x, stream, post):
    if x is None:
        return None
    return _scalar_into(post, x)


def _scalar_list(xs, stream, post):
    if xs is None:
        return None
    entry = _ListEntry(capi.aclDestroyScalarList, capi.aclDestroyScalar)
    post.append(entry)
    handles = []
    for x in xs:
        s = as_scalar(x)
        entry.members.extend(map(_c(capi.aclCreateScalar), (s._data.ctypes.data,), (s.acl_dtype,)))
        if not entry.members[-1]:
            del entry.members[-1]
            raise make_error(capi.ACLNN_ERR_PARAM_INVALID, "aclCreateScalar")
        handles.append(entry.members[-1])
    return entry.create(capi.aclCreateScalarList, "aclCreateScalarList", handles)


def _array_converter(create: str, destroy: str, ctype, coerce) -> Converter:
    def conv(xs, stream, post):
        if xs is None:
            return None
        values = [coerce(v) for v in np.asarray(xs).reshape(-1).tolist()] \
            if isinstance(xs, np.ndarray) else [coerce(v) for v in xs]
        arr = (ctype * len(values))(*values) if values else None
        h = _make_into(post, getattr(capi, create), getattr(capi, destroy), arr, len(values))
        if not h:
            raise make_error(capi.ACLNN_ERR_PARAM_INVALID, create)
        return h
    return conv


# ------------------------------------------------------------------------------------------------
# By-value parameters
# ------------------------------------------------------------------------------------------------

def _as_float(x, stream, post):
    return x if type(x) is float else float(x)


def _as_int(x, stream, post):
    if type(x) is int:
        return x
    if isinstance(x, str) or str(type(x)).startswith("<class 'torch.") or isinstance(x, (np.dtype, type)):
        return as_acl_dtype(x)          # e.g. dstType="float8_e4m3fn"
    return operator.index(x)


def _as_bool(x, stream, post):
    return bool(x)


def _as_string(x, stream, post):
    if x is None or isinstance(x, bytes):
        return x
    return str(x).encode()


def _as_dtype(x, stream, post):
    return as_acl_dtype(x)


def _as_pointer(x, stream, post):
    if x is None or isinstance(x, int):
        return x
    if isinstance(x, Tensor):
        return x.ptr
    if hasattr(x, "handle"):
        return x.handle                 # a Stream / Event
    return ctypes.cast(x, ctypes.c_void_p).value


_BY_KIND: dict[Kind, Converter] = {
    Kind.SCALAR: _scalar,
    Kind.SCALAR_LIST: _scalar_list,
    Kind.INT_ARRAY: _array_converter("aclCreateIntArray", "aclDestroyIntArray", ctypes.c_int64,
                                     lambda v: _cint_check(v, "int64_t", "an aclIntArray element")),
    Kind.FLOAT_ARRAY: _array_converter("aclCreateFloatArray", "aclDestroyFloatArray", ctypes.c_float, float),
    Kind.BOOL_ARRAY: _array_converter("aclCreateBoolArray", "aclDestroyBoolArray", ctypes.c_bool, bool),
    Kind.DOUBLE: _as_float,
    Kind.FLOAT: _as_float,
    Kind.INT: _as_int,
    Kind.BOOL: _as_bool,
    Kind.STRING: _as_string,
    Kind.DTYPE: _as_dtype,
    Kind.ENUM: _as_int,
    Kind.POINTER: _as_pointer,
}


def _int_converter(p: Param) -> Converter:
    """By-value integers (and enums, C ints): converted as ``_as_int`` does, then range-checked
    against the parameter's C type, since ctypes would wrap an out-of-range value silently."""
    ctype = p.ctype if p.kind is Kind.INT else "int"
    lo, hi = _cint_bounds(ctype)
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", p.name).lower()
    name = snake if snake == p.name else f"{snake} ({p.name})"

    def conv(x, stream, post):
        if x.__class__ is int and lo <= x <= hi:
            return x
        return _cint_check(_as_int(x, stream, post), ctype, name)
    return conv


def converter(p: Param) -> Converter:
    """The converter for parameter ``p`` of a signature."""
    if p.kind in (Kind.INT, Kind.ENUM):
        return _int_converter(p)
    if p.kind is Kind.TENSOR:
        return _tensor_converter(p)
    if p.kind is Kind.TENSOR_LIST:
        return _tensor_list_converter(p)
    if p.kind in _BY_KIND:
        return _BY_KIND[p.kind]
    raise ArgumentTypeError(f"parameter {p.name} has a type pyaclnn cannot pass ({p.ctype})")


def finish(post: list, stream=None, ok: bool = True) -> None:
    """After phase 2 (or a failure): destroy what the call made, last first. Resumable: a
    ``partial(destroy, handle)`` leaves ``post`` in the C call chain that destroys it, a list entry
    after it ran (running it again finds nothing)."""
    if not post:
        return
    if _ListEntry not in map(type, post):       # (the common case: one C chain for them all)
        failed = _sum(map(_CALL, map(post.pop, _repeat(-1, len(post)))))
    else:
        failed = 0
        while post:
            if post[-1].__class__ is _partial:
                failed |= _sum(map(_CALL, map(post.pop, _LAST)))
            else:
                post[-1]()
                del post[-1]
    if failed:
        recent_error_message()


_sum = sum
_repeat = itertools.repeat
_LAST = (-1,)
_CALL = functools.partial.__call__      # (unbound: calls the partial it is given)


class CallTemps:
    """What one launch makes and gives back: the attribute objects (``post``), the executor phase 1
    writes (``executor``, a ``c_void_p`` held in ``execs`` until phase 2 consumes it: the launch
    sets it to NULL first), a workspace block (``ws``, ``nbytes`` from ``pool``).

    Owned by the launching frame, and released whatever happens: :meth:`release` (resumable) on
    success; otherwise when the object dies -- the frame unwinding from any exception, a
    KeyboardInterrupt included -- its finalizer (:func:`pyaclnn._release.finalizer`: the weak
    reference's callback is C code, no bytecode runs) queues the release of its containers for the
    releaser thread. The finalizer is registered before anything is made, so no interrupt point lies
    between making a handle and its owner: not even the first instruction of an ``except`` clause,
    where Python 3.10 checks for signals too. Handlers may still hand the object over at once
    (``pyaclnn._release._put(temps)``) so that a kept traceback does not hold the resources.
    """
    __slots__ = ("post", "executor", "execs", "ws", "_size", "pool", "_fin", "__weakref__")

    def __init__(self, pool):
        self.post: list = []
        self.executor = ctypes.c_void_p()
        self.execs = [self.executor]
        self.ws: list = []
        self._size = [0]                # (a cell: the finalizer's arguments see later sizes)
        self.pool = pool
        self._fin = _release.finalizer(self, _release_parts, self.execs, self.ws, self._size, pool, self.post)

    @property
    def nbytes(self) -> int:
        return self._size[0]

    @nbytes.setter
    def nbytes(self, value: int) -> None:
        self._size[0] = value

    def release(self) -> None:
        _release_parts(self.execs, self.ws, self._size, self.pool, self.post)
        # Released: drop the finalizer (its weak reference dies with the last name of it, before
        # this object, so its callback never runs). Cut short before, the finalizer runs it again.
        fin = self._fin
        self._fin = None
        _live_finalizers.pop(fin, None)

    __call__ = release                      # (what the releaser calls)


_live_finalizers = _release._live


def _release_parts(execs: list, ws: list, size: list, pool, post: list) -> None:
    """Release a launch's temporaries (resumable: each step takes what it releases out of its container)."""
    if execs and execs[0]:                  # phase 1 ran, phase 2 did not
        if _release.drain(capi.aclDestroyAclOpExecutor, execs):
            recent_error_message()
    if ws:
        pool.free_cell(ws, size[0])
    if post:
        finish(post)


def cache_key_of(value: Any) -> Any:
    """A hashable description of a non-tensor argument (type included: 1 and 1.0 differ)."""
    if isinstance(value, (list, tuple)):
        return tuple(cache_key_of(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Scalar):
        return value.key()
    if isinstance(value, np.generic):
        return (value.dtype.str, value.tobytes())
    hash(value)
    return (type(value), value)
