"""aclnnGroupedDynamicMxQuant(V2): MX quantisation of x [m, n] to FP8 / FP4 with one E8M0 scale per
block of 32 rows of a column, blocks counted from the start of each row group, as a friendly
function on top of the generic launcher (torch_npu's ``npu_grouped_dynamic_mx_quant``).

V2 is used for every call: V1 is V2 with ``scale_alg=0`` and ``dst_type_max=0.0``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes
from ..codecs import decode_float4_e1m2, unpack_nibbles
from ..runtime import Stream
from ..tensor import Tensor, empty, from_numpy, zeros
from . import _friendly as F
from ._launcher import function

OP = "aclnnGroupedDynamicMxQuantV2"
BLOCK_ROWS, CHUNK_ROWS = 32, 64
_DST_TYPES = {dtypes.info(name).acl: name for name in
              ("ACL_FLOAT8_E5M2", "ACL_FLOAT8_E4M3FN", "ACL_FLOAT4_E2M1", "ACL_FLOAT4_E1M2")}
_FP4 = (dtypes.info("ACL_FLOAT4_E2M1").acl, dtypes.info("ACL_FLOAT4_E1M2").acl)


def grouped_dynamic_mx_quant(x: Any, group_index: Any, *, round_mode: str = "rint",
                             dst_type: Any = "float8_e5m2", blocksize: int = 32, scale_alg: int = 0,
                             dst_type_max: float = 0.0, stream: Stream | None = None) -> tuple[Any, Any]:
    """Quantise ``x`` group-wise to MX blocks: FP8 / FP4 values plus E8M0 scales.

    ``group_index`` holds cumulative group ends: group g is rows ``[group_index[g-1],
    group_index[g])`` (the first starts at 0). Each column of a group is cut into blocks of 32 rows
    counted from the group's start; a block's scale is a power of two chosen from its largest
    magnitude (``scale_alg``), and its elements are divided by it and rounded to ``dst_type``.

    Parameters
    ----------
    x : tensor [m, n], float16 or bfloat16 (numpy array, torch tensor or pyaclnn.Tensor)
    group_index : int32 tensor [g] or a sequence of ints
        Non-decreasing ends in [0, m]. The values are not checked on the host (as on the NPU):
        the emulator clamps invalid ones and reports a device error at the next synchronisation.
    round_mode : "rint" (FP8 needs it), "round" or "floor" (FP4 only)
    dst_type : "float8_e5m2" (default, as the operator's attribute), "float8_e4m3fn",
        "float4_e2m1", "float4_e1m2" (or the aclDataType names FLOAT8_E5M2 ...), or an ml_dtypes /
        torch dtype
    blocksize : int
        Only 32 is supported.
    scale_alg : 0 (OCP: exponent of the block max minus the format's emax), 1 (cuBLAS: ceil of
        log2(amax / max), FP8 only) or 2 (FP4 only: dynamic-range variants picked by dst_type_max)
    dst_type_max : float
        0.0 for the format's maximum; for FP4 with scale_alg 2: 0 or [6, 12] (E2M1),
        0 or [1.75, 3.5] (E1M2).
    stream : pyaclnn.Stream, optional
        Default: the current stream (torch_npu's, for NPU torch tensors).

    Returns
    -------
    (y, mxscale)
        y [m, n] of ``dst_type``: ml_dtypes float8_e5m2 / float8_e4m3fn / float4_e2m1fn for numpy
        inputs; FLOAT4_E1M2, which has no numpy type, comes back packed as uint8 [m, n/2]
        (element 2k in the low nibble; decode with :func:`unpack_float4_e1m2`). mxscale is
        [m // 64 + g, n, 2] float8_e8m0fnu: ``mxscale[start_g // 64 + g + c, j, s]`` is the scale of
        block 2c + s of group g in column j. Bytes the kernel does not write (rows of empty groups,
        gap rows, the rows of x after the last group end) are 0 in numpy results and undefined
        in device and torch results (as torch_npu's ``new_empty`` outputs); find them with
        :func:`grouped_mxscale_written`. numpy arrays for host inputs (the call then waits for the
        result), torch tensors for torch inputs (FP4 as uint8 [m, n/2], as torch_npu), pyaclnn
        tensors for pyaclnn tensors (asynchronous).
    """
    crossing = F.begin(stream, x, group_index)
    kind, stream = crossing.kind, crossing.stream
    x_t = crossing.tensor(x)
    if isinstance(group_index, Tensor) or F.is_torch_tensor(group_index):
        gi_t = crossing.tensor(group_index)
    else:   # a sequence of ints or a host array: int32, as the operator requires
        gi_t = crossing.tensor(np.asarray(group_index, dtype=np.int32).reshape(-1))
    dst = _dst_acl(dst_type)
    m = x_t.shape[0] if len(x_t.shape) >= 1 else 0      # a wrong rank is the operator's to refuse
    n = x_t.shape[1] if len(x_t.shape) >= 2 else 0
    g = gi_t.shape[0] if gi_t.shape else 0
    scale_shape = (m // CHUNK_ROWS + g, n, 2)

    alloc = zeros if kind == F.NUMPY else empty
    y_t = alloc(x_t.shape, dst, stream=stream)
    mx_t = alloc(scale_shape, "float8_e8m0", stream=stream)
    function(OP)(x_t, gi_t, str(round_mode), dst, int(blocksize), int(scale_alg), float(dst_type_max),
                 y_t, mx_t, stream=stream)

    if kind == F.TORCH:
        from .._torch_out import to_torch
        y_out = _packed_bytes(y_t) if dst in _FP4 else y_t
        return to_torch(y_out), to_torch(mx_t)
    if kind == F.NUMPY:
        stream.synchronize()
        if dst == _FP4[1]:
            return _packed_bytes(y_t).numpy(), mx_t.numpy()
        return y_t.numpy(), mx_t.numpy()
    return y_t, mx_t


def unpack_float4_e1m2(packed: Any, *, decode: bool = True) -> np.ndarray:
    """FLOAT4_E1M2 bytes [..., k] (element 2i in the low nibble) -> float32 values [..., 2k]
    (``decode=False``: the 4-bit codes as uint8). Values are 0, 0.25, ..., 1.75 with a sign."""
    packed = np.asarray(packed, dtype=np.uint8)
    codes = unpack_nibbles(packed).reshape(packed.shape[:-1] + (packed.shape[-1] * 2,))
    return decode_float4_e1m2(codes) if decode else codes


def grouped_mxscale_written(group_index: Any, m: int, n: int) -> np.ndarray:
    """bool [m // 64 + g, n, 2]: the mxscale bytes the kernel writes for these group ends.

    Group g covers rows ``[start_g, end_g)`` and writes rows ``start_g // 64 + g`` ...
    ``+ ceil((end_g - start_g) / 64) - 1`` (both slots; the second slot of a group's last row is
    the 0 pad when its block count is odd). Empty groups write nothing. Invalid ends are read as
    the emulator clamps them: ``end_g = min(max(group_index[g], end_{g-1}), m)``.
    """
    ends = [int(v) for v in np.asarray(group_index).reshape(-1)]
    rows = np.zeros(m // CHUNK_ROWS + len(ends), dtype=bool)
    start = 0
    for g, raw_end in enumerate(ends):
        end = min(max(raw_end, start), m)
        if end > start:
            first = start // CHUNK_ROWS + g
            rows[first:first + -(-(end - start) // CHUNK_ROWS)] = True
        start = end
    return np.broadcast_to(rows[:, None, None], (rows.size, n, 2)).copy()


_DST_NAMES = {"float8_e5m2": "", "float8_e4m3fn": "", "float4_e2m1": "", "float4_e1m2": ""}


def _dst_acl(dst_type: Any) -> int:
    return F.choice("dst_type", dst_type, _DST_NAMES)


def _packed_bytes(t: Tensor) -> Tensor:
    """The bytes of a contiguous 4-bit tensor [m, n] as uint8 [m, n / 2] (same memory)."""
    shape = t.shape[:-1] + ((t.shape[-1] + 1) // 2,) if t.shape else (0,)
    return Tensor(t.memory, shape, "uint8", offset=t.offset // 2)


def _probe(acl_dtype: int, stream: Stream) -> tuple:
    """Smallest valid V2 call producing ``acl_dtype`` (for the support matrix): bf16 [32, 2], one group."""
    m, n = 32, 2
    x = zeros((m, n), "bfloat16", stream=stream)
    group_index = from_numpy(np.array([m], np.int32), stream=stream)
    return (x, group_index, "rint", acl_dtype, 32, 0, 0.0, zeros((m, n), acl_dtype, stream=stream),
            zeros((m // CHUNK_ROWS + 1, n, 2), "float8_e8m0", stream=stream))


def _register_probe() -> None:
    from ._support import register_probe
    register_probe(OP, ("ACL_FLOAT8_E4M3FN", "ACL_FLOAT8_E5M2", "ACL_FLOAT4_E2M1", "ACL_FLOAT4_E1M2",
                        "ACL_INT8"), _probe)


_register_probe()
