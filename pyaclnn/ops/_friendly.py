"""Helpers for the friendly per-operator functions: inputs in, outputs allocated, results out.

The result type follows the inputs: numpy in -> numpy out (the call waits for the stream); torch in
-> torch out (allocated by torch, wrapped without a copy); pyaclnn tensors in -> pyaclnn tensors out
(asynchronous, on the stream).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime import Stream
from ..tensor import Tensor, as_acl_dtype, empty, from_numpy, host_array
from ._marshal import is_torch_tensor

NUMPY, TORCH, TENSOR = "numpy", "torch", "tensor"


def flavor(*values: Any) -> str:
    """What the caller passed: ``"torch"``, ``"tensor"`` (pyaclnn) or ``"numpy"`` (anything else)."""
    for v in values:
        if is_torch_tensor(v):
            return TORCH
    for v in values:
        if isinstance(v, Tensor):
            return TENSOR
    return NUMPY


def pick_stream(stream: Stream | None, *values: Any) -> Stream:
    if stream is not None:
        return stream
    from ._launcher import _default_stream
    return _default_stream(values)


def to_device(value: Any, stream: Stream) -> Tensor:
    """A device tensor for an input: Tensor as is, torch wrapped, anything else copied from the host
    (numpy arrays keep their dtype; Python numbers and lists get torch's defaults, as in the generic
    launcher: see :func:`pyaclnn.tensor.host_array`)."""
    if isinstance(value, Tensor):
        return value
    if is_torch_tensor(value):
        from .. import torch as _torch
        return _torch.from_torch(value)
    return from_numpy(host_array(value), stream=stream)


def choice(param: str, value: Any, accepted: dict[str, str]) -> int:
    """The aclDataType of a dtype argument that must be one of ``accepted`` (name -> note); the
    error lists the accepted names."""
    names = ", ".join(f"{n}{' (' + note + ')' if note else ''}" for n, note in accepted.items())
    try:
        acl = as_acl_dtype(value)
    except (ValueError, TypeError):
        raise ValueError(f"unknown {param} {value!r}; accepted: {names}") from None
    if acl not in {as_acl_dtype(n) for n in accepted}:
        from .. import dtypes
        raise ValueError(f"{param} {dtypes.info(acl).name.removeprefix('ACL_')} is not accepted here; "
                         f"accepted: {names}")
    return acl


def new_output(kind: str, shape: tuple, dtype: Any, stream: Stream, like: Any = None) -> tuple[Any, Any]:
    """Allocate an output: (what to pass to the operator, what to return to the caller)."""
    if kind == TORCH:
        import torch

        from .. import dtypes
        from .. import torch as _torch
        device = like.device if like is not None and is_torch_tensor(like) else "cpu"
        t = torch.empty(tuple(shape), dtype=dtypes.to_torch(as_acl_dtype(dtype)), device=device)
        return _torch.from_torch(t), t
    t = empty(shape, dtype, stream=stream)
    return t, t


def results(kind: str, outputs: list, stream: Stream) -> Any:
    """Convert what the operator wrote into the caller's flavour (numpy waits for the stream)."""
    if kind == NUMPY:
        stream.synchronize()
        outputs = [o.numpy() if isinstance(o, Tensor) else o for o in outputs]
    elif any(is_torch_tensor(o) and o.device.type == "cpu" for o in outputs):
        stream.synchronize()            # host memory (emulator): torch reads it right away
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


__all__ = ["flavor", "pick_stream", "to_device", "choice", "new_output", "results", "NUMPY", "TORCH", "TENSOR"]
