"""Shared harness of the aclnnGroupedDynamicMxQuant[V2] tests (this module holds no tests).

Everything goes through pyaclnn.capi, as a C caller would: device buffers pre-filled with a
sentinel byte, aclTensors over them (contiguous or strided views), phase 1, phase 2, stream sync,
then the raw storage bytes back. Expected values come from the independent NumPy reference
(tests/reference/grouped_dynamic_mx_quant.py), never from the C code.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

import ml_dtypes
import numpy as np
from helpers import contiguous_strides, create_tensor, dev_free, dev_malloc, from_device, to_device
from reference.grouped_dynamic_mx_quant import dst_format, mxscale_row_count

from pyaclnn import capi, dtypes
from pyaclnn.errors import recent_error_message

SENTINEL = 0xA5
DST_NAMES = ("float8_e4m3fn", "float8_e5m2", "float4_e2m1", "float4_e1m2")


def bits_of(acl_dtype: int) -> int:
    try:
        return dtypes.bit_width(acl_dtype)
    except (KeyError, ValueError):
        return 8


@dataclass
class Operand:
    """A device buffer of `storage` bytes plus an aclTensor viewing it.

    shape / strides / offset are in elements (4-bit elements for FP4)."""
    acl: int
    shape: tuple
    strides: tuple
    offset: int = 0
    storage: np.ndarray = None          # uint8 initial bytes of the whole buffer
    ptr: int = 0
    handle: int = 0

    def create(self) -> "Operand":
        self.ptr = to_device(self.storage) if self.storage.size else dev_malloc(1)
        self.handle = create_tensor(list(self.shape), self.acl, self.ptr, strides=list(self.strides),
                                    offset=self.offset,
                                    storage_shape=[max(1, self.storage.size * 8 // bits_of(self.acl))])
        return self

    def read(self) -> np.ndarray:
        return from_device(self.ptr, self.storage.shape, np.uint8)

    def close(self) -> None:
        if self.handle:
            capi.aclDestroyTensor(self.handle)
            self.handle = 0
        if self.ptr:
            dev_free(self.ptr)
            self.ptr = 0


def operand(acl: int, shape, data: np.ndarray | None = None, *, step: int = 1, offset: int = 0,
            fill: int = SENTINEL) -> Operand:
    """A view of `shape` whose elements sit every `step` elements after `offset` (row-major order),
    in a buffer pre-filled with `fill`; `data` (raw bytes / uint8 or a typed array of the logical
    shape) is written into the viewed elements. step 1 = contiguous."""
    shape = tuple(int(d) for d in shape)
    strides = tuple(s * step for s in contiguous_strides(shape))
    numel = int(np.prod(shape)) if shape else 1
    span = offset + (numel - 1) * step + 1 if numel else offset
    bits = bits_of(acl)
    storage = np.full(max(1, -(-span * bits // 8)), fill, np.uint8)
    if data is not None and numel:
        data = np.ascontiguousarray(data)
        if bits == 4:   # nibbles given one per byte
            nibbles = data.reshape(-1).astype(np.uint8) & 0xF
            index = offset + np.arange(numel) * step
            for value, pos in zip(nibbles, index):
                byte = storage[pos // 2]
                storage[pos // 2] = (byte & 0xF0) | value if pos % 2 == 0 else (byte & 0x0F) | (value << 4)
        else:
            width = bits // 8
            raw = data.reshape(-1).view(np.uint8).reshape(numel, width)
            index = (offset + np.arange(numel) * step) * width
            for b in range(width):
                storage[index + b] = raw[:, b]
    return Operand(acl, shape, strides, offset, storage)


def view_bytes(op: Operand, raw: np.ndarray, step: int = 1) -> np.ndarray:
    """The bytes of the viewed elements (byte-wide dtypes) from the storage bytes `raw`."""
    numel = int(np.prod(op.shape))
    width = bits_of(op.acl) // 8
    index = (op.offset + np.arange(numel) * step) * width
    return np.stack([raw[index + b] for b in range(width)], axis=-1).reshape(op.shape + ((width,) if width > 1 else ()))


@dataclass
class Outcome:
    status: int                       # phase 1
    workspace_size: int = 0
    launch: int | None = None         # phase 2 (None if not run)
    sync: int | None = None           # aclrtSynchronizeStream after phase 2
    message: str | None = None        # aclGetRecentErrMsg after phase 1 (or after sync)
    outputs: dict = field(default_factory=dict)   # name -> storage bytes after the run


def call(stream, x: Operand | None, group_index: Operand | None, y: Operand | None,
         mxscale: Operand | None, *, round_mode: str | None = "rint", dst_type: int = 36,
         blocksize: int = 32, scale_alg: int = 0, dst_type_max: float = 0.0, version: int = 2,
         run: bool = True, workspace_size_ptr: bool = True, executor_ptr: bool = True) -> Outcome:
    """Phase 1 (and, when it succeeds and `run`, phase 2 + sync) with these operands; the operands
    must have been .create()d. Reads back y and mxscale storage."""
    recent_error_message()
    handles = [o.handle if o is not None else None for o in (x, group_index, y, mxscale)]
    ws, executor = ctypes.c_uint64(12345), ctypes.c_void_p()
    rm = round_mode.encode() if isinstance(round_mode, str) else round_mode
    ws_arg = ctypes.byref(ws) if workspace_size_ptr else None
    ex_arg = ctypes.byref(executor) if executor_ptr else None
    if version == 1:
        status = capi.aclnnGroupedDynamicMxQuantGetWorkspaceSize(
            handles[0], handles[1], rm, dst_type, blocksize, handles[2], handles[3], ws_arg, ex_arg)
    else:
        status = capi.aclnnGroupedDynamicMxQuantV2GetWorkspaceSize(
            handles[0], handles[1], rm, dst_type, blocksize, scale_alg, dst_type_max, handles[2],
            handles[3], ws_arg, ex_arg)
    outcome = Outcome(status, ws.value)
    outcome.message = recent_error_message()
    if status != 0 or not run:
        if status == 0 and executor.value:
            capi.aclDestroyAclOpExecutor(executor)
        return outcome
    workspace = dev_malloc(ws.value) if ws.value else None
    try:
        phase2 = capi.aclnnGroupedDynamicMxQuant if version == 1 else capi.aclnnGroupedDynamicMxQuantV2
        outcome.launch = phase2(workspace, ws.value, executor, stream)
        outcome.sync = capi.aclrtSynchronizeStream(stream)
        message = recent_error_message()
        if message:
            outcome.message = message
    finally:
        if workspace:
            dev_free(workspace)
    for name, op in (("y", y), ("mxscale", mxscale)):
        if op is not None:
            outcome.outputs[name] = op.read()
    return outcome


# ------------------------------------------------------------------------------------------------
# One quantisation, end to end
# ------------------------------------------------------------------------------------------------

def x_acl_of(x: np.ndarray) -> int:
    return capi.ACL_BF16 if x.dtype == ml_dtypes.bfloat16 else capi.ACL_FLOAT16


@dataclass
class Quantized:
    outcome: Outcome
    y: np.ndarray           # bytes as the reference returns them: [m, n] FP8 or [m, n/2] FP4
    mxscale: np.ndarray     # [m // 64 + g, n, 2]


def quantize(stream, x: np.ndarray, group_index, *, dst_type="float8_e4m3fn", round_mode="rint",
             scale_alg=0, dst_type_max=0.0, version=2, x_step=1, y_step=1, y_offset=0,
             sentinel=SENTINEL, fill_mxscale=None) -> Quantized:
    """Run the op on a host array; outputs pre-filled with `sentinel` (mxscale with fill_mxscale
    or the sentinel). x_step / y_step > 1 make strided views (FP8 y only); y_offset shifts y's view
    (in elements, nibbles for FP4)."""
    fmt = dst_format(dst_type)
    gi = np.asarray(group_index, dtype=np.int32)
    m, n = x.shape
    rows = mxscale_row_count(m, gi.size)
    ops = [operand(x_acl_of(x), (m, n), x.view(np.uint16), step=x_step),
           operand(capi.ACL_INT32, (gi.size,), gi),
           operand(fmt.acl, (m, n), None, step=y_step, offset=y_offset, fill=sentinel),
           operand(capi.ACL_FLOAT8_E8M0, (rows, n, 2), None,
                   fill=sentinel if fill_mxscale is None else fill_mxscale)]
    try:
        for op in ops:
            op.create()
        outcome = call(stream, *ops, round_mode=round_mode, dst_type=fmt.acl, scale_alg=scale_alg,
                       dst_type_max=dst_type_max, version=version)
        y_raw = outcome.outputs.get("y")
        if y_raw is None:
            y = None
        elif fmt.is_fp4:
            if y_offset % 2 == 0:
                y = y_raw[y_offset // 2:y_offset // 2 + m * n // 2].reshape(m, n // 2)
            else:   # re-pack from the nibble positions
                nib = np.empty(m * n, np.uint8)
                pos = y_offset + np.arange(m * n)
                nib[:] = (y_raw[pos // 2] >> (4 * (pos % 2))) & 0xF
                y = (nib[0::2] | (nib[1::2] << 4)).reshape(m, n // 2)
        else:
            y = view_bytes(ops[2], y_raw, y_step)
        mx = outcome.outputs.get("mxscale")
        return Quantized(outcome, y, None if mx is None else mx.reshape(rows, n, 2))
    finally:
        for op in ops:
            op.close()
