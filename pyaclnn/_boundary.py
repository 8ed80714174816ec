"""The host-data boundary: numpy arrays, torch tensors, lists and numbers become :class:`Tensor`s on
the way in, and results go back in the caller's kind on the way out.  Nothing past this module
(launcher, prepared calls, pools, the friendly functions' bodies) handles anything but Tensors.

One :class:`Crossing` per call:

    crossing = Crossing(stream)
    x = crossing.tensor(array)                    # a device copy of a numpy array (kept for the call)
    out = crossing.tensor(out_array, output=True)  # ... copied back into out_array by finish()
    ...launch...
    crossing.finish(ok=True)                       # copies back, waits where the host reads at once

* numpy arrays / numpy scalars keep their dtype; Python numbers and (nested) lists get torch's
  defaults (:func:`pyaclnn.tensor.host_array`); both are copied into a temporary device tensor on
  the call's stream;
* torch tensors are wrapped without a copy (:func:`pyaclnn.torch.from_torch`); a host-memory
  (CPU) torch tensor -- the emulator's case -- makes the call wait for its stream, since torch may
  read or write it as soon as the call returns.

What it costs, and the memory it takes:

* the device tensors the boundary makes -- friendly outputs, copies of numpy inputs -- are new for
  each call, from the stream's memory pool, and belong to the call (and, for outputs, to the caller)
  alone: nothing is handed out again while anyone may hold it.  The pool recycles a block only once
  its tensor is gone, and only for work queued later on the same stream;
* on the emulator, whose device memory is host memory, large numpy arrays are not copied: inputs are
  used in place and friendly outputs are numpy arrays the kernel writes directly (the host memory is
  registered with the emulator while used; such a call waits for its stream before it returns, since
  the caller owns the arrays).  A numpy call then takes about its outputs' bytes, nothing more.

The friendly functions also ask the boundary for their outputs (:meth:`Crossing.new_output`) and
for the results in the caller's kind (:meth:`Crossing.results`): ``"numpy"`` inputs give numpy
results (the call waits), ``"torch"`` give torch tensors, ``"tensor"`` give pyaclnn tensors
(asynchronous).
"""
from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from ._exceptions import ArgumentTypeError, InvalidArgumentError
from . import dtypes
from .errors import AclError, recent_error_message
from .runtime import Stream, current_stream, is_stub
from .tensor import Tensor, as_acl_dtype, empty, host_array, wrap_pointer

NUMPY, TORCH, TENSOR = "numpy", "torch", "tensor"


def is_torch_tensor(value: Any) -> bool:
    torch = sys.modules.get("torch")      # never imports torch: a torch tensor implies it is loaded
    return torch is not None and isinstance(value, torch.Tensor)


def kind_of(*values: Any) -> str:
    """The caller's kind: ``"torch"`` if any value is a torch tensor, else ``"tensor"`` if any is a
    pyaclnn Tensor, else ``"numpy"``."""
    tensor = False
    for v in values:
        if v is None:
            continue
        c = v.__class__
        if c is Tensor:
            tensor = True
        elif c is not np.ndarray and is_torch_tensor(v):
            return TORCH
    return TENSOR if tensor else NUMPY


def stream_for(values, default=None) -> Stream:
    """The stream of a call: ``default`` if given, else torch_npu's current stream when an NPU torch
    tensor is among ``values``, else the thread's current stream."""
    if default is not None:
        return default
    if "torch_npu" in sys.modules:
        from ._torch_out import stream_for as torch_stream
        s = torch_stream(values)
        if s is not None:
            return s
    return current_stream()


# Host arrays at least this large are used in place (emulator): below it a copy costs less than
# registering the array's memory with the emulator and waiting for the stream.
_ZERO_COPY_MIN = (1 << 20) + 1
_stub: list = []                        # [is_stub()] once known (the backend never changes)


def _in_place(nbytes: int, info) -> bool:
    """May a host array of ``info``'s type and ``nbytes`` be used by kernels in place?"""
    if nbytes < _ZERO_COPY_MIN or info.packed or info.carrier:
        return False
    if not _stub:
        _stub.append(is_stub())
    return _stub[0]


def _from_torch(value):
    from .torch import from_torch
    return from_torch(value)


class Crossing:
    """What one call brought across the boundary, and what must happen on its way back."""
    __slots__ = ("stream", "kind", "_keep", "_copies", "sync", "originals")

    def __init__(self, stream: Stream, kind: str = NUMPY):
        self.stream = stream
        self.kind = kind
        self._keep: list = []           # temporary device tensors: alive until finish()
        self._copies: list = []         # (device tensor, numpy array) outputs to copy back
        self.sync = False               # a host-memory torch tensor was used in place
        self.originals: dict = {}       # key -> the host object given (results return it)

    # -- in ---------------------------------------------------------------------------------------
    def tensor(self, value: Any, *, output: bool = False, name: str = "tensor", key: Any = None) -> Tensor | None:
        """The Tensor for a tensor argument (None stays None; Tensors pass through)."""
        if value is None or value.__class__ is Tensor:
            return value
        if key is not None:
            self.originals[key] = value
        if is_torch_tensor(value):
            if value.device.type == "cpu":
                self.sync = True
            return _from_torch(value)
        if isinstance(value, (list, tuple, int, float, complex)):
            if output:
                raise ArgumentTypeError(f"output {name} cannot be a Python {type(value).__name__}: give a "
                                        f"pyaclnn.Tensor, numpy array or torch tensor to receive the result")
            value = host_array(value)       # Python data: torch's default dtypes (float -> FLOAT)
        if isinstance(value, (np.ndarray, np.generic)):
            if output and isinstance(value, np.ndarray) and not value.flags.writeable:
                raise InvalidArgumentError(f"output {name} is a read-only numpy array")
            t = self._host_copy(value) if output else self._host_input(value)
            self._keep.append(t)
            if output and isinstance(value, np.ndarray):
                self._copies.append((t, value))
            return t
        raise ArgumentTypeError(f"{name} expects a tensor (pyaclnn.Tensor, numpy array, torch tensor, or a Python "
                                f"number / list), got {type(value).__name__}")

    def _host_input(self, array) -> Tensor:
        array = np.asarray(array)
        acl = dtypes.from_numpy(array.dtype)
        info = dtypes.info(acl)
        if array.flags.c_contiguous and _in_place(array.nbytes, info):
            t = self._over_host(array, acl)
            if t is not None:
                return t
        return self._host_copy(array)

    def _over_host(self, array: np.ndarray, acl: int) -> Tensor | None:
        """A tensor over the host array itself (emulator); None when its range cannot be registered
        (it overlaps, without lying inside, host memory registered for another live tensor: e.g.
        two overlapping views of one array), and the caller copies instead."""
        try:
            t = wrap_pointer(array.ctypes.data, array.shape, acl, nbytes=array.nbytes, owner=array,
                             register=True, stream=self.stream)
        except AclError:
            recent_error_message()
            return None
        self.sync = True            # the caller owns the array: the call waits for its stream
        return t

    def _host_copy(self, array) -> Tensor:
        """A device copy of a host array (a new tensor from the stream's pool)."""
        array = np.asarray(array)
        acl = dtypes.from_numpy(array.dtype)
        t = empty(array.shape, acl, stream=self.stream)
        if not array.size:
            return t
        try:
            return t.copy_from(array, self.stream)
        except AclError:
            if not self.sync:       # nothing of this call lies in registered host memory
                raise
            # The array overlaps host memory this call uses in place (a view of an array passed
            # too): the emulator refuses to copy from part of a registered range, so copy from a
            # fresh host copy.
            recent_error_message()
            return t.copy_from(array.copy(), self.stream)

    def tensors(self, values, *, output: bool = False, name: str = "tensor"):
        """A tensor-list argument: each element through :meth:`tensor`."""
        if values is None:
            return None
        return [self.tensor(v, output=output, name=name) for v in values]

    # -- out --------------------------------------------------------------------------------------
    def new_output(self, shape: tuple, dtype: Any, like: Any = None) -> tuple[Tensor, Any]:
        """A new output: (the Tensor the operator writes, what the caller gets back)."""
        if self.kind == TORCH:
            import torch

            device = like.device if like is not None and is_torch_tensor(like) else "cpu"
            t = torch.empty(tuple(shape), dtype=dtypes.to_torch(as_acl_dtype(dtype)), device=device)
            if device == "cpu" or getattr(device, "type", None) == "cpu":
                self.sync = True
            return _from_torch(t), t
        acl = as_acl_dtype(dtype)
        if self.kind == NUMPY:
            info = dtypes.info(acl)
            shape = tuple(shape)
            if info.numpy is not None and _in_place(info.nbytes(math.prod(shape)), info):
                array = np.empty(shape, info.numpy)     # the kernel writes the caller's result
                t = self._over_host(array, acl)
                if t is not None:
                    return t, array
        t = empty(tuple(shape), acl, stream=self.stream)
        return t, t

    def finish(self, ok: bool = True) -> None:
        """After the launch (or its failure): copy numpy outputs back, wait where the host reads
        the memory at once, drop the temporaries."""
        copies, self._copies = self._copies, []
        if ok and (copies or self.sync):
            self.stream.synchronize()
        if ok:
            for t, array in copies:
                array[...] = t.numpy().reshape(array.shape)
        self._keep.clear()

    def results(self, outputs: list) -> Any:
        """The outputs in the caller's kind (numpy ones after the stream has run); one or a tuple."""
        if self.kind == NUMPY:
            self.stream.synchronize()
            outputs = [o.numpy() if o.__class__ is Tensor else o for o in outputs]
        elif self.sync:
            self.stream.synchronize()       # host memory (emulator): torch reads it right away
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def to_tensors(values, outputs, stream: Stream, names=None) -> tuple[list, Crossing]:
    """Every tensor argument of ``values`` as a Tensor (``outputs[i]``: True for an output,
    None for a non-tensor argument, "list" / "out-list" for a tensor list); returns the new
    argument list and the :class:`Crossing` to finish after the launch."""
    crossing = Crossing(stream)
    out = list(values)
    try:
        for i, role in enumerate(outputs):
            if role is None:
                continue
            name = names[i] if names is not None else "tensor"
            v = out[i]
            if role == "list" or role == "out-list":
                out[i] = crossing.tensors(v, output=role == "out-list", name=name)
            else:
                out[i] = crossing.tensor(v, output=role, name=name, key=i)
    except BaseException:
        crossing.finish(ok=False)
        raise
    return out, crossing


def begin(stream: Stream | None, *values: Any) -> Crossing:
    """The crossing of a friendly function called with ``values`` (its stream picked as
    :func:`stream_for` does, its kind as :func:`kind_of`)."""
    return Crossing(stream_for(values, stream), kind_of(*values))


__all__ = ["NUMPY", "TORCH", "TENSOR", "Crossing", "begin", "is_torch_tensor", "kind_of", "stream_for",
           "to_tensors"]
