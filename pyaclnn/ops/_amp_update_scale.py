"""aclnnAmpUpdateScale: the dynamic loss-scale update of mixed-precision training (torch's
``_amp_update_scale_``), as a friendly function on top of the generic launcher."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._exceptions import InvalidArgumentError
from ..runtime import Stream
from ..tensor import Tensor, empty
from . import _friendly as F
from ._launcher import function
from ._support import register_probe

OP = "aclnnAmpUpdateScale"


def amp_update_scale(current_scale: Any, growth_tracker: Any, found_inf: Any, growth_factor: float = 2.0,
                     backoff_factor: float = 0.5, growth_interval: int = 2000, *,
                     out: tuple[Any, Any] | None = None, inplace: bool = False,
                     stream: Stream | None = None) -> tuple[Any, Any]:
    """Update a loss scale and its growth tracker after one training step.

    If ``found_inf`` is non-zero (NaN counts, -0.0 does not) the scale is multiplied by
    ``backoff_factor`` and the tracker reset to 0; otherwise the tracker counts up, and when it
    reaches ``growth_interval`` the scale is multiplied by ``growth_factor`` (kept if that product
    is not finite) and the tracker reset.

    Parameters
    ----------
    current_scale : one-element float32 / float16 / bfloat16 tensor (or a Python float or list
        -> float32)
    growth_tracker : one-element int32 tensor (or a Python int or list -> int32)
    found_inf : one-element tensor of ``current_scale``'s dtype (or a Python number or list)
    growth_factor, backoff_factor : float
        Converted to float32 by the operator. Defaults as torch's GradScaler (2.0, 0.5).
    growth_interval : int
        In [1, 2**31 - 1]. Default as torch's GradScaler (2000).
    out : (updated_scale, updated_growth_tracker), optional
        Output tensors to write; allocated like the inputs when omitted.
    inplace : bool
        Write the results into ``current_scale`` and ``growth_tracker`` (as torch_npu does); a
        read-only numpy array there raises ValueError before anything runs.
    stream : pyaclnn.Stream, optional
        Default: the current stream (torch_npu's, for NPU torch tensors).

    Returns
    -------
    (updated_scale, updated_growth_tracker)
        numpy arrays for host inputs (the call then waits for the result), torch tensors for torch
        inputs, pyaclnn tensors for pyaclnn tensors (asynchronous).
    """
    if (current_scale.__class__ is Tensor and growth_tracker.__class__ is Tensor
            and found_inf.__class__ is Tensor and (inplace or out is None or out[0].__class__ is Tensor)):
        # device tensors in: no conversion, asynchronous (the hot path of a training loop)
        if stream is None:
            stream = F.stream_for((current_scale,))
        if inplace:
            o0, o1 = current_scale, growth_tracker
        elif out is not None:
            o0, o1 = out
        else:
            o0 = empty(current_scale.shape, current_scale.acl_dtype, stream=stream)
            o1 = empty(growth_tracker.shape, growth_tracker.acl_dtype, stream=stream)
        _launcher()(current_scale, growth_tracker, found_inf, float(growth_factor), float(backoff_factor),
                    int(growth_interval), o0, o1, stream=stream)
        return o0, o1

    kind = F.kind_of(current_scale, growth_tracker, found_inf)
    if inplace and kind == F.NUMPY:
        # checked before anything runs, as for out= (a read-only output would be left unchanged)
        for name, value in (("current_scale", current_scale), ("growth_tracker", growth_tracker)):
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                raise InvalidArgumentError(f"inplace=True: {name} is a read-only numpy array, so the result cannot "
                                           f"be written into it; pass a writeable array (arr.copy()) or use "
                                           f"inplace=False")
    crossing = F.Crossing(F.stream_for((current_scale, growth_tracker, found_inf), stream), kind)
    stream = crossing.stream
    if kind == F.NUMPY:
        # Python numbers become one-element arrays: float32 scale, int32 tracker, found_inf of the
        # scale's dtype. Arrays keep their dtype (the operator checks it).
        scale_host = _host(current_scale, np.float32)
        scale = crossing.tensor(scale_host)
        tracker = crossing.tensor(_host(growth_tracker, np.int32))
        found = crossing.tensor(_host(found_inf, scale_host.dtype))
    else:
        scale = crossing.tensor(current_scale)
        tracker = crossing.tensor(growth_tracker)
        found = crossing.tensor(found_inf)

    if inplace:
        outs = [scale, tracker]
        returns = [current_scale, growth_tracker] if kind != F.NUMPY else [scale, tracker]
    elif out is not None:
        outs = [crossing.tensor(o, output=True, name=name) for o, name in zip(out, ("out[0]", "out[1]"))]
        returns = list(out)
    else:
        new_scale, ret_scale = crossing.new_output(scale.shape, scale.acl_dtype, current_scale)
        new_tracker, ret_tracker = crossing.new_output(tracker.shape, tracker.acl_dtype, growth_tracker)
        outs, returns = [new_scale, new_tracker], [ret_scale, ret_tracker]

    _launcher()(scale, tracker, found, float(growth_factor), float(backoff_factor), int(growth_interval),
                 outs[0], outs[1], stream=stream)
    crossing.finish()                   # numpy out= arrays get their results
    if kind == F.NUMPY and inplace:
        stream.synchronize()
        values = [scale.numpy(), tracker.numpy()]
        for orig, value in zip((current_scale, growth_tracker), values):
            if isinstance(orig, np.ndarray):
                orig[...] = value.reshape(orig.shape)
        return tuple(orig if isinstance(orig, np.ndarray) else v
                     for orig, v in zip((current_scale, growth_tracker), values))
    return crossing.results(returns)


_fn = None


def _launcher():
    global _fn
    if _fn is None:
        _fn = function(OP)
    return _fn


def _host(value: Any, dtype) -> np.ndarray:
    """numpy data keeps its dtype (the operator checks it); a Python number or list becomes a
    one-dimensional array of the documented dtype ([x] for a number)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return np.asarray(value)
    return np.asarray(value, dtype=dtype).reshape(-1)


def _probe(acl_dtype: int, stream: Stream) -> tuple:
    """Smallest valid call with ``currentScale`` of ``acl_dtype`` (for the support matrix)."""
    from ..tensor import zeros
    scale = zeros((1,), acl_dtype, stream=stream)
    tracker = zeros((1,), "int32", stream=stream)
    found = zeros((1,), acl_dtype, stream=stream)
    return (scale, tracker, found, 2.0, 0.5, 1000, zeros((1,), acl_dtype, stream=stream),
            zeros((1,), "int32", stream=stream))


register_probe(OP, ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16", "ACL_DOUBLE", "ACL_INT32"), _probe)
