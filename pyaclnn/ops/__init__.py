"""Call any aclnn operator of the registry, one-shot or prepared, plus friendly per-operator functions.

    import numpy as np, pyaclnn
    from pyaclnn import ops

    scale, tracker = ops.amp_update_scale(np.float32(65536), np.int32(900), np.float32(0))  # friendly
    out = ops.call("AmpUpdateScale", s, t, f, 2.0, 0.5, 1000, new_s, new_t)              # generic
    out = ops.AmpUpdateScale(s, t, f, 2.0, 0.5, 1000, new_s, new_t)                       # same
    plan = ops.prepare("AmpUpdateScale", s, t, f, 2.0, 0.5, 1000, new_s, new_t)           # hot loops
    plan(s2, t2, f2, new_s2, new_t2)
    p = ops.plan("Add", x, y, 1.0, out)        # a plan that owns its outputs: new ones per execute
    (z,) = p.execute(x2, y2)

Every operator declared by the registry (:mod:`pyaclnn.signatures`: pyaclnn's own headers plus
those of the installed toolkit and of :func:`load_headers`) is reachable by its name with or without
the ``aclnn`` prefix.  Failures raise :class:`~pyaclnn.errors.AclError`; an operator the toolkit
lacks raises :class:`OperatorNotFoundError`, which names the libraries searched and the SoC.
"""
from __future__ import annotations

from typing import Any as _Any   # not `Any`: ops.Any is the operator aclnnAny

from .._exceptions import NoAttributeError
from ..runtime import Stream
from ..runtime import current_stream as _current_stream
from ._errors import OperatorNotFoundError
from ._launcher import OpFunction, function
from ._marshal import Scalar
from ._prepared import Plan, PreparedCall, owning_plan
from ._registry import available, load_headers, names, signature, signatures
from ._support import register_probe, support_matrix, support_matrix_markdown

# Friendly functions, one module per operator family (other operators add theirs here).
from ._add_rms_norm_dynamic_quant import add_rms_norm_dynamic_quant
from ._amp_update_scale import amp_update_scale
from ._decoder_ops import cat, embedding, index_select, matmul, mean, reduce_sum, softmax, stack
from ._grouped_dynamic_mx_quant import (grouped_dynamic_mx_quant, grouped_mxscale_written,
                                        unpack_float4_e1m2)
from ._select_ops import masked_select, nonzero_v2

__all__ = [
    "call", "prepare", "plan", "get", "OpFunction", "PreparedCall", "Plan", "Scalar", "OperatorNotFoundError",
    "load_headers", "names", "available",
    "signature", "signatures", "support_matrix", "support_matrix_markdown", "register_probe",
    "amp_update_scale", "add_rms_norm_dynamic_quant",
    "grouped_dynamic_mx_quant", "grouped_mxscale_written", "unpack_float4_e1m2",
    "matmul", "softmax", "reduce_sum", "mean", "cat", "stack", "index_select", "embedding",
    "masked_select", "nonzero_v2",
]


def get(op: str) -> OpFunction:
    """The launcher of an operator (``"AmpUpdateScale"``, ``"aclnnAmpUpdateScale"`` or
    ``"amp_update_scale"``); raises OperatorNotFoundError when the registry does not declare it."""
    return function(op)


def call(op: str, *args: _Any, stream: Stream | None = None, **kwargs: _Any) -> _Any:
    """Run operator ``op`` once: phase 1, workspace from the stream's pool, phase 2 on ``stream``.

    See :class:`OpFunction` for how arguments are passed.  Returns the output arguments.
    """
    return function(op)(*args, stream=stream, **kwargs)


def prepare(op: str, *args: _Any, stream: Stream | None = None, **kwargs: _Any) -> Plan:
    """A plan of ``op`` that runs on these tensors (see :class:`Plan`): ``plan()`` launches again,
    ``plan(*tensors)`` or ``plan(name=tensor)`` on new tensors of the same layouts (in-place and out=
    operators; :func:`plan` makes one that owns its outputs)."""
    return function(op).prepare(*args, stream=stream, **kwargs)


def plan(op: str, *args: _Any, stream: Stream | None = None, **kwargs: _Any) -> Plan:
    """An explicit plan of ``op`` for these layouts and attributes (see :class:`Plan`): it owns its
    descriptors, workspace and outputs, and ``plan.execute(*inputs)`` returns new outputs each time.
    The outputs given here (the operator's last tensor parameters: new pyaclnn tensors from
    :func:`pyaclnn.empty`) set their layouts; inputs may be numpy arrays or tensors (uploaded once,
    for phase 1), later executions take pyaclnn tensors of the same layouts."""
    fn = function(op)
    if kwargs or len(args) != fn._n:
        args = fn.bind_args(args, kwargs)
    return owning_plan(fn, list(args), stream if stream is not None else _current_stream())


def __getattr__(name: str) -> OpFunction:
    # pyaclnn.ops.AmpUpdateScale / pyaclnn.ops.aclnnAmpUpdateScale. OperatorNotFoundError is an
    # AttributeError, so hasattr() answers False for operators this toolkit lacks: those no header
    # declares and those declared (e.g. by load_headers) that no loaded library exports.
    if name.startswith("aclnn") or name[:1].isupper():
        fn = function(name)
        fn.bind()
        return fn
    raise NoAttributeError(f"module 'pyaclnn.ops' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted((set(globals()) - {"annotations"}) | set(available()))
