"""Shared helpers for the operator-family tests (indexing, matmul, reductions, softmax, shape ops):
strided device views of NumPy data, the status of a call, and raw C calls with NULL arguments."""
from __future__ import annotations

import ctypes
import os

import numpy as np

import pyaclnn
from pyaclnn.errors import AclError

NULLPTR, INVALID, INNER_NULLPTR = 161001, 161002, 561103


def strided(arr: np.ndarray, transpose: bool = False) -> "pyaclnn.Tensor":
    """A non-contiguous device view holding `arr`'s values: every other element of a buffer twice as
    long, at offset 1 (and with the last two dims swapped in memory when `transpose`)."""
    arr = np.asarray(arr)
    shape = arr.shape
    base = np.ascontiguousarray(np.swapaxes(arr, -1, -2)) if transpose and arr.ndim >= 2 else np.ascontiguousarray(arr)
    flat = base.reshape(-1)
    store = np.zeros(2 * flat.size + 1, arr.dtype)
    store[1::2] = flat
    t = pyaclnn.from_numpy(store)
    st = [1] * len(base.shape)
    for d in range(len(base.shape) - 2, -1, -1):
        st[d] = st[d + 1] * base.shape[d + 1]
    st = [2 * s for s in st]
    if transpose and arr.ndim >= 2:
        st[-1], st[-2] = st[-2], st[-1]
    return t.as_strided(shape, tuple(st), 1)


def code_of(fn, *args) -> int:
    """The AclError code fn(*args) raises (0 if it returns)."""
    try:
        fn(*args)
    except AclError as exc:
        return exc.code
    return 0


def raw_null_status(func: str, n_args: int, pass_handles: dict[int, object] | None = None) -> int:
    """Calls libopapi's `func` with NULL for every argument except those in pass_handles (position ->
    handle) and real workspaceSize/executor pointers; returns its status."""
    from pyaclnn import _loader
    lib = ctypes.CDLL(os.path.join(_loader.stub_library_dir(), "libopapi.so"))
    f = getattr(lib, func)
    f.restype = ctypes.c_int
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    args = [ctypes.c_void_p(None)] * n_args
    for pos, h in (pass_handles or {}).items():
        args[pos] = h
    return f(*args, ctypes.byref(ws), ctypes.byref(ex))
