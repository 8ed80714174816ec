"""Helpers for the friendly per-operator functions.

Host data crosses at one place, :mod:`pyaclnn._boundary`: :func:`begin` gives the call's
:class:`~pyaclnn._boundary.Crossing`, which turns the inputs into Tensors, allocates the outputs
and gives the results back in the caller's kind (numpy in -> numpy out, the call waits; torch in ->
torch out; pyaclnn tensors in -> pyaclnn tensors out, asynchronous).  The function bodies between
see Tensors only.
"""
from __future__ import annotations

from typing import Any

from .._exceptions import InvalidArgumentError
from .._boundary import (NUMPY, TENSOR, TORCH, Crossing, begin, is_torch_tensor, kind_of,  # noqa: F401
                         stream_for)
from ..tensor import as_acl_dtype


_choices: dict = {}     # (param, value, id(accepted)) -> aclDataType, for hashable values


def choice(param: str, value: Any, accepted: dict[str, str]) -> int:
    """The aclDataType of a dtype argument that must be one of ``accepted`` (name -> note); the
    error lists the accepted names."""
    try:
        key = (param, value, id(accepted))
        acl = _choices.get(key)
    except TypeError:       # an unhashable value: no memo
        key = acl = None
    if acl is not None:
        return acl
    acl = _choice(param, value, accepted)
    if key is not None and len(_choices) < 1024:
        _choices[key] = acl
    return acl


def _choice(param: str, value: Any, accepted: dict[str, str]) -> int:
    names = ", ".join(f"{n}{' (' + note + ')' if note else ''}" for n, note in accepted.items())
    try:
        acl = as_acl_dtype(value)
    except (ValueError, TypeError):
        raise InvalidArgumentError(f"unknown {param} {value!r}; accepted: {names}") from None
    if acl not in {as_acl_dtype(n) for n in accepted}:
        from .. import dtypes
        raise InvalidArgumentError(f"{param} {dtypes.info(acl).name.removeprefix('ACL_')} is not accepted here; "
                                   f"accepted: {names}")
    return acl


__all__ = ["begin", "choice", "Crossing", "is_torch_tensor", "kind_of", "stream_for", "NUMPY", "TORCH",
           "TENSOR"]
