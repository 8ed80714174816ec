"""Friendly functions for the indexing, matmul, reduction, softmax and shape operators
(docs/decoder_ops.md): inputs in, the output allocated with the shape the operator produces, result
out in the caller's flavour (numpy -> numpy, pyaclnn Tensor -> Tensor on the stream, torch -> torch).
Every other argument combination stays reachable through the generic launchers (``ops.Matmul`` ...)."""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._exceptions import IndexOutOfRangeError, InvalidArgumentError
from ..runtime import Stream
from ..tensor import as_acl_dtype
from . import _friendly as F
from ._launcher import function


def _run(op: str, inputs: Sequence[Any], make_args, shape: Sequence[int], dtype: Any, stream: Stream | None) -> Any:
    """Moves `inputs` to the device, allocates the output (`shape`, `dtype`; None: the first input's),
    calls `op` with make_args(device inputs, output) and returns the output in the callers' flavour."""
    crossing = F.begin(stream, *inputs)
    dev = [crossing.tensor(x) for x in inputs]
    out, ret = crossing.new_output(tuple(shape), dev[0].acl_dtype if dtype is None else as_acl_dtype(dtype),
                                   inputs[0])
    function(op)(*make_args(dev, out), stream=crossing.stream)
    return crossing.results([ret])


def _wrap(dim: int, rank: int) -> int:
    r = max(rank, 1)
    if not -r <= dim < r:
        raise IndexOutOfRangeError(f"dim {dim} is out of range for a tensor of {rank} dimensions")
    return dim % r


def matmul(a: Any, b: Any, *, cube_math_type: int = 0, out_dtype: Any = None, stream: Stream | None = None) -> Any:
    """``a @ b`` with torch.matmul's shapes (aclnnMatmul): 1-D operands, broadcast batch dims.

    FLOAT / FLOAT16 / BF16 operands of one dtype; the emulator accumulates in fp32 (the cube's
    accumulator for fp16/bf16). ``out_dtype`` defaults to the operands' (FLOAT is also accepted for
    half inputs); ``cube_math_type``: 0 KEEP_DTYPE, 1 ALLOW_FP32_DOWN_PRECISION, 2 USE_FP16, 3 USE_HF32.
    """
    sa, sb = tuple(np.shape(a) if not hasattr(a, "shape") else a.shape), tuple(b.shape if hasattr(b, "shape")
                                                                              else np.shape(b))
    if not sa or not sb:
        raise InvalidArgumentError(f"matmul needs operands of at least 1 dimension, got shapes {sa} and {sb}")
    shape = np.broadcast_shapes(sa[:-2], sb[:-2]) + ((sa[-2],) if len(sa) > 1 else ()) + \
        ((sb[-1],) if len(sb) > 1 else ())
    return _run("aclnnMatmul", [a, b], lambda d, o: (d[0], d[1], o, int(cube_math_type)), shape, out_dtype, stream)


def softmax(x: Any, dim: int = -1, *, stream: Stream | None = None) -> Any:
    """softmax(x) along ``dim`` (aclnnSoftmax), in x's dtype."""
    return _run("aclnnSoftmax", [x], lambda d, o: (d[0], int(dim), o), tuple(x.shape), None, stream)


def _reduced(shape: tuple, dims: Sequence[int], keepdim: bool) -> tuple:
    ds = {_wrap(d, len(shape)) for d in dims} if len(dims) else set(range(len(shape)))
    return tuple(1 if i in ds else s for i, s in enumerate(shape) if keepdim or i not in ds)


def reduce_sum(x: Any, dims: Sequence[int] = (), keepdim: bool = False, dtype: Any = None, *,
               stream: Stream | None = None) -> Any:
    """Sum over ``dims`` (all when empty) computed in ``dtype`` (default: x's), aclnnReduceSum."""
    shape = _reduced(tuple(x.shape), list(dims), keepdim)
    return _run("aclnnReduceSum", [x], lambda d, o: (d[0], list(dims), bool(keepdim), o.acl_dtype, o), shape,
                dtype, stream)


def mean(x: Any, dims: Sequence[int] = (), keepdim: bool = False, dtype: Any = None, *,
         stream: Stream | None = None) -> Any:
    """Mean over ``dims`` (all when empty) computed in ``dtype`` (default: x's), aclnnMean."""
    shape = _reduced(tuple(x.shape), list(dims), keepdim)
    return _run("aclnnMean", [x], lambda d, o: (d[0], list(dims), bool(keepdim), o.acl_dtype, o), shape, dtype,
                stream)


def cat(tensors: Sequence[Any], dim: int = 0, *, dtype: Any = None, stream: Stream | None = None) -> Any:
    """Join ``tensors`` along ``dim`` (aclnnCat); ``dtype`` defaults to the first tensor's (the operator
    casts each input to it, as the NPU does after promotion)."""
    shapes = [tuple(t.shape) for t in tensors]
    d = _wrap(dim, len(shapes[0]))
    shape = list(shapes[0])
    shape[d] = sum(s[d] for s in shapes)
    return _run("aclnnCat", list(tensors), lambda dv, o: (dv, int(dim), o), shape, dtype, stream)


def stack(tensors: Sequence[Any], dim: int = 0, *, dtype: Any = None, stream: Stream | None = None) -> Any:
    """Stack ``tensors`` (all of one shape) along a new ``dim`` (aclnnStack)."""
    shape = list(tensors[0].shape)
    shape.insert(_wrap(dim, len(shape) + 1), len(tensors))
    return _run("aclnnStack", list(tensors), lambda dv, o: (dv, int(dim), o), shape, dtype, stream)


def index_select(x: Any, dim: int, index: Any, *, stream: Stream | None = None) -> Any:
    """Entries of ``x`` along ``dim`` at the 1-D integer ``index`` (aclnnIndexSelect)."""
    shape = list(x.shape)
    if shape:
        shape[_wrap(dim, len(shape))] = int(np.prod(np.shape(index) if not hasattr(index, "shape") else index.shape))
    return _run("aclnnIndexSelect", [x, index], lambda d, o: (d[0], int(dim), d[1], o), shape, None, stream)


def embedding(weight: Any, indices: Any, *, stream: Stream | None = None) -> Any:
    """Rows of ``weight`` at the integer ``indices`` (aclnnEmbedding): shape indices.shape + weight.shape[1:]."""
    shape = tuple(indices.shape) + tuple(weight.shape[1:])
    return _run("aclnnEmbedding", [weight, indices], lambda d, o: (d[0], d[1], o), shape, None, stream)


__all__ = ["matmul", "softmax", "reduce_sum", "mean", "cat", "stack", "index_select", "embedding"]
