"""aclnnAddRmsNormDynamicQuantV2: x = x1 + x2, RMS-normalise x with gamma (plus beta), then quantise
each row with a dynamic per-row scale, once or twice (optionally after multiplying by a smooth
scale), as a friendly function on top of the generic launcher.

V2 is used for every call: V1 is V2 without beta and outputMask.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..runtime import Stream
from ..tensor import Tensor, as_acl_dtype
from . import _friendly as F
from . import _friendly_plans as _plans
from ._launcher import function
from ._support import register_probe

OP = "aclnnAddRmsNormDynamicQuantV2"
# What the operator may produce (the SoC decides among them; see ops.support_matrix()).
_INT32 = as_acl_dtype("int32")
_FLOAT = as_acl_dtype("float32")
_Y_DTYPES = {"int8": "", "int4": "", "int32": "int4 packed 8 per word", "float8_e4m3fn": "Ascend 950",
             "float8_e5m2": "Ascend 950", "hifloat8": "Ascend 950"}


def add_rms_norm_dynamic_quant(x1: Any, x2: Any, gamma: Any, *, smooth_scale1: Any = None,
                               smooth_scale2: Any = None, beta: Any = None, epsilon: float = 1e-6,
                               output_mask: Sequence[bool] | None = None, y_dtype: Any = "int8",
                               stream: Stream | None = None) -> tuple:
    """Add, RMS-normalise and dynamically quantise, row by row.

    ``x = x1 + x2`` (computed in fp32; ``x_out`` is x in the input dtype), ``y = x / rms(x) * gamma
    (+ beta)`` with ``rms(x) = sqrt(mean(x**2) + epsilon)``, then for each active output k:
    ``z = y * smooth_scale_k`` (or y), ``scale_k = max|z| / Q`` per row and ``y_k = cast(z / scale_k)``
    (Q = 127 for int8, 7 for int4, 448 / 57344 / 32768 for float8_e4m3fn / float8_e5m2 / hifloat8).

    Parameters
    ----------
    x1, x2 : tensor [..., N], float16 or bfloat16 (numpy array, torch tensor or pyaclnn.Tensor)
    gamma : tensor [N], same dtype
    smooth_scale1, smooth_scale2 : tensor [N], optional
        Multiply y before quantising output 1 / output 2.
    beta : tensor [N], optional
        Added after gamma.
    epsilon : float
        Added to the mean of squares (the operator converts it to float32).
    output_mask : (bool, bool), optional
        Which outputs to produce. Default: output 1 always, output 2 when both smooth scales are
        given. A given smooth scale needs its output active, and one output must be active.
    y_dtype : "int8" (default), "int4", "int32" (int4 packed 8 per int32 word, y shape [..., N/8]),
        and on Ascend 950 also "float8_e4m3fn", "float8_e5m2", "hifloat8".
    stream : pyaclnn.Stream, optional
        Default: the current stream (torch_npu's, for NPU torch tensors).

    Returns
    -------
    (y1, y2, x_out, scale1, scale2)
        Inactive outputs are None. scale_k has shape x1.shape[:-1] (float32). numpy arrays for host
        inputs (the call then waits for the result), torch tensors for torch inputs, pyaclnn tensors
        for pyaclnn tensors (asynchronous).
    """
    values = (x1, x2, gamma, smooth_scale1, smooth_scale2, beta)
    if stream is None and output_mask is None:
        # Repeated layouts (a decode loop): the cached plan, one C call (see _friendly_plans)
        if x1.__class__ is Tensor:
            out = _plans.run((OP, epsilon, y_dtype), values, lambda *t: _plan_args(*t, epsilon, y_dtype))
        elif F.is_torch_tensor(x1):
            out = _plans.run_torch((OP, epsilon, y_dtype), values, lambda *t: _plan_args(*t, epsilon, y_dtype))
        elif x1.__class__ is np.ndarray:
            out = _plans.run_numpy((OP, epsilon, y_dtype), values, lambda *t: _plan_args(*t, epsilon, y_dtype))
        else:
            out = None
        if out is not None:
            return out
    crossing = F.begin(stream, *values)
    stream = crossing.stream
    x1_t, x2_t, gamma_t, s1_t, s2_t, beta_t = (crossing.tensor(v) for v in values)

    if output_mask is None:
        out1, out2 = True, smooth_scale1 is not None and smooth_scale2 is not None
        mask = None
    else:
        mask = [bool(v) for v in output_mask]
        out1, out2 = (mask + [False, False])[:2]

    returns, outs = [], []
    for active, shape, acl in _outputs(x1_t, out1, out2, F.choice("y_dtype", y_dtype, _Y_DTYPES)):
        t, ret = crossing.new_output(shape, acl, x1)
        outs.append(t)
        returns.append(ret if active else None)

    function(OP)(x1_t, x2_t, gamma_t, s1_t, s2_t, beta_t, float(epsilon), mask, *outs, stream=stream)
    active = [i for i, r in enumerate(returns) if r is not None]
    results = crossing.results([returns[i] for i in active])
    results = results if isinstance(results, tuple) else (results,)
    full: list = [None] * 5
    for i, r in zip(active, results):
        full[i] = r
    return tuple(full)


def _outputs(x1: Tensor, out1: bool, out2: bool, y_acl: int) -> list:
    """(active, shape, aclDataType) of y1, y2, x_out, scale1, scale2; an inactive output still needs
    a tensor, since the operator reads it: shape [1]."""
    lead = tuple(x1.shape[:-1])
    n = x1.shape[-1] if x1.shape else 0
    y_shape = lead + ((n // 8,) if y_acl == _INT32 else (n,))
    return [(active, shape if active else (1,), acl) for active, shape, acl in (
        (out1, y_shape, y_acl), (out2, y_shape, y_acl), (True, x1.shape, x1.acl_dtype),
        (out1, lead, _FLOAT), (out2, lead, _FLOAT))]


def _plan_args(x1, x2, gamma, s1, s2, beta, epsilon, y_dtype) -> tuple:
    """What the cached plan of a call on Tensors needs (see _friendly_plans.run); default mask."""
    out1, out2 = True, s1 is not None and s2 is not None
    specs = [(shape, acl) for _, shape, acl in _outputs(x1, out1, out2, F.choice("y_dtype", y_dtype, _Y_DTYPES))]
    returns = None if out2 else (0, None, 2, 3, None)
    args = [x1, x2, gamma, s1, s2, beta, float(epsilon), None] + [None] * len(specs)
    return function(OP), args, specs, returns


def _probe(acl_dtype: int, stream: Stream) -> tuple:
    """Smallest valid call with outputs of ``acl_dtype`` (for the support matrix): fp16 [1, 8]."""
    from ..tensor import zeros
    x = zeros((1, 8), "float16", stream=stream)
    gamma = zeros((8,), "float16", stream=stream)
    y_shape = (1, 1) if acl_dtype == as_acl_dtype("int32") else (1, 8)
    return (x, zeros((1, 8), "float16", stream=stream), gamma, None, None, None, 1e-6, None,
            zeros(y_shape, acl_dtype, stream=stream), zeros((1,), acl_dtype, stream=stream),
            zeros((1, 8), "float16", stream=stream), zeros((1,), "float32", stream=stream),
            zeros((1,), "float32", stream=stream))


register_probe(OP, ("ACL_INT8", "ACL_INT4", "ACL_INT32", "ACL_HIFLOAT8", "ACL_FLOAT8_E4M3FN", "ACL_FLOAT8_E5M2",
                    "ACL_FLOAT16"), _probe)
