"""The torch side of pyaclnn's torch interop that does not build Tensors: torch dtypes, torch
tensors from pyaclnn tensors (:func:`to_torch`) and torch_npu's current stream.

Kept apart from :mod:`pyaclnn.torch` (which wraps torch tensors as Tensors), whose public names these
are; the device tensor (:mod:`pyaclnn.tensor`) knows nothing of torch.  Imported only when used.
"""
from __future__ import annotations

import ctypes
import sys
from typing import Any

import torch

from ._exceptions import BackendError, InvalidArgumentError
from . import capi, dtypes
from .errors import make_error
from .runtime import Stream, is_stub

_FP4X2 = getattr(torch, "float4_e2m1fn_x2", None)


def from_torch_dtype(dtype: "torch.dtype") -> int:
    """aclDataType of a torch dtype (``torch.float4_e2m1fn_x2`` -> ACL_FLOAT4_E2M1, in pairs)."""
    if _FP4X2 is not None and dtype == _FP4X2:
        return capi.ACL_FLOAT4_E2M1
    return dtypes.from_torch(dtype)


def to_torch_dtype(acl_dtype: int) -> "torch.dtype":
    """torch dtype holding an aclDataType: the value type, or uint8 codes where torch has none."""
    info = dtypes.info(acl_dtype)
    if info.acl == capi.ACL_FLOAT4_E2M1 and _FP4X2 is not None:
        return _FP4X2
    if info.torch and hasattr(torch, info.torch):
        return getattr(torch, info.torch)
    if info.carrier and info.itemsize == 1:
        return torch.uint8
    raise InvalidArgumentError(f"torch has no dtype for {info.name}")


def to_torch(tensor) -> "torch.Tensor":
    """The tensor's data as a torch tensor (waits for the streams that use it).

    With torch_npu imported (on an NPU, or on the emulator after ``pyaclnn.preload_stub()`` / under
    ``python -m pyaclnn exec``): a new NPU tensor, copied device to device on torch_npu's current
    stream.  On the emulator without torch_npu: a CPU tensor sharing the memory (it keeps the pyaclnn
    tensor alive).
    """
    info = dtypes.info(tensor.acl_dtype)
    tdtype = to_torch_dtype(info.acl)
    shape, strides, offset = list(tensor.shape), list(tensor.strides), tensor.offset
    if info.packed:
        if tdtype is not _FP4X2 or not tensor.is_contiguous() or (shape and shape[-1] % 2) or offset % 2:
            raise InvalidArgumentError(f"{info.name} tensors convert to torch only as contiguous FLOAT4_E2M1 pairs")
        if shape:
            shape[-1] //= 2
        strides, offset = [max(s // 2, 1) for s in strides], offset // 2
    tensor.memory.wait_idle()
    if is_stub() and "torch_npu" not in sys.modules:
        mem = tensor.memory
        if mem.nbytes == 0:
            return torch.empty(shape, dtype=tdtype)
        holder = (ctypes.c_char * mem.nbytes).from_address(mem.ptr)
        # the torch tensor keeps a view of its own (closing `tensor` then leaves the memory alone)
        holder.keep = tensor.as_strided(tensor.shape, tensor.strides)
        raw = torch.frombuffer(holder, dtype=torch.uint8)
        return raw.view(tdtype).as_strided(shape, strides, offset)
    if "torch_npu" not in sys.modules:
        raise BackendError("to_torch on real hardware needs torch_npu")
    out = torch.empty(shape, dtype=tdtype, device=f"npu:{tensor.device_id or 0}")
    if not tensor.is_contiguous():
        raise InvalidArgumentError("to_torch on real hardware copies contiguous tensors only")
    nbytes = tensor.nbytes
    status = capi.aclrtMemcpyAsync(out.data_ptr(), nbytes, tensor.ptr + dtypes.nbytes(info.acl, offset),
                                   nbytes, capi.ACL_MEMCPY_DEVICE_TO_DEVICE, current_stream().handle)
    if status:
        raise make_error(status, "aclrtMemcpyAsync")
    return out


_streams: dict[int, Stream] = {}


def current_stream(device=None) -> Stream:
    """torch_npu's current stream as a (non-owning) pyaclnn Stream."""
    import torch_npu  # noqa: F401 -- registers torch.npu
    s = torch.npu.current_stream() if device is None else torch.npu.current_stream(device.id)
    handle = int(s.npu_stream)
    wrapped = _streams.get(handle)
    if wrapped is None or wrapped.closed:
        wrapped = _streams[handle] = Stream.wrap(handle, device=s.device.index or 0)
    return wrapped


def stream_for(args: Any) -> Stream | None:
    """torch_npu's current stream when any argument is an NPU torch tensor, else None."""
    for a in args:
        if isinstance(a, torch.Tensor) and a.device.type == "npu":
            return current_stream()
    return None
