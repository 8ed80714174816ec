"""One sample call of each emulated operator family, for ``python -m pyaclnn demo``.

Each entry names a family of the operator catalog (``python -m pyaclnn info --ops`` lists every operator)
and runs one of its operators through :mod:`pyaclnn.ops` on small NumPy inputs, returning one line that
shows what went in and what came out. The three seed operators have their own, fuller demos in
``__main__``; ``tests/test_demo.py`` checks that every family of the catalog is demonstrated.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from . import dtypes, ops
from .ops import Scalar

F32 = np.float32


def _fmt(a) -> str:
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return np.array2string(a.astype(np.float64), precision=4, separator=", ", suppress_small=True)
    return np.array2string(a, separator=", ")


def _activation() -> str:
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0], F32)
    return f"Gelu {_fmt(x)} -> {_fmt(ops.Gelu(x, np.empty_like(x)))}"


def _attention() -> str:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((1, 2, 4, 8)).astype(np.float16) for _ in range(3))   # BNSD
    smax, ssum = np.empty((1, 2, 4, 8), F32), np.empty((1, 2, 4, 8), F32)
    out = ops.FlashAttentionScore(q, k, v, None, None, None, None, None, 8 ** -0.5, 1.0, 2 ** 31 - 1, 2 ** 31 - 1,
                                  2, "BNSD", 0, 0, smax, ssum, None, np.empty_like(q))[-1]
    return f"FlashAttentionScore BNSD [1, 2, 4, 8] fp16 -> out[0, 0, 0, :4] {_fmt(out[0, 0, 0, :4])}"


def _compare() -> str:
    a, b = np.array([1.0, 2.0, 3.0], F32), np.array([1.0, 2.5, 3.0], F32)
    return f"Equal {_fmt(a)} == {_fmt(b)} -> {bool(ops.Equal(a, b, np.zeros(1, np.bool_))[0])}"


def _conv() -> str:
    x = np.arange(16, dtype=F32).reshape(1, 1, 4, 4)
    w = np.ones((1, 1, 2, 2), F32)
    y = ops.Convolution(x, w, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, np.empty((1, 1, 3, 3), F32), 0)
    return f"Convolution 4x4 * ones(2x2) -> {_fmt(y[0, 0])}".replace("\n", "")


def _conversion() -> str:
    x = np.array([1.4, 2.5, -3.7], F32)
    y = ops.Cast(x, dtypes.from_numpy(np.int32), np.empty(3, np.int32))
    return f"Cast float32 {_fmt(x)} -> int32 {_fmt(y)}"


def _foreach() -> str:
    xs = [np.array([1.0, 4.0], F32), np.array([9.0, 16.0, 25.0], F32)]
    ys = ops.ForeachSqrt(xs, [np.empty_like(x) for x in xs])
    return f"ForeachSqrt [{', '.join(_fmt(x) for x in xs)}] -> [{', '.join(_fmt(y) for y in ys)}]"


def _grid_sample() -> str:
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], F32)                    # [N, C, H, W]
    grid = np.zeros((1, 1, 1, 2), F32)                                  # one point: the centre
    y = ops.GridSampler2D(x, grid, 0, 0, False, np.empty((1, 1, 1, 1), F32))   # bilinear, zeros
    return f"GridSampler2D bilinear at the centre of {_fmt(x[0, 0])} -> {_fmt(y.reshape(-1))}".replace("\n", "")


def _index() -> str:
    x = np.array([[1.0, 2.0], [3.0, 4.0]], F32)
    idx = np.array([[1, 0], [0, 0]], np.int64)
    y = ops.Gather(x, 1, idx, np.empty((2, 2), F32))
    return f"Gather dim 1 of {_fmt(x)} at {_fmt(idx)} -> {_fmt(y)}".replace("\n", "")


def _logical() -> str:
    a, b = np.array([True, True, False]), np.array([True, False, False])
    return f"LogicalAnd {_fmt(a)} & {_fmt(b)} -> {_fmt(ops.LogicalAnd(a, b, np.empty(3, np.bool_)))}"


def _loss() -> str:
    x, t = np.array([1.0, 2.0, 3.0], F32), np.array([1.5, 2.0, 2.0], F32)
    return f"MseLoss mean {_fmt(x)} vs {_fmt(t)} -> {float(ops.MseLoss(x, t, 1, np.empty((), F32))):.6g}"


def _math() -> str:
    a, b = np.array([1.5, -2.0, 3.25], F32), np.array([0.5, 0.5, 0.75], F32)
    return f"Add {_fmt(a)} + 2 * {_fmt(b)} -> {_fmt(ops.Add(a, b, Scalar(2.0, 'float32'), np.empty_like(a)))}"


def _matmul() -> str:
    a = np.array([[1.0, 2.0], [3.0, 4.0]], F32)
    return f"Mm {_fmt(a)} @ itself -> {_fmt(ops.Mm(a, a, np.empty((2, 2), F32), 0))}".replace("\n", "")


def _moe() -> str:
    x = np.log(np.array([[1.0, 2.0, 5.0, 2.0]], F32))                  # softmax: [0.1, 0.2, 0.5, 0.2]
    y, idx, _ = ops.MoeGatingTopKSoftmax(x, None, 2, np.empty((1, 2), F32), np.empty((1, 2), np.int32),
                                          np.empty((1, 2), np.int32))
    return f"MoeGatingTopKSoftmax k=2 of softmax(log [1, 2, 5, 2]) -> experts {_fmt(idx)} weights {_fmt(y)}"


def _quant() -> str:
    x = np.array([[0.5, -1.0, 2.0, -4.0]], np.float16)
    y, scale = ops.DynamicQuant(x, None, np.empty((1, 4), np.int8), np.empty(1, F32))
    return f"DynamicQuant {_fmt(x)} -> int8 {_fmt(y)} scale {_fmt(scale)}"


def _norm() -> str:
    x = np.array([[1.0, 2.0, 3.0, 4.0]], F32)
    y = ops.LayerNorm(x, [4], None, None, 1e-5, np.empty_like(x), None, None)
    y = y[0] if isinstance(y, tuple) else y
    return f"LayerNorm {_fmt(x)} -> {_fmt(y)}"


def _optim() -> str:
    var, m, v = np.ones(3, F32), np.zeros(3, F32), np.zeros(3, F32)
    grad, step = np.array([0.1, -0.2, 0.3], F32), np.array([0.0], F32)   # steps taken before this one
    ops.ApplyAdamWV2(var, m, v, None, grad, step, 0.1, 0.9, 0.999, 0.01, 1e-8, False, False)
    return f"ApplyAdamWV2 first step, lr 0.1, weight decay 0.01, grad {_fmt(grad)}: var 1 -> {_fmt(var)}"


def _pad() -> str:
    x = np.array([[1.0, 2.0]], F32)
    y = ops.ConstantPadNd(x, [1, 1], Scalar(0.0, "float32"), np.empty((1, 4), F32))
    return f"ConstantPadNd {_fmt(x)} by 1 each side -> {_fmt(y)}"


def _pool() -> str:
    x = np.arange(16, dtype=F32).reshape(1, 1, 4, 4)
    y = ops.AdaptiveAvgPool2d(x, [2, 2], np.empty((1, 1, 2, 2), F32))
    return f"AdaptiveAvgPool2d 4x4 -> 2x2 {_fmt(y[0, 0])}".replace("\n", "")


def _posembedding() -> str:
    x = np.array([[[[1.0, 2.0, 3.0, 4.0]]]], F32)                      # [B, S, N, D]
    cos, sin = np.zeros((1, 1, 1, 4), F32), np.ones((1, 1, 1, 4), F32)  # a quarter turn
    y = ops.RotaryPositionEmbedding(x, cos, sin, 0, np.empty_like(x))   # mode 0: rotate_half
    return f"RotaryPositionEmbedding half, cos 0 / sin 1: {_fmt(x[0, 0, 0])} -> {_fmt(y[0, 0, 0])}"


def _random() -> str:
    x = np.zeros(4, F32)
    ops.InplaceUniform(x, 0.0, 1.0, 42, 0)
    return f"InplaceUniform [0, 1), seed 42 -> {_fmt(x)}"


def _reduce() -> str:
    x = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], F32)
    y = ops.ReduceSum(x, [1], False, dtypes.from_numpy(F32), np.empty(2, F32))
    return f"ReduceSum dim 1 of {_fmt(x)} -> {_fmt(y)}".replace("\n", "")


def _sort() -> str:
    x = np.array([3.0, 1.0, 2.0], F32)
    values, indices = ops.Sort(x, True, 0, False, np.empty_like(x), np.empty(3, np.int64))
    return f"Sort {_fmt(x)} -> values {_fmt(values)}, indices {_fmt(indices)}"


def _upsample() -> str:
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]], F32)
    y = ops.UpsampleNearest2d(x, [4, 4], np.empty((1, 1, 4, 4), F32))
    return f"UpsampleNearest2d 2x2 -> 4x4, first row {_fmt(y[0, 0, 0])}"


# family (as the catalog names it) -> the sample call
FAMILIES: dict[str, Callable[[], str]] = {
    "activation": _activation, "attention": _attention, "compare": _compare, "conv": _conv,
    "conversion": _conversion, "foreach": _foreach, "grid_sample": _grid_sample, "index": _index,
    "logical": _logical, "loss": _loss, "math": _math, "matmul": _matmul, "moe": _moe, "norm": _norm, "optim": _optim,
    "pad": _pad, "pool": _pool, "posembedding": _posembedding, "quant": _quant, "random": _random, "reduce": _reduce, "sort": _sort,
    "upsample": _upsample,
}
