"""torch interop, imported only when used (``import pyaclnn`` never imports torch).

* :func:`from_torch` wraps a torch tensor as a :class:`pyaclnn.Tensor` without copying: NPU tensors
  (torch_npu) by their device address; on the emulator, CPU tensors too, because its "device memory"
  is host memory (the storage is registered with the emulator while wrapped).  Every operator call
  accepts torch tensors directly and wraps them this way.
* :func:`to_torch` gives a pyaclnn tensor back as a torch tensor: zero-copy on the emulator (a CPU
  tensor over the same memory), a device-to-device copy into a new NPU tensor with torch_npu.
* NPU tensors are used on torch_npu's current stream (:func:`current_stream`).
* dtypes: every torch dtype with an aclDataType, including ``float8_e4m3fn``, ``float8_e5m2``,
  ``float8_e8m0fnu`` and ``float4_e2m1fn_x2`` (two FLOAT4_E2M1 values per element, like torch_npu).
"""
from __future__ import annotations

import ctypes
import sys
import threading
import weakref
from typing import Any

import torch

from . import capi, dtypes
from .runtime import ExternalMemory, Stream, is_stub
from .tensor import Tensor

__all__ = ["from_torch", "to_torch", "to_torch_dtype", "from_torch_dtype", "current_stream", "stream_for"]

_FP4X2 = getattr(torch, "float4_e2m1fn_x2", None)

# Wrappers are cached per live torch tensor, so calls in a loop do not re-register memory or
# re-create aclTensor handles.  The entry goes when the torch tensor goes.
_cache: dict[int, tuple] = {}
_cache_lock = threading.Lock()


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
    raise ValueError(f"torch has no dtype for {info.name}")


def _layout(t: "torch.Tensor") -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device)


def _forget(key: int) -> None:
    with _cache_lock:
        _cache.pop(key, None)


def from_torch(t: "torch.Tensor") -> Tensor:
    """A pyaclnn Tensor over a torch tensor's memory (no copy; cached while the tensor lives)."""
    key = id(t)
    entry = _cache.get(key)
    if entry is not None and entry[0]() is t and entry[2] == _layout(t):
        return entry[1]
    wrapped = _wrap(t)
    ref = weakref.ref(t, lambda _r, k=key: _forget(k))
    with _cache_lock:
        _cache[key] = (ref, wrapped, _layout(t))
    return wrapped


def _wrap(t: "torch.Tensor") -> Tensor:
    acl = from_torch_dtype(t.dtype)
    shape, strides, offset = list(t.shape), list(t.stride()), t.storage_offset()
    if _FP4X2 is not None and t.dtype == _FP4X2:
        # torch_npu's convention (CollectB4ShapeInfo): in 4-bit units the unit-stride dimension
        # doubles and every other stride doubles.
        if shape:
            unit = strides.index(1) if 1 in strides else len(shape) - 1
            shape[unit] *= 2
            strides = [s if i == unit else s * 2 for i, s in enumerate(strides)]
        offset *= 2
    storage = t.untyped_storage()
    base, nbytes = storage.data_ptr(), storage.nbytes()
    device = t.device.type
    if device == "cpu":
        if not is_stub():
            raise ValueError("a CPU torch tensor cannot be used by a real NPU: move it with .npu() first, "
                             "or copy it with pyaclnn.from_numpy(t.numpy())")
        mem = ExternalMemory(base, nbytes, owner=storage, register=True)
    elif device == "npu":
        from .runtime import Device
        mem = ExternalMemory(base, nbytes, owner=storage, stream=current_stream(Device(t.device.index or 0)))
    else:
        raise ValueError(f"torch tensors on {t.device} cannot be used by aclnn operators")
    return Tensor(mem, shape, acl, strides, offset)


def to_torch(tensor: Tensor) -> "torch.Tensor":
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
            raise ValueError(f"{info.name} tensors convert to torch only as contiguous FLOAT4_E2M1 pairs")
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
        raise RuntimeError("to_torch on real hardware needs torch_npu")
    out = torch.empty(shape, dtype=tdtype, device=f"npu:{tensor.device_id or 0}")
    if not tensor.is_contiguous():
        raise ValueError("to_torch on real hardware copies contiguous tensors only")
    nbytes = tensor.nbytes
    status = capi.aclrtMemcpyAsync(out.data_ptr(), nbytes, tensor.ptr + dtypes.nbytes(info.acl, offset),
                                   nbytes, capi.ACL_MEMCPY_DEVICE_TO_DEVICE, current_stream().handle)
    if status:
        from .errors import make_error
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
