"""NumPy reference for aclnnGroupedDynamicMxQuant and aclnnGroupedDynamicMxQuantV2 on the Ascend 950
(code generation G2: CANN 9.2 / ops-nn master), written from shared/spec/grouped_dynamic_mx_quant.md
and checked against the vendor kernel source (quant/quant_common/op_kernel/mx_quant_common.h).

With tests/ on sys.path:

    from reference.grouped_dynamic_mx_quant import grouped_dynamic_mx_quant
    y, mxscale, written = grouped_dynamic_mx_quant(x_bf16, [40, 128], dst_type="float4_e2m1",
                                                   scale_alg=2, round_mode="floor")

Outputs are raw bytes: y uint8 [m, n] (FP8) or [m, n/2] (FP4, element 2k in the low nibble);
mxscale uint8 [m // 64 + g, n, 2] (E8M0 codes); `written` bool like mxscale, True where the kernel
writes. Bytes the kernel never writes (gap rows of mxscale, y rows beyond the last group) are 0 here
and undefined on the NPU: compare only where the masks are True (y_written_mask for y).

Helpers: gmq_formats (number formats), gmq_scales (scale algorithms, tiling parameters),
gmq_layout (groups, blocks, mxscale layout, invalid-groupIndex policies), gmq_validation
(expected GetWorkspaceSize status).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from .gmq_formats import (bf16_bits_to_f32, encode_fp4, encode_fp8, f16_bits_to_f32,
                          f32_to_bf16_bits_rne, pack_fp4)
from .gmq_layout import (GROUP_INDEX_POLICIES, Blocks, GroupPlan, mxscale_row_count,
                         mxscale_written_mask, mxscale_written_rows, plan_groups, run_blocks,
                         runs, y_written_rows)
from .gmq_scales import (DstFormat, dst_format, dst_type_max_template,
                         inv_dst_type_max, scale_cublas, scale_dynamic_range, scale_ocp,
                         tiling_key)
from .gmq_validation import (ACL_BF16, ACL_FLOAT8_E8M0, ACL_FLOAT16, ACL_INT32,
                             ACL_INT64, GmqCall, TensorArg, Verdict, expected_status, make_call)

__all__ = [
    "grouped_dynamic_mx_quant", "y_written_mask", "group_index_notes", "GmqRejected",
    # layout and invalid groupIndex handling
    "GROUP_INDEX_POLICIES", "GroupPlan", "plan_groups", "mxscale_row_count",
    "mxscale_written_mask", "mxscale_written_rows", "y_written_rows",
    # tiling-derived parameters
    "dst_format", "inv_dst_type_max", "dst_type_max_template", "tiling_key",
    # expected GetWorkspaceSize status
    "GmqCall", "TensorArg", "Verdict", "expected_status", "make_call",
]

AMAX_NAN_MODES = ("propagate", "ignore")
_CHUNK_ELEMENTS = 1 << 22          # columns are processed in slices of about this many elements


class GmqRejected(ValueError):
    """The arguments would be refused by GetWorkspaceSize; .status and .rule say how."""

    def __init__(self, verdict: Verdict):
        super().__init__(f"status {verdict.status}: {verdict.rule}")
        self.status = verdict.status
        self.rule = verdict.rule


def _input_bits(x, x_dtype: str | None) -> tuple[np.ndarray, int]:
    """(uint16 bit patterns, aclDataType) of a bfloat16 / float16 array (or uint16 + x_dtype)."""
    x = np.ascontiguousarray(x)
    if x.dtype == ml_dtypes.bfloat16 or (x.dtype == np.uint16 and x_dtype == "bfloat16"):
        return x.view(np.uint16), ACL_BF16
    if x.dtype == np.float16 or (x.dtype == np.uint16 and x_dtype == "float16"):
        return x.view(np.uint16), ACL_FLOAT16
    raise TypeError(f"x must be bfloat16 or float16 (or uint16 with x_dtype), not {x.dtype}")


def _group_index_array(group_index) -> tuple[np.ndarray, int]:
    if isinstance(group_index, np.ndarray):
        gi = group_index
    else:
        gi = np.asarray(group_index, dtype=np.int32)
    if gi.dtype not in (np.int32, np.int64):
        raise TypeError(f"groupIndex must be int32 (or int64), not {gi.dtype}")
    return gi, ACL_INT32 if gi.dtype == np.int32 else ACL_INT64


def _describe_call(bits, x_acl, gi, gi_acl, fmt: DstFormat, round_mode, blocksize, scale_alg,
                   dst_type_max, version) -> GmqCall:
    m = bits.shape[0] if bits.ndim else 0
    n = bits.shape[1] if bits.ndim == 2 else 0
    g = gi.shape[0] if gi.ndim == 1 else 0
    return GmqCall(x=TensorArg(x_acl, bits.shape), group_index=TensorArg(gi_acl, gi.shape),
                   y=TensorArg(fmt.acl, bits.shape),
                   mxscale=TensorArg(ACL_FLOAT8_E8M0, (mxscale_row_count(m, g), n, 2)),
                   round_mode=round_mode, dst_type=fmt.acl, blocksize=blocksize,
                   scale_alg=scale_alg, dst_type_max=dst_type_max, version=version)


def _quantize_slice(bits: np.ndarray, x_acl: int, blocks: Blocks, fmt: DstFormat, scale_alg: int,
                    template: int, inv: np.float32, round_mode: str, amax_nan: str
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Scales [blocks, cols] and element codes [rows, cols] of one slice whose rows are exactly
    covered by `blocks`."""
    xf = bf16_bits_to_f32(bits) if x_acl == ACL_BF16 else f16_bits_to_f32(bits)
    starts = blocks.start
    if scale_alg == 0:
        # bf16 exponent field; for fp16 input the truncating cast to bf16 keeps the exponent,
        # which is then the float32 exponent field.
        exponent = ((xf.view(np.uint32) >> 23) & np.uint32(0xFF)).astype(np.uint16)
        s, rb = scale_ocp(np.maximum.reduceat(exponent, starts, axis=0), fmt.emax)
    elif scale_alg == 1 or template == 0:
        block_max = np.maximum if amax_nan == "propagate" else np.fmax
        amax = block_max.reduceat(np.abs(xf), starts, axis=0)
        s, rb = scale_cublas(amax, inv, subnormal_rule=scale_alg == 1)
    else:
        b16 = bits if x_acl == ACL_BF16 else f32_to_bf16_bits_rne(xf)
        xm = np.maximum.reduceat(b16 & np.uint16(0x7FFF), starts, axis=0)
        s, rb = scale_dynamic_range(xm, fmt.emax, template)
    with np.errstate(all="ignore"):
        v = xf * np.repeat(bf16_bits_to_f32(rb), blocks.length, axis=0)
    codes = encode_fp4(v, fmt.name, round_mode) if fmt.is_fp4 else encode_fp8(v, fmt.name)
    return s, codes


def grouped_dynamic_mx_quant(x, group_index, round_mode: str = "rint",
                             dst_type="float8_e4m3fn", blocksize: int = 32, scale_alg: int = 0,
                             dst_type_max: float = 0.0, version: int = 2, *,
                             x_dtype: str | None = None, group_index_policy: str = "clamp",
                             amax_nan: str = "propagate"
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quantise x [m, n] (bfloat16/float16) group-wise to MX blocks of 32 rows.

    dst_type: "float8_e4m3fn" | "float8_e5m2" | "float4_e2m1" | "float4_e1m2" or the aclDataType
    value. version 1 is the V1 API (it has no scale_alg / dst_type_max). Arguments the 950 G2
    GetWorkspaceSize refuses raise GmqRejected (see gmq_validation.expected_status).
    group_index_policy: how invalid groupIndex values are repaired (gmq_layout docstring).
    amax_nan: NaN behaviour of the float block max of scale_alg 1 / scale_alg 2-T0 (spec §9.1).
    Returns (y bytes, mxscale bytes, mxscale written mask).
    """
    if version == 1 and (scale_alg != 0 or dst_type_max != 0.0):
        raise ValueError("version 1 has no scaleAlg / dstTypeMax")
    if amax_nan not in AMAX_NAN_MODES:
        raise ValueError(f"amax_nan must be one of {AMAX_NAN_MODES}")
    bits, x_acl = _input_bits(x, x_dtype)
    gi, gi_acl = _group_index_array(group_index)
    fmt = dst_format(dst_type)
    verdict = expected_status(_describe_call(bits, x_acl, gi, gi_acl, fmt, round_mode, blocksize,
                                             scale_alg, dst_type_max, version))
    if verdict.status != 0:
        raise GmqRejected(verdict)

    m, n = bits.shape
    g = gi.shape[0]
    y = np.zeros((m, n // 2 if fmt.is_fp4 else n), dtype=np.uint8)
    mxscale = np.zeros((mxscale_row_count(m, g), n, 2), dtype=np.uint8)
    if not verdict.launches:                    # empty x: nothing is written
        return y, mxscale, np.zeros(mxscale.shape, dtype=bool)

    plan = plan_groups(gi, m, group_index_policy)
    template = dst_type_max_template(fmt, dst_type_max) if scale_alg == 2 else 0
    inv = inv_dst_type_max(fmt, dst_type_max)
    for run in runs(plan):
        blocks = run_blocks(run)
        r0, r1 = run[0].start, run[-1].end
        mxscale[np.unique(blocks.row)] = 0     # the pad slot of odd-block chunks is written as 0
        width = max(64, _CHUNK_ELEMENTS // (r1 - r0) // 64 * 64)
        for c0 in range(0, n, width):
            c1 = min(n, c0 + width)
            s, codes = _quantize_slice(bits[r0:r1, c0:c1], x_acl, blocks, fmt, scale_alg,
                                       template, inv, round_mode, amax_nan)
            mxscale[blocks.row, c0:c1, blocks.slot] = s
            if fmt.is_fp4:
                y[r0:r1, c0 // 2:c1 // 2] = pack_fp4(codes)
            else:
                y[r0:r1, c0:c1] = codes
    return y, mxscale, mxscale_written_mask(gi, m, n, group_index_policy)


def y_written_mask(group_index, m: int, n: int, dst_type="float8_e4m3fn",
                   group_index_policy: str = "clamp") -> np.ndarray:
    """bool like the y bytes: True in the rows the kernel writes."""
    rows = y_written_rows(plan_groups(group_index, m, group_index_policy))
    width = n // 2 if dst_format(dst_type).is_fp4 else n
    return np.broadcast_to(rows[:, None], (m, width)).copy()


def group_index_notes(group_index, m: int) -> tuple[str, ...]:
    """The groupIndex contract violations, one line each (empty when groupIndex is valid)."""
    return plan_groups(group_index, m, "clamp").notes
