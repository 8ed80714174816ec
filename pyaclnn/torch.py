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

import weakref

from ._exceptions import InvalidArgumentError
from ._release import finalizer as _finalizer

import torch

from ._torch_out import (_FP4X2, current_stream, from_torch_dtype, stream_for, to_torch,  # noqa: F401
                         to_torch_dtype)
from .runtime import ExternalMemory, is_stub
from .tensor import Tensor

__all__ = ["from_torch", "to_torch", "to_torch_dtype", "from_torch_dtype", "current_stream", "stream_for"]

# Wrappers are cached per live torch tensor, so calls in a loop do not re-register memory or
# re-create aclTensor handles.  The entry goes when the torch tensor goes.
_cache: dict[int, tuple] = {}


def _layout(t: "torch.Tensor") -> tuple:
    return (t.data_ptr(), tuple(t.shape), t.stride(), t.dtype, t.device)


def _forget(key: int, ref: weakref.ref) -> None:
    # Run by the releaser thread after the tensor died (pyaclnn._release: its death runs no Python
    # code, so an interrupt cannot skip this and leave the wrapper, its aclTensor and its host
    # registration cached for good). The entry goes if it is still this tensor's: a new tensor at the
    # same id may have replaced it meanwhile (losing that one to a race here costs a re-wrap only).
    # No lock: one the caller's thread left held (an interrupt at a `with` block's end) would stop
    # the releaser for good.
    entry = _cache.get(key)
    if entry is not None and entry[0] is ref:
        _cache.pop(key, None)


def from_torch(t: "torch.Tensor") -> Tensor:
    """A pyaclnn Tensor over a torch tensor's memory (no copy; cached while the tensor lives)."""
    key = id(t)
    entry = _cache.get(key)
    if entry is not None and entry[0]() is t and entry[2] == _layout(t):
        return entry[1]
    wrapped = _wrap(t)
    if entry is not None and entry[0]() is t:
        ref = entry[0]                      # a new layout of the same tensor: its finalizer is there
    else:
        ref = weakref.ref(t)
        _finalizer(t, _forget, key, ref)    # first: an entry is never cached without its finalizer
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
            raise InvalidArgumentError("a CPU torch tensor cannot be used by a real NPU: move it with .npu() first, "
                                       "or copy it with pyaclnn.from_numpy(t.numpy())")
        mem = ExternalMemory(base, nbytes, owner=storage, register=True)
    elif device == "npu":
        from .runtime import Device
        mem = ExternalMemory(base, nbytes, owner=storage, stream=current_stream(Device(t.device.index or 0)))
    else:
        raise InvalidArgumentError(f"torch tensors on {t.device} cannot be used by aclnn operators")
    return Tensor(mem, shape, acl, strides, offset)
