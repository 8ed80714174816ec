"""Device tensors: memory + shape, strides, offset, dtype and format; the aclTensor built on demand.

    import numpy as np, pyaclnn
    x = pyaclnn.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    x.T                       # a non-contiguous view of the same memory (strides (1, 3))
    x[:, 1:].numpy()          # copies back to the host (after synchronising the stream)
    y = pyaclnn.zeros((4,), "bfloat16")

Conventions (those of ``aclCreateTensor``): ``strides`` and ``offset`` count elements, not bytes;
the tensor's address is the *storage base* and ``offset`` says where the view starts.  4-bit types
(INT4, FLOAT4_E2M1, FLOAT4_E1M2) count 4-bit elements, stored two per byte with element 2k in the
low nibble; their host arrays are ml_dtypes ``int4`` / ``float4_e2m1fn`` or uint8 codes (FLOAT4_E1M2).

The ``aclTensor`` handle is created the first time an operator needs it and cached on the tensor
(destroyed when the tensor is released); prepared calls make their own handles, because the
address setters write into the handle they are given.
"""
from __future__ import annotations

import ctypes
import functools
import math
from typing import Any, Iterable, Sequence

import numpy as np

from ._exceptions import ArgumentTypeError, IndexOutOfRangeError, InvalidArgumentError, UnsupportedError
from . import capi, dtypes
from ._interruptible import until_idle as _until_idle
from ._cint import INT64_MAX, CIntRangeError, check_all
from ._release import c_callable as _c_callable
from ._release import drain as _drain
from ._release import finalizer as _finalizer
from .errors import ClosedError, make_error, recent_error_message
from .runtime import DeviceBuffer, ExternalMemory, Memory, Stream, _bind_current, current_stream
from .runtime.memory import MemoryPart
from .runtime.pool import block_size as _check_pool_size
from .runtime.set_blocks import SetBlocks

__all__ = ["Tensor", "from_numpy", "host_array", "empty", "zeros", "empty_like", "zeros_like", "as_acl_dtype",
           "as_acl_format", "contiguous_strides"]

_c_int64 = ctypes.c_int64

# Spellings accepted for dtypes beyond numpy's and the C names ("ACL_FLOAT16", "FLOAT16").
_ALIASES = {
    "float32": capi.ACL_FLOAT, "float": capi.ACL_FLOAT, "fp32": capi.ACL_FLOAT,
    "float16": capi.ACL_FLOAT16, "half": capi.ACL_FLOAT16, "fp16": capi.ACL_FLOAT16,
    "bfloat16": capi.ACL_BF16, "bf16": capi.ACL_BF16,
    "hifloat8": capi.ACL_HIFLOAT8, "hif8": capi.ACL_HIFLOAT8,
    "float8_e4m3fn": capi.ACL_FLOAT8_E4M3FN, "float8_e5m2": capi.ACL_FLOAT8_E5M2,
    "float8_e8m0": capi.ACL_FLOAT8_E8M0, "float8_e8m0fnu": capi.ACL_FLOAT8_E8M0,
    "float4_e2m1": capi.ACL_FLOAT4_E2M1, "float4_e2m1fn": capi.ACL_FLOAT4_E2M1,
    "float4_e1m2": capi.ACL_FLOAT4_E1M2, "int4": capi.ACL_INT4,
}


def as_acl_dtype(dtype: Any) -> int:
    """An aclDataType from an int, a C name (``"ACL_BF16"``), a short name (``"bfloat16"``,
    ``"hifloat8"``), a numpy / ml_dtypes dtype or a torch dtype."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return dtypes.info(int(dtype)).acl
    if isinstance(dtype, str):
        key = dtype.strip()
        if key.upper() in dtypes.BY_NAME:
            return dtypes.BY_NAME[key.upper()].acl
        if "ACL_" + key.upper() in dtypes.BY_NAME:
            return dtypes.BY_NAME["ACL_" + key.upper()].acl
        if key.lower() in _ALIASES:
            return _ALIASES[key.lower()]
    elif str(dtype).startswith("torch."):
        return dtypes.from_torch(dtype)
    try:
        return dtypes.from_numpy(np.dtype(dtype))
    except TypeError:
        raise InvalidArgumentError(f"unknown dtype {dtype!r}; give an aclDataType name ({_some_names()} ...; "
                                   f"all: pyaclnn.dtypes.BY_NAME), a short name ({', '.join(sorted(_ALIASES))}), "
                                   f"a numpy / ml_dtypes dtype or a torch dtype") from None


def _some_names() -> str:
    return ", ".join(n.removeprefix("ACL_") for n in ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_INT8",
                                                       "ACL_INT32", "ACL_INT64"))


def as_acl_format(fmt: Any) -> int:
    """An aclFormat from an int or a name (``"ND"``, ``"NCHW"``, ``"ACL_FORMAT_NC1HWC0"``)."""
    if fmt is None:
        return capi.ACL_FORMAT_ND
    if isinstance(fmt, (int, np.integer)):
        return int(fmt)
    members = capi.ENUM_MEMBERS["aclFormat"]
    for name in (str(fmt), "ACL_FORMAT_" + str(fmt).upper(), "ACL_" + str(fmt).upper()):
        if name in members:
            return members[name]
    raise InvalidArgumentError(f"unknown aclFormat {fmt!r}")


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    """Row-major strides in elements (zero-size dimensions count as 1, as torch does)."""
    strides, step = [], 1
    for dim in reversed(shape):
        strides.append(step)
        step *= max(dim, 1)
    return tuple(reversed(strides))


# Layout keys are interned so that prepared calls can compare them by identity (falling back to
# equality, so the table may be emptied when many distinct views have been made).
_keys: dict[tuple, tuple] = {}
_MAX_KEYS = 1 << 16


def _intern(key: tuple) -> tuple:
    k = _keys.get(key)
    if k is None:
        if len(_keys) >= _MAX_KEYS:
            _keys.clear()
        k = _keys.setdefault(key, key)
    return k


def _check_layout_ints(shape: tuple, strides: tuple, offset: int) -> None:
    """Each dimension, stride and the offset must fit aclCreateTensor's int64_t."""
    check_all(shape, "int64_t", "shape", "aclCreateTensor")
    check_all(strides, "int64_t", "strides", "aclCreateTensor")
    check_all((offset,), "int64_t", "offset", "aclCreateTensor")


def _check_counts(shape: tuple, info: dtypes.DTypeInfo) -> int:
    """The element count and the byte size of ``shape`` must fit int64 (CANN counts both in
    int64; ctypes would wrap a larger size_t); returns the byte size."""
    n = math.prod(shape)
    nbytes = info.nbytes(n)
    if nbytes > INT64_MAX or n > INT64_MAX:
        what = "element count" if n > INT64_MAX else "byte size"
        raise CIntRangeError(f"shape {shape} of {info.name} has {n} elements ({nbytes} bytes): its {what} "
                             f"overflows int64 (at most {INT64_MAX}); no device tensor can be that large")
    return nbytes


_CLOSED_TEXT = ("this pyaclnn.Tensor was closed (close() or the end of its `with` block released its "
                "device memory); it cannot be used any more -- make a new tensor")


class _ClosedMemory(Memory):
    """What a closed tensor points at: every use raises :class:`~pyaclnn.errors.ClosedError`.

    Its slots stay unset, so the C accelerator of prepared calls (which reads them by offset, after
    a key check that a closed tensor never passes) finds NULL and takes the Python path.
    """
    __slots__ = ()

    def __init__(self):     # noqa: D107 -- deliberately leaves the slots empty
        pass

    def _refuse(self, *args):
        raise ClosedError(_CLOSED_TEXT)

    ptr = nbytes = streams = property(_refuse)
    note_stream = wait_idle = _refuse

    @property
    def alive(self) -> bool:
        return False

    def release(self) -> None:
        pass


_CLOSED = _ClosedMemory()
_CLOSED_KEY = ("closed",)


def _destroy_cell(destroy, cell: list) -> None:
    """Destroy the handles in ``cell``, each taken out of it by the C call chain that destroys it
    (resumable: no path destroys one twice, an interrupt loses none)."""
    try:
        if _drain(destroy, cell):
            recent_error_message()
    except Exception:       # noqa: BLE001 -- finalizers must not raise
        pass


class Tensor:
    """A view of device memory with shape, strides, offset (elements), dtype and format.

    Create tensors with :func:`from_numpy`, :func:`empty`, :func:`zeros`, or from torch tensors with
    :func:`pyaclnn.torch.from_torch`; views (``t[1:, ::2]``, ``t.T``, ``t.transpose(0, 1)``,
    ``t.as_strided(...)``) share the memory.  The memory is released when the last tensor using it is
    released (garbage collection or :meth:`close` on every view).
    """

    __slots__ = ("_mem", "_ptr", "shape", "strides", "offset", "acl_dtype", "format", "_info",
                 "storage_dims", "_key", "_handle", "_handle_fin", "__weakref__")

    def __init__(self, memory: Memory, shape: Sequence[int], dtype: Any, strides: Sequence[int] | None = None,
                 offset: int = 0, format: Any = None, storage_dims: Sequence[int] | None = None):
        info = dtypes.info(as_acl_dtype(dtype))
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise InvalidArgumentError(f"negative dimension in shape {shape}")
        strides = contiguous_strides(shape) if strides is None else tuple(int(s) for s in strides)
        if len(strides) != len(shape):
            raise InvalidArgumentError(f"strides {strides} do not match shape {shape}")
        if any(s < 0 for s in strides) or offset < 0:
            raise InvalidArgumentError("negative strides and offsets are not supported by aclCreateTensor")
        if (shape and max(shape) > INT64_MAX) or (strides and max(strides) > INT64_MAX) or offset > INT64_MAX:
            _check_layout_ints(shape, strides, offset)
        _check_counts(shape, info)
        self._ptr = memory.ptr              # raises ClosedError for the memory of a closed tensor
        self._mem = memory
        self.shape = shape
        self.strides = strides
        self.offset = int(offset)
        self.acl_dtype = info.acl
        self.format = as_acl_format(format)
        self._info = info
        self._check_bounds()
        if storage_dims is None:
            storage_dims = self._default_storage_dims()
        self.storage_dims = check_all(storage_dims, "int64_t", "storage_dims", "aclCreateTensor")
        self._key = _intern((info.acl, shape, strides, self.offset, self.format, self.storage_dims))
        self._handle = 0
        self._handle_fin: Any = None
        memory.views += 1

    # -- layout -----------------------------------------------------------------------------------
    def _storage_elements(self) -> int:
        info = self._info
        if info.packed:
            return self._mem.nbytes * info.per_byte
        return self._mem.nbytes // max(info.itemsize, 1)

    def _span(self) -> tuple[int, int]:
        """[first, last + 1) storage element indices the view touches (empty view: (offset, offset))."""
        if self.size == 0:
            return self.offset, self.offset
        last = self.offset + sum((d - 1) * s for d, s in zip(self.shape, self.strides))
        return self.offset, last + 1

    def _check_bounds(self) -> None:
        lo, hi = self._span()
        if hi > lo and dtypes.nbytes(self.acl_dtype, hi) > self._mem.nbytes:
            raise InvalidArgumentError(f"view (shape {self.shape}, strides {self.strides}, offset {self.offset}) "
                                       f"runs past the end of its {self._mem.nbytes}-byte memory")

    def _default_storage_dims(self) -> tuple[int, ...]:
        # Whole, contiguous tensors describe their storage as the view (the vendor samples' habit);
        # views describe it as one dimension of storage elements (torch_npu's habit).
        if (self.offset == 0 and self.is_contiguous()
                and self._info.nbytes(self.size) == self._mem.nbytes):
            return self.shape
        return (self._storage_elements(),)

    def is_contiguous(self) -> bool:
        """Row-major contiguous (dimensions of size 1 may have any stride; an empty tensor is
        contiguous whatever its strides, as in torch)."""
        if 0 in self.shape:
            return True
        expected = 1
        for d, s in zip(reversed(self.shape), reversed(self.strides)):
            if d != 1 and s != expected:
                return False
            expected *= d
        return True

    # -- properties -------------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def dtype(self) -> np.dtype:
        """The host numpy dtype (a uint8 carrier for HIFLOAT8 / FLOAT4_E1M2 / FLOAT6_*)."""
        return self._info.numpy

    @property
    def dtype_name(self) -> str:
        """The C name of the aclDataType, e.g. ``ACL_BF16``."""
        return self._info.name

    @property
    def nbytes(self) -> int:
        """Bytes the elements of the view occupy when packed contiguously."""
        return self._info.nbytes(self.size)

    @property
    def ptr(self) -> int:
        """Device address of the storage base (what aclCreateTensor receives)."""
        if self._ptr is None:
            raise ClosedError(_CLOSED_TEXT)
        return self._ptr

    @property
    def closed(self) -> bool:
        """True after :meth:`close` (or the end of a ``with tensor:`` block)."""
        return self._mem is _CLOSED

    @property
    def data_ptr(self) -> int:
        """Device address of the first element of the view (byte-addressable types only)."""
        if self._ptr is None:
            raise ClosedError(_CLOSED_TEXT)
        if self._info.packed:
            raise InvalidArgumentError(f"{self.dtype_name} elements are not byte-addressable")
        return self._ptr + self.offset * self._info.itemsize

    @property
    def memory(self) -> Memory:
        return self._mem

    @property
    def stream(self) -> Stream | None:
        """The stream this tensor's memory is ordered on."""
        return self._mem.streams[0] if self._mem.streams else None

    @property
    def device_id(self) -> int | None:
        s = self.stream
        return s.device_id if s is not None else None

    def __repr__(self) -> str:
        if self._mem is _CLOSED:
            return f"pyaclnn.Tensor(shape={self.shape}, dtype={self.dtype_name}, closed)"
        extra = "" if self.is_contiguous() and self.offset == 0 else \
            f", strides={self.strides}, offset={self.offset}"
        return (f"pyaclnn.Tensor(shape={self.shape}, dtype={self.dtype_name}{extra}, "
                f"device={self.device_id})")

    def __len__(self) -> int:
        if not self.shape:
            raise ArgumentTypeError("len() of a 0-d tensor")
        return self.shape[0]

    # -- aclTensor --------------------------------------------------------------------------------
    def acl_handle(self) -> int:
        """The cached ``aclTensor*`` describing this view (created on first use)."""
        h = self._handle
        return h if h else self._create_handle()

    def _create_handle(self) -> int:
        # The finalizer owns the cell before the handle exists, and aclCreateTensor's result lands
        # in the cell inside one C call: an exception (a KeyboardInterrupt from a signal handler
        # included) at any point leaves nothing unowned.
        cell: list = []
        self._handle_fin = _finalizer(self, _destroy_cell, capi.aclDestroyTensor, cell)
        self._new_acl_tensor_into(cell, None)
        h = self._handle = cell[0]
        return h

    def new_acl_tensor(self, address: int | None = None) -> int:
        """A new ``aclTensor*`` for this view, owned by the caller (``aclDestroyTensor`` it)."""
        cell: list = []
        self._new_acl_tensor_into(cell, address)
        return cell[0]

    def _create_args(self, address: int | None = None) -> tuple:
        """The arguments of ``aclCreateTensor`` for this view."""
        if self._ptr is None:
            raise ClosedError(_CLOSED_TEXT)
        n = len(self.shape)
        dims = (_c_int64 * n)(*self.shape) if n else None
        strides = (_c_int64 * n)(*self.strides) if n else None
        sd = self.storage_dims
        sdims = (_c_int64 * len(sd))(*sd) if sd else None
        return (dims, n, self.acl_dtype, strides, self.offset, self.format, sdims, len(sd),
                self._ptr if address is None else address)

    def _new_acl_tensor_into(self, cell: list, address: int | None) -> None:
        args = self._create_args(address)
        # cell.extend(map(...)): the handle is stored by the same C call that creates it
        cell.extend(map(_c_callable(capi.aclCreateTensor), *[(a,) for a in args]))
        if not cell[-1]:
            del cell[-1]
            raise make_error(capi.ACLNN_ERR_PARAM_INVALID, "aclCreateTensor")

    def close(self) -> None:
        """Release this view: destroy its cached aclTensor and drop its reference to the memory.

        When no other open view uses the memory, it goes back to its stream's pool now
        (stream-ordered: work already queued that uses it runs first; the outputs of a cached friendly
        call share one block, which goes back -- to that plan's next call, or to the pool once the plan
        is dropped -- when all of them are closed or gone); :func:`pyaclnn.empty_cache`
        returns pooled memory to the device.  Afterwards every use of this tensor raises
        :class:`~pyaclnn.errors.ClosedError` (its shape and dtype stay readable); closing again
        does nothing.  ``with tensor:`` closes at the end of the block.
        """
        mem = self._mem
        if mem is _CLOSED:
            return
        # One interrupt-free run: the tensor is closed and its memory no longer counts it; the
        # releases that follow are resumable, and what an interrupt leaves behind goes when the
        # handle's finalizer (this tensor's death) or the memory's (its death) runs.
        fin = self._handle_fin
        self._handle_fin = None
        self._handle = 0
        self._mem = _CLOSED
        self._key = _CLOSED_KEY
        self._ptr = None
        mem.views -= 1
        if fin is not None:
            fin()
        if mem.views <= 0:
            mem.release()

    def __enter__(self) -> "Tensor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- host copies ------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A host copy, after the streams that used the memory have finished.

        The data is copied once: straight into the returned array for a contiguous tensor. A
        non-contiguous view downloads the storage it spans once; a permutation of a contiguous
        layout (a transpose, say) comes back as a strided view over that copy, which the caller
        alone owns (``np.ascontiguousarray`` gives C order); any other view is gathered from it
        into a C-contiguous array (the span is then larger than the result).
        """
        info = self._info
        if info.numpy is None:
            raise InvalidArgumentError(f"{info.name} has no host representation")
        if info.per_byte not in (1, 2):
            raise UnsupportedError(f"{info.name} (packed {info.per_byte} per byte) has no host copy yet")
        self._mem.wait_idle()
        if self.size == 0:
            return np.empty(self.shape, dtype=info.numpy)
        lo, hi = self._span()
        if self.is_contiguous():
            out = np.empty(self.shape, dtype=info.numpy)
            self._download_elements(lo, hi, out.reshape(-1))
            return out
        span = np.empty(hi - lo, dtype=info.numpy)
        self._download_elements(lo, hi, span)
        # as_strided goes through __array_interface__, which loses ml_dtypes types: stride raw bytes
        isz = span.itemsize
        permuted = _is_permuted_contiguous(self.shape, self.strides)
        view = np.lib.stride_tricks.as_strided(     # writeable when injective: the caller owns the span
            span.view(np.dtype((np.void, isz))), shape=self.shape,
            strides=tuple(st * isz for st in self.strides), writeable=permuted)
        if permuted:
            return view.view(span.dtype)
        return np.array(view, order="C").view(span.dtype)

    def _download_elements(self, lo: int, hi: int, out: np.ndarray) -> None:
        """Storage elements [lo, hi) into the 1-D host array ``out`` of the host dtype (one copy;
        4-bit types: their packed bytes, then unpacked into ``out``)."""
        if not self._info.packed:
            _download(self._ptr + lo * out.itemsize, out.view(np.uint8))
            return
        b0, b1 = lo // 2, (hi + 1) // 2
        raw = np.empty(b1 - b0, np.uint8)
        _download(self._ptr + b0, raw)
        _unpack_nibbles_into(raw, lo % 2, out.view(np.uint8), signed=self._info.acl == capi.ACL_INT4)

    def copy_from(self, array: Any, stream: Stream | None = None) -> "Tensor":
        """Overwrite the elements with a host array of the same shape (contiguous tensors only),
        ordered on ``stream`` (default: the tensor's stream)."""
        if not self.is_contiguous():
            raise InvalidArgumentError("copy_from needs a contiguous tensor")
        host = _host_bytes(np.asarray(array), self._info, self.shape)
        if self._info.packed and self.offset % 2:
            raise InvalidArgumentError("a 4-bit view starting in the middle of a byte cannot be overwritten")
        stream = stream or self.stream or current_stream()
        own = self.device_id
        if own is not None and stream.device_id != own:   # the runtime refuses it too (107000)
            raise InvalidArgumentError(f"copy_from: the tensor's memory is on device {own}, but the stream is on "
                                       f"device {stream.device_id}; pass a stream of device {own}")
        self._mem.note_stream(stream)
        start = self._ptr + dtypes.nbytes(self.acl_dtype, self.offset) if self._info.packed \
            else self.data_ptr
        _upload(start, host, stream)
        return self

    # -- views ------------------------------------------------------------------------------------
    def as_strided(self, shape: Sequence[int], strides: Sequence[int], offset: int | None = None) -> "Tensor":
        """A view of the same memory with another layout (elements, as aclCreateTensor takes)."""
        return Tensor(self._mem, shape, self.acl_dtype, strides, self.offset if offset is None else offset,
                      self.format)

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        axes = list(range(self.ndim))
        axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
        return self.permute(*axes)

    def permute(self, *axes: int) -> "Tensor":
        order = list(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else list(axes)
        if sorted(a % max(self.ndim, 1) for a in order) != list(range(self.ndim)):
            raise InvalidArgumentError(f"{tuple(order)} is not a permutation of {self.ndim} axes")
        order = [a % self.ndim for a in order]
        return self.as_strided([self.shape[a] for a in order], [self.strides[a] for a in order])

    @property
    def T(self) -> "Tensor":
        return self.permute(*reversed(range(self.ndim)))

    def reshape(self, *shape: int) -> "Tensor":
        """A view with another shape (contiguous tensors only); one dimension may be -1."""
        dims = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else list(shape)
        if dims.count(-1) == 1:
            known = math.prod(d for d in dims if d != -1)
            dims[dims.index(-1)] = self.size // known if known else 0
        if math.prod(dims) != self.size:
            raise InvalidArgumentError(f"cannot reshape {self.shape} into {tuple(dims)}")
        if not self.is_contiguous():
            raise InvalidArgumentError("reshape of a non-contiguous view would need a copy")
        return self.as_strided(dims, contiguous_strides(dims))

    def __getitem__(self, index) -> "Tensor":
        """Basic indexing: ints, slices with positive steps, ``...`` and ``None`` (new axis)."""
        if not isinstance(index, tuple):
            index = (index,)
        if index.count(Ellipsis) > 1:
            raise IndexOutOfRangeError("an index can only have a single ellipsis")
        n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
        if n_real > self.ndim:
            raise IndexOutOfRangeError(f"too many indices for a {self.ndim}-d tensor")
        if Ellipsis in index:
            k = index.index(Ellipsis)
            index = index[:k] + (slice(None),) * (self.ndim - n_real) + index[k + 1:]
        else:
            index = index + (slice(None),) * (self.ndim - n_real)
        shape, strides, offset, dim = [], [], self.offset, 0
        for item in index:
            if item is None:
                shape.append(1)
                strides.append(1)
                continue
            size, stride = self.shape[dim], self.strides[dim]
            if isinstance(item, slice):
                start, stop, step = item.indices(size)
                if step <= 0:
                    raise IndexOutOfRangeError("negative slice steps are not supported (aclTensor strides are >= 0)")
                count = len(range(start, stop, step))
                shape.append(count)
                strides.append(stride * step)
                if count:
                    offset += start * stride
            else:
                i = int(item)
                if not -size <= i < size:
                    raise IndexOutOfRangeError(f"index {i} is out of bounds for dimension {dim} of size {size}")
                offset += (i % size) * stride
            dim += 1
        return Tensor(self._mem, shape, self.acl_dtype, strides, offset, self.format)


# ------------------------------------------------------------------------------------------------
# Host <-> device copies
# ------------------------------------------------------------------------------------------------

def _download(src: int, out: np.ndarray) -> None:
    """Copy ``out.nbytes`` device bytes at ``src`` into the contiguous host array ``out``."""
    nbytes = out.nbytes
    if nbytes:
        status = capi.aclrtMemcpy(out.ctypes.data, nbytes, src, nbytes, capi.ACL_MEMCPY_DEVICE_TO_HOST)
        if status:
            raise make_error(status, "aclrtMemcpy")


def _unpack_nibbles_into(raw: np.ndarray, first: int, out: np.ndarray, signed: bool) -> None:
    """4-bit elements into bytes, in place: ``out[j]`` = nibble ``first + j`` of ``raw`` (element
    2k in the low nibble of byte k), sign-extended for INT4. No temporaries of the data's size."""
    n = out.size
    even, odd = out[0::2], out[1::2]            # out[j] for j even / odd
    if first == 0:
        np.bitwise_and(raw[:even.size], 0xF, out=even)
        np.right_shift(raw[:odd.size], 4, out=odd)
    else:
        np.right_shift(raw[:even.size], 4, out=even)
        np.bitwise_and(raw[1:1 + odd.size], 0xF, out=odd)
    if signed and _int4_bytes_are_sign_extended():     # 0..15 -> -8..7 as int8 bytes
        v = out[:n].view(np.int8)
        np.bitwise_xor(v, 8, out=v)
        np.subtract(v, 8, out=v)


@functools.lru_cache(maxsize=None)
def _int4_bytes_are_sign_extended() -> bool:
    """How ml_dtypes.int4 stores a value in its byte: the nibble (-8 as 0x08) or the int8 (0xF8)."""
    return int(np.array([-8], np.int8).astype(dtypes.info(capi.ACL_INT4).numpy).view(np.uint8)[0]) == 0xF8


def _is_permuted_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """True when the view is a contiguous layout with its dimensions reordered (each element of its
    span used exactly once), as a transpose or permute gives."""
    dims = sorted((st, d) for d, st in zip(shape, strides) if d != 1)
    expected = 1
    for st, d in dims:
        if st != expected:
            return False
        expected *= d
    return True


def _upload(dst: int, host: np.ndarray, stream: Stream) -> None:
    n = host.nbytes
    if n:
        # Stream-ordered, so that a recycled pool block is not overwritten under queued work. From
        # pageable memory the call returns once the copy is done (the host array may then go), so
        # it waits in C for the work queued before it: wait for that here, where Ctrl-C can land.
        _bind_current(stream._state)        # a fresh thread may not be bound to the device yet
        handle = stream.handle
        _until_idle(handle)
        status = capi.aclrtMemcpyAsync(dst, n, host.ctypes.data, n, capi.ACL_MEMCPY_HOST_TO_DEVICE, handle)
        if status:
            raise make_error(status, "aclrtMemcpyAsync")


def _host_bytes(array: np.ndarray, info: dtypes.DTypeInfo, shape: tuple | None = None) -> np.ndarray:
    """The device byte image of a host array of ``info``'s type (packed for 4-bit types)."""
    if shape is not None and tuple(array.shape) != tuple(shape):
        raise InvalidArgumentError(f"host array shape {array.shape} does not match {shape}")
    if info.packed:
        if info.per_byte != 2:
            raise UnsupportedError(f"{info.name} uploads are not supported yet")
        if info.carrier and array.dtype != np.uint8:
            raise InvalidArgumentError(f"{info.name} data must be given as uint8 codes, not {array.dtype}")
        return dtypes.pack(array, info.acl)
    host = np.ascontiguousarray(array)
    if info.carrier:
        value_type = dtypes.acl_of_value_type(host.dtype) == info.acl   # e.g. ml_dtypes.complex32
        if host.dtype.itemsize != info.itemsize or (host.dtype.kind not in "uif" and not value_type):
            raise InvalidArgumentError(f"{info.name} data must be given as raw codes in a {info.itemsize}-byte "
                                       f"integer array, not {host.dtype}")
        return host.view(np.uint8)
    if host.dtype != info.numpy:
        raise InvalidArgumentError(f"host dtype {host.dtype} does not match {info.name} ({info.numpy}); "
                                   f"convert it first")
    return host


# ------------------------------------------------------------------------------------------------
# Constructors
# ------------------------------------------------------------------------------------------------

def _shape_of(shape: int | Iterable[int]) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def empty(shape: int | Iterable[int], dtype: Any = "float32", *, stream: Stream | None = None,
          format: Any = None) -> Tensor:
    """An uninitialised contiguous device tensor from ``stream``'s pool (default: current stream)."""
    shape = _shape_of(shape)
    acl = as_acl_dtype(dtype)
    if any(d < 0 for d in shape):
        raise InvalidArgumentError(f"negative dimension in shape {shape}")
    nbytes = _check_counts(shape, dtypes.info(acl))
    buf = DeviceBuffer(max(nbytes, 1), stream)
    buf.nbytes = nbytes
    return Tensor(buf, shape, acl, format=format)


_PART_ALIGN = 512      # the pool's granularity: every part starts where a block of its own would


def set_maker(tensors: Sequence[Tensor], fast):
    """A function ``stream -> [Tensor, ...]``: new tensors of the layouts of ``tensors`` (each made by
    :func:`empty`, on one stream), for a caller that makes such a set on every call (a cached plan's
    outputs).  The layouts were checked when ``tensors`` were made, so the new ones skip the checks,
    and they share one block (see :class:`MemoryPart`).  On the stream of ``tensors`` that block is
    kept with the set kind (:class:`~pyaclnn.runtime.set_blocks.SetBlocks`): when every tensor of a
    set is closed or gone it goes to the next set rather than back to the pool.  ``make.close()``
    gives the kept blocks back to the pool (later sets then come from the pool).

    ``fast``: the accelerator (``_fastcall.c``), whose ``make_set`` makes the tensors and their parts
    in one C call and whose ``new_lease`` makes the set's hold on its block."""
    layouts, total = [], 0
    for t in tensors:
        if t._mem.__class__ is not DeviceBuffer or t.offset or t.storage_dims != t.shape or not t.is_contiguous():
            raise InvalidArgumentError("set_maker needs whole contiguous tensors made by empty()")
        nbytes = t._mem.nbytes
        layouts.append((total, nbytes, t.shape, t.strides, t.acl_dtype, t.format, t._info, t.storage_dims, t._key))
        total += -(-max(nbytes, 1) // _PART_ALIGN) * _PART_ALIGN
    count = len(layouts)
    rounded = _check_pool_size(total)
    home = tensors[0]._mem.streams[0] if tensors else None
    blocks = SetBlocks(home, total, rounded, fast.new_lease)
    take, free, new_lease, make_set, make_kept = blocks.take, blocks.free, fast.new_lease, fast.make_set, fast.make_kept
    # What make_set sets, in its order: each slot through its own descriptor (as `obj.name = value`).
    spec = (Tensor, MemoryPart,
            tuple(Tensor.__dict__[n] for n in _SET_TENSOR_SLOTS),
            tuple(MemoryPart.__dict__.get(n) or Memory.__dict__[n] for n in _SET_PART_SLOTS),
            tuple(layouts))

    def make(stream: Stream) -> list:
        if stream is home and not blocks.closed:
            outs = make_kept(spec, free, home, count)     # (a kept block used on `home` alone)
            if outs is not None:
                return outs
            buf = take()
            whole = new_lease(buf, free, count)
        else:
            buf = whole = DeviceBuffer(total, stream, rounded)
            whole.views = count
        return make_set(spec, buf.ptr, buf.streams, whole)

    make.close = blocks.close
    make.finalizer = blocks._fin      # (gives the kept blocks back without keeping them alive)
    return make


_SET_TENSOR_SLOTS = ("shape", "strides", "acl_dtype", "format", "_info", "storage_dims", "_key", "offset",
                     "_handle", "_handle_fin", "_ptr", "_mem")
_SET_PART_SLOTS = ("ptr", "nbytes", "streams", "_finalizer", "views", "whole")


def zeros(shape: int | Iterable[int], dtype: Any = "float32", *, stream: Stream | None = None,
          format: Any = None) -> Tensor:
    """A zero-filled contiguous device tensor (``aclrtMemsetAsync`` on ``stream``)."""
    t = empty(shape, dtype, stream=stream, format=format)
    n = t._mem.nbytes
    if n:
        _bind_current(t.stream._state)
        status = capi.aclrtMemsetAsync(t._ptr, n, 0, n, t.stream.handle)
        if status:
            raise make_error(status, "aclrtMemsetAsync")
    return t


def empty_like(t: Tensor, dtype: Any = None, *, stream: Stream | None = None) -> Tensor:
    """A contiguous uninitialised tensor with ``t``'s shape (and dtype unless given)."""
    return empty(t.shape, t.acl_dtype if dtype is None else dtype, stream=stream or t.stream,
                 format=t.format)


def zeros_like(t: Tensor, dtype: Any = None, *, stream: Stream | None = None) -> Tensor:
    return zeros(t.shape, t.acl_dtype if dtype is None else dtype, stream=stream or t.stream,
                 format=t.format)


# Python values without a dtype get torch's defaults (torch.tensor([1.0]) is float32).
_PY_DEFAULTS = {"f": np.float32, "i": np.int64, "u": np.int64, "b": np.bool_, "c": np.complex64}


def host_array(value: Any) -> np.ndarray:
    """A host array for tensor data: numpy arrays and scalars keep their dtype (as
    ``torch.from_numpy``); Python numbers and (nested) lists / tuples get torch's defaults
    (``torch.tensor``): float -> float32 (FLOAT), int -> int64 (INT64), bool -> BOOL,
    complex -> complex64."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    array = np.asarray(value)
    kind = array.dtype.kind
    if kind not in _PY_DEFAULTS:
        raise ArgumentTypeError(f"cannot make tensor data from {type(value).__name__} (numpy dtype "
                                f"{array.dtype}); give numbers, nested lists of numbers or a numpy array")
    return array.astype(_PY_DEFAULTS[kind], copy=False)


def from_numpy(array: Any, *, stream: Stream | None = None, dtype: Any = None, format: Any = None) -> Tensor:
    """Copy a host array to a new contiguous device tensor (ordered on ``stream``).

    numpy arrays keep their dtype; Python numbers and lists get torch's defaults
    (``from_numpy([1.0, 2.0])`` is FLOAT, ``[1, 2]`` INT64, see :func:`host_array`).
    ``dtype`` overrides the aclDataType: needed for types held as raw codes (``"hifloat8"``,
    ``"float4_e1m2"`` from uint8 arrays); 4-bit types are packed two per byte.
    """
    array = host_array(array)
    acl = dtypes.from_numpy(array.dtype) if dtype is None else as_acl_dtype(dtype)
    info = dtypes.info(acl)
    host = _host_bytes(array, info)
    t = empty(array.shape, acl, stream=stream, format=format)
    _upload(t._ptr, host, t.stream)
    return t


def wrap_pointer(ptr: int, shape: Sequence[int], dtype: Any, *, nbytes: int | None = None,
                 strides: Sequence[int] | None = None, offset: int = 0, owner: Any = None,
                 register: bool = False, stream: Stream | None = None, format: Any = None) -> Tensor:
    """A tensor over memory that pyaclnn does not own (device memory allocated elsewhere, or, on the
    emulator with ``register=True``, host memory). ``owner`` is kept alive with the tensor."""
    acl = as_acl_dtype(dtype)
    if nbytes is None:
        t_strides = contiguous_strides(shape) if strides is None else strides
        span = offset + sum((d - 1) * s for d, s in zip(shape, t_strides)) + 1 if math.prod(shape) else 0
        nbytes = dtypes.nbytes(acl, span)
    ptr = check_all((ptr,), "uintptr_t", "ptr", "wrap_pointer")[0]
    nbytes = check_all((nbytes,), "size_t", "nbytes", "wrap_pointer")[0]
    mem = ExternalMemory(ptr, nbytes, owner=owner, register=register, stream=stream)
    return Tensor(mem, shape, acl, strides, offset, format)
