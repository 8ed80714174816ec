"""Template (kernel) selection of AddRmsNormDynamicQuant, from spec B.8.1 / B.9.1 and appendix D.

Written from /work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md and checked
against the vendor tiling (ops-nn arch22/arch35 tiling sources): all integer arithmetic, no
floating point, so the switch points are exact.

Atlas A2/A3 ("a2"): tiling key 1 normal, 2 single row, 3 slice-D.
Ascend 950 ("950"): mode 0 perf, 1 normal, 2 single row, 3 split, 4 reduce-empty (N == 0).
"""
from __future__ import annotations

UB_A2 = 196608          # bytes of unified buffer, Atlas A2/A3
UB_950 = 254976         # bytes of unified buffer, Ascend 950 (value of the vendor tiling UT, Q10)

A2_KEYS = {1: "normal", 2: "single_row", 3: "slice_d"}
MODES_950 = {0: "perf", 1: "normal", 2: "single_row", 3: "split", 4: "reduce_empty"}
MODE_IDS_950 = {name: mode for mode, name in MODES_950.items()}

A2_SLICE_LEN_INT8 = 8864     # slice-D column slice, INT8 output
A2_SLICE_LEN_INT4 = 8832     # slice-D column slice, INT4 output (dst_type 29)

_VL = 64                # fp32 lanes in one vector register
_XS = 2                 # bytes of an fp16/bf16 element


def normalise_soc(soc: str) -> str:
    """'950' for Ascend 950PR/950DT, 'a2' for Atlas A2/A3 (ascend910b, ascend910_93)."""
    s = str(soc).lower().replace("ascend", "").replace("atlas", "").strip(" _-")
    if s.startswith("950") or s == "arch35":
        return "950"
    if s.startswith("910b") or s.startswith("910_93") or s in ("a2", "a3", "arch22"):
        return "a2"
    raise ValueError(f"unknown SoC {soc!r} (use '950' or 'a2')")


def ceil_to(value: int, align: int) -> int:
    return -(-value // align) * align


def largest_pow2_le(n: int) -> int:
    """Largest power of two <= n (n >= 1)."""
    return 1 << (n.bit_length() - 1)


# ---------------------------------------------------------------------------------------------
# Atlas A2/A3
# ---------------------------------------------------------------------------------------------

def a2_aligned_n(n: int, y_dtype: str) -> int:
    """DA: N rounded up to 64 for INT4 (and V2 INT32, which is INT4 inside), else to 32."""
    return ceil_to(n, 64 if y_dtype in ("int4", "int32") else 32)


def a2_template_key(n: int, y_dtype: str = "int8", has_beta: bool = False, ub: int = UB_A2) -> int:
    """Tiling key 1/2/3 (B.8.1). Integer division truncates toward zero as in C."""
    da = a2_aligned_n(n, y_dtype)
    weights = 4 if has_beta else 3
    available = ub - (da * _XS * weights + 768)
    per_row = 16 * da + 8
    row_step = int(available / per_row) if available < 0 else available // per_row
    if row_step >= 1:
        return 1
    if 16 * da + 1024 <= ub:
        return 2
    return 3


def a2_slice_len(y_dtype: str) -> int:
    return A2_SLICE_LEN_INT4 if y_dtype in ("int4", "int32") else A2_SLICE_LEN_INT8


# ---------------------------------------------------------------------------------------------
# Ascend 950 (arch35), appendix D
# ---------------------------------------------------------------------------------------------

def _used_size_perf(bm: int, a: int, b8: int, b32: int, fv: int, q1: int, q2: int, qb: int,
                    beta: int) -> int:
    rstd_rows = ceil_to(bm, 8)
    used = a * _XS + qb * a * _XS + 1024
    used += bm * (3 * a * _XS + 4 * a)
    used += bm * fv * 4
    used += q1 * bm * (2 * b8 + 4 * b32)
    used += 2 * rstd_rows * 4
    used += q1 * 2 * rstd_rows * 4
    used += q2 * (bm * 2 * b8 + 2 * rstd_rows * 4)
    used += beta * a * _XS
    return used


def perf_base_m(n: int, q1: int, q2: int, qb: int, beta: int, ub: int = UB_950) -> int:
    """fullLoadBaseM: rows of length N that fit in UB at once (may be <= 0)."""
    a = ceil_to(n, 16)
    b8 = ceil_to(n, 32)
    b32 = ceil_to(n, 8)
    fold = largest_pow2_le(a - 1)
    fv = ceil_to(-(-fold // _VL), 32)
    last = ub - a * _XS - qb * a * _XS - 1024 - beta * a * _XS
    per_row = 3 * a * _XS + 4 * a + 2 * 4 + 4 * fv + 4 * b32 + q1 * (2 * b8 + 8) + q2 * (2 * b8 + 8)
    bm = int(last / per_row) if last < 0 else last // per_row
    while bm > 0 and _used_size_perf(bm, a, b8, b32, fv, q1, q2, qb, beta) > ub:
        bm -= 1
    return bm


def ub_total_size(n: int, q1: int, q2: int, qb: int, beta: int, split: bool) -> int:
    """CalUBTotalSize(baseM = 1, baseN = n) of the normal (split=False) or split template."""
    ra = ceil_to(n, 256)
    a = ceil_to(n, 16)
    b8 = ceil_to(n, 32)
    b32 = ceil_to(n, 8)
    reduce_slots = ceil_to(ra // 128, 8)
    total = 3 * ra * _XS + 4 * ra + 4 * reduce_slots + a * _XS + qb * a * _XS
    total += q1 * (b8 + 4 * b32) + beta * a * _XS + q2 * (b8 + 4 * b32)
    total += 32 * (1 + q1 + q2)
    if split:
        total += 3 * 4 * 64 * 4 + 64 * 4
    return total


def split_chunk(q1: int, q2: int, qb: int, beta: int, ub: int = UB_950) -> int:
    """P0: 256 doubled while two chunks' worth of buffers still fit."""
    chunk = 256
    while ub_total_size(2 * chunk, q1, q2, qb, beta, split=True) <= ub:
        chunk *= 2
    return chunk


def split_loop(n: int, chunk: int) -> int:
    """L: largest power of two with L * P0 <= N (at least 1, as the vendor loop starts at 1)."""
    loop = 1
    while loop * 2 * chunk <= n:
        loop *= 2
    return loop


def template_950(n: int, m: int = 1, q1: int = 1, q2: int = 0, qb: int = 0, beta: int = 0,
                 ub: int = UB_950) -> str:
    """Template name on Ascend 950 (B.9.1 / appendix D). n == 0 -> reduce_empty; m == 0 with
    n > 0 -> "normal" (the tiling returns that key and the kernel returns at once)."""
    q1, q2, qb, beta = int(bool(q1)), int(bool(q2)), int(qb), int(bool(beta))
    if n == 0:
        return "reduce_empty"
    if m == 0:
        return "normal"
    if n <= 2 * _VL * _VL * 2 and perf_base_m(n, q1, q2, qb, beta, ub) >= 1:
        return "perf"
    if ub_total_size(n, q1, q2, qb, beta, split=False) <= ub:
        return "normal"
    if 16 * ceil_to(n, 32) + 1024 <= ub:
        return "single_row"
    if ub_total_size(256, q1, q2, qb, beta, split=True) <= ub:
        return "split"
    raise ValueError("no 950 template fits: tiling fails")


def template_a2(n: int, y_dtype: str = "int8", has_beta: bool = False, ub: int = UB_A2) -> str:
    return A2_KEYS[a2_template_key(n, y_dtype, has_beta, ub)]
