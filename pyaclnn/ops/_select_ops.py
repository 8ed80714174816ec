"""Friendly functions for the operators whose output shape depends on the data (aclnnMaskedSelect,
aclnnNonzeroV2): the output is allocated with the largest shape the operator can produce, the launch
(which waits for the stream, as CANN's does for such operators) leaves the real shape on the output's
aclTensor, read back with aclGetViewShape as torch_npu does, and the result is that leading part of
the output, in the caller's flavour (numpy -> numpy, pyaclnn Tensor -> Tensor, torch -> torch)."""
from __future__ import annotations

import ctypes
from typing import Any

import numpy as np

from .. import capi
from ..errors import make_error
from ..runtime import Stream
from ..tensor import Tensor, contiguous_strides
from . import _friendly as F
from ._launcher import function

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


def view_shape(t: Tensor) -> tuple[int, ...]:
    """The view shape of ``t``'s aclTensor (which a data-dependent operator refreshes)."""
    dims, n = ctypes.POINTER(ctypes.c_int64)(), ctypes.c_uint64()
    rc = capi.aclGetViewShape(t.acl_handle(), ctypes.byref(dims), ctypes.byref(n))
    if rc:
        raise make_error(rc, "aclGetViewShape")
    try:
        return tuple(int(dims[i]) for i in range(n.value))
    finally:
        _libc.free(ctypes.cast(dims, ctypes.c_void_p))


def _run(op: str, inputs: list, max_shape: tuple, dtype: Any, stream: Stream | None) -> Any:
    crossing = F.begin(stream, *inputs)     # a new output: the launch rewrites its aclTensor
    dev = [crossing.tensor(x) for x in inputs]
    out, ret = crossing.new_output(max_shape, dev[0].acl_dtype if dtype is None else dtype, inputs[0])
    function(op)(*dev, out, stream=crossing.stream)
    shape = view_shape(out) if int(np.prod(max_shape)) else max_shape   # an empty launch leaves out as it is
    count = int(np.prod(shape))
    if crossing.kind == F.TORCH or isinstance(ret, np.ndarray):   # torch tensor / numpy array the kernel wrote
        return crossing.results([ret.reshape(-1)[:count].reshape(shape)])
    return crossing.results([out.as_strided(shape, contiguous_strides(shape), out.offset)])


def masked_select(x: Any, mask: Any, *, stream: Stream | None = None) -> Any:
    """The elements of ``x`` where ``mask`` (BOOL or UINT8, broadcast with ``x``) is true, as a 1-D
    result in row-major order (aclnnMaskedSelect)."""
    n = int(np.prod(np.broadcast_shapes(tuple(x.shape), tuple(mask.shape))))
    return _run("aclnnMaskedSelect", [x, mask], (n,), None, stream)


def nonzero_v2(x: Any, *, stream: Stream | None = None) -> Any:
    """The coordinates of the non-zero elements of ``x`` as the columns of an INT64 [rank, count]
    matrix (aclnnNonzeroV2; ``np.array(np.nonzero(x))``)."""
    shape = tuple(x.shape)
    return _run("aclnnNonzeroV2", [x], (len(shape), int(np.prod(shape))), "int64", stream)


__all__ = ["masked_select", "nonzero_v2", "view_shape"]
