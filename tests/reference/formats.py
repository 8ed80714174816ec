"""Independent NumPy reference for the NPU number formats, written from the specs.

Specs: /work/shared/spec/grouped_dynamic_mx_quant.md §4.6-§5 and
/work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md B.9-B.10, section C.

How it stays independent of the code under test (native_stubs/src/numerics, pyaclnn/codecs.py):
* value tables come from numpy / ml_dtypes where they decode the format, else from the spec's
  field tables parsed bit-string by bit-string (HIFLOAT8, FLOAT4_E1M2);
* encoders never touch exponent or mantissa bits: they look a value up in the sorted table of
  representable magnitudes (float64, exact for every float32) and pick a neighbour by comparing
  distances -- except HiF8's HYBRID mode, which is defined bit by bit and is transcribed from the
  AscendC pseudo-code range by range.

Modes use the same numbers as numerics.h: round mode | SAT | NAN_TO_ZERO.
"""
from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

RINT, ROUND, FLOOR, CEIL, TRUNC, ODD, HYBRID = range(7)
SAT, NAN_TO_ZERO = 0x10, 0x20
ROUND_NAMES = {RINT: "rint", ROUND: "round", FLOOR: "floor", CEIL: "ceil", TRUNC: "trunc",
               ODD: "odd", HYBRID: "hybrid"}


# ---------------------------------------------------------------------------------------------
# Value tables
# ---------------------------------------------------------------------------------------------

def _view_table(nbits: int, dtype) -> np.ndarray:
    codes = np.arange(1 << nbits, dtype=np.uint32).astype(np.uint8 if nbits == 8 else np.uint16)
    with np.errstate(invalid="ignore"):
        return codes.view(dtype).astype(np.float64)


def hif8_decode_code(code: int) -> float:
    """One HiFloat8 code -> value, from the spec's table (§5.4), by reading the bit string."""
    sign = -1.0 if code & 0x80 else 1.0
    b = format(code & 0x7F, "07b")
    if code == 0x80:
        return float("nan")
    if b == "1101111":                       # Ev = +15, M = 1
        return sign * float("inf")
    if b.startswith("0000"):                 # denormal 2^(M-23); M = 0 is zero
        m = int(b[4:], 2)
        return 0.0 if m == 0 else sign * 2.0 ** (m - 23)
    if b.startswith("0001"):
        exp_sign, exp_rest, man = "0", "", b[4:]
        magnitude_base = 0
    elif b.startswith("001"):
        exp_sign, exp_rest, man = b[3], "", b[4:]
        magnitude_base = 1
    elif b.startswith("01"):
        exp_sign, exp_rest, man = b[2], b[3], b[4:]
        magnitude_base = 2
    elif b.startswith("10"):
        exp_sign, exp_rest, man = b[2], b[3:5], b[5:]
        magnitude_base = 4
    else:                                    # "11"
        exp_sign, exp_rest, man = b[2], b[3:6], b[6:]
        magnitude_base = 8
    ev = magnitude_base + (int(exp_rest, 2) if exp_rest else 0)
    if exp_sign == "1":
        ev = -ev
    return sign * 2.0 ** ev * (1 + int(man, 2) / 2 ** len(man))


def hif8_table() -> np.ndarray:
    return np.array([hif8_decode_code(c) for c in range(256)], dtype=np.float64)


# FP4 value lists as the spec prints them (§5.3); bit 3 is the sign.
E2M1_VALUES = [0, 0.5, 1, 1.5, 2, 3, 4, 6]
E1M2_VALUES = [0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75]


def fp4_table(values) -> np.ndarray:
    return np.array([float(v) for v in values] + [-float(v) for v in values], dtype=np.float64)


def e8m0_table() -> np.ndarray:
    t = np.array([2.0 ** (c - 127) for c in range(256)], dtype=np.float64)
    t[255] = np.nan
    return t


# ---------------------------------------------------------------------------------------------
# Rounding onto a grid
# ---------------------------------------------------------------------------------------------

@dataclass
class Grid:
    """Non-negative finite magnitudes of a format, with their codes, plus the overflow point."""
    mags: np.ndarray    # float64, ascending
    codes: np.ndarray   # int64 magnitude code of each
    over: float         # value the code after the largest finite one would have
    over_code: int      # that code (its parity decides RINT ties at the top)

    @classmethod
    def from_table(cls, table: np.ndarray, over: float, over_code: int) -> "Grid":
        idx = np.nonzero(np.isfinite(table) & ~np.signbit(table))[0]
        order = np.argsort(table[idx], kind="stable")
        return cls(table[idx][order], idx[order].astype(np.int64), over, over_code)


def grid_round(x: np.ndarray, grid: Grid, rnd: int):
    """Round finite |x| onto the grid. Returns (code, overflow) arrays.

    Directed modes act on the signed value (FLOOR moves negatives away from zero). Ties: RINT to
    the even code, ROUND away from zero. `overflow` marks results past the largest finite value
    (the caller decides between inf, NaN and max); the code is then meaningless. Values below the
    smallest grid point (only E8M0 has no zero) take the smallest code.
    """
    a = np.abs(x.astype(np.float64))
    neg = np.signbit(x)
    ext = np.append(grid.mags, grid.over)
    ext_codes = np.append(grid.codes, grid.over_code)
    top = len(ext) - 1
    i = np.searchsorted(ext, a, side="right") - 1
    below = i < 0
    i = np.clip(i, 0, top)
    lo, hi = i, np.minimum(i + 1, top)
    exact = ext[lo] == a
    beyond = i == top                       # at or past the overflow point
    d_lo, d_hi = a - ext[lo], ext[hi] - a
    away = {
        RINT: (d_hi < d_lo) | ((d_hi == d_lo) & (ext_codes[hi] % 2 == 0)),
        ROUND: d_hi <= d_lo,
        FLOOR: neg,
        CEIL: ~neg,
        TRUNC: np.zeros_like(neg),
        ODD: ext_codes[lo] % 2 == 0,
    }[rnd] & ~exact
    idx = np.where(away, hi, lo)
    if rnd not in (RINT, ROUND):
        # at or past the overflow point only a rounding away from zero overflows; others stop at max
        away_from_zero = {FLOOR: neg, CEIL: ~neg}.get(rnd, np.zeros_like(neg))
        idx = np.where(beyond, np.where(away_from_zero, top, top - 1), idx)
    overflow = idx == top
    code = np.where(below, ext_codes[0], ext_codes[np.minimum(idx, top)])
    return code.astype(np.int64), overflow & ~below


# ---------------------------------------------------------------------------------------------
# IEEE-like formats: fp16, bf16, fp8, fp4
# ---------------------------------------------------------------------------------------------

@dataclass
class FloatFormat:
    name: str
    table: np.ndarray   # value of every code (independent decoder)
    grid: Grid
    sign_bit: int
    max_code: int
    inf_code: int | None   # magnitude code of +inf, None when the format has none
    nan_code: int | None   # canonical quiet NaN (sign added), None when the format has none


def _fmt(name, table, over, sign_bit, max_code, inf_code, nan_code):
    return FloatFormat(name, table, Grid.from_table(table, over, max_code + 1), sign_bit,
                       max_code, inf_code, nan_code)


FP16 = _fmt("fp16", _view_table(16, np.float16), 65536.0, 0x8000, 0x7BFF, 0x7C00, 0x7E00)
BF16 = _fmt("bf16", _view_table(16, ml_dtypes.bfloat16), 2.0 ** 128, 0x8000, 0x7F7F, 0x7F80,
            0x7FC0)
E4M3FN = _fmt("fp8_e4m3fn", _view_table(8, ml_dtypes.float8_e4m3fn), 480.0, 0x80, 0x7E, None,
              0x7F)
E5M2 = _fmt("fp8_e5m2", _view_table(8, ml_dtypes.float8_e5m2), 65536.0, 0x80, 0x7B, 0x7C, 0x7E)
E2M1 = _fmt("fp4_e2m1", fp4_table(E2M1_VALUES), 8.0, 0x8, 0x7, None, None)
E1M2 = _fmt("fp4_e1m2", fp4_table(E1M2_VALUES), 2.0, 0x8, 0x7, None, None)
FLOAT_FORMATS = {f.name: f for f in (FP16, BF16, E4M3FN, E5M2, E2M1, E1M2)}


def _overflow_code(fmt: FloatFormat, neg: np.ndarray, rnd: int, mode: int) -> np.ndarray:
    inf = fmt.inf_code if fmt.inf_code is not None else fmt.nan_code
    if mode & SAT or inf is None:
        return np.full(neg.shape, fmt.max_code)
    if rnd in (TRUNC, ODD):
        return np.full(neg.shape, fmt.max_code)
    if rnd == FLOOR:
        return np.where(neg, inf, fmt.max_code)
    if rnd == CEIL:
        return np.where(neg, fmt.max_code, inf)
    return np.full(neg.shape, inf)


def encode_float(fmt: FloatFormat, x: np.ndarray, mode: int) -> np.ndarray:
    """float32 -> code of an IEEE-like narrow format (rules: numerics.h, spec §4.6/§4.7/§5)."""
    x = np.asarray(x, dtype=np.float32)
    rnd = mode & 0xF
    neg = np.signbit(x)
    finite = np.isfinite(x)
    code, overflow = grid_round(np.where(finite, x, 0), fmt.grid, rnd)
    code = np.where(overflow, _overflow_code(fmt, neg, rnd, mode), code)
    # +-inf: inf (E4M3FN: NaN) unless saturating; formats without inf/NaN always saturate
    inf = fmt.inf_code if fmt.inf_code is not None else fmt.nan_code
    inf_mag = fmt.max_code if (mode & SAT or inf is None) else inf
    code = np.where(np.isinf(x), inf_mag, code)
    code = code | np.where(neg, fmt.sign_bit, 0)
    # NaN: the canonical quiet NaN with the sign kept, or 0
    nan = np.isnan(x)
    if fmt.nan_code is None or mode & NAN_TO_ZERO:
        nan_value = np.zeros(x.shape, np.int64)
    else:
        nan_value = fmt.nan_code | np.where(neg, fmt.sign_bit, 0)
    return np.where(nan, nan_value, code)


def decode_float(fmt: FloatFormat, codes: np.ndarray) -> np.ndarray:
    return fmt.table[np.asarray(codes, dtype=np.int64)].astype(np.float32)


# ---------------------------------------------------------------------------------------------
# HIFLOAT8
# ---------------------------------------------------------------------------------------------

HIF8_TABLE = hif8_table()
HIF8_GRID = Grid.from_table(HIF8_TABLE, over=1.5 * 2.0 ** 15, over_code=0x6F)
HIF8_INF, HIF8_MAX, HIF8_NAN = 0x6F, 0x6E, 0x80
_HIF8_CODE_OF = {v: c for c, v in enumerate(HIF8_TABLE) if np.isfinite(v) and c != 0x80}


def _hif8_code_of_values(v: np.ndarray) -> np.ndarray:
    """Exact value -> code (the value must be representable)."""
    return np.array([_HIF8_CODE_OF[float(t)] for t in v.ravel()], dtype=np.int64).reshape(v.shape)


def hif8_hybrid_magnitude(x: np.ndarray) -> np.ndarray:
    """HYBRID rounding of finite |x| to a float64 value (inf when it overflows), transcribed from
    the AscendC "float -> hifloat8_t" pseudo-code; exact inputs are left unchanged (open
    question 9's default)."""
    bits = np.abs(x).astype(np.float32).view(np.uint32).astype(np.int64)
    ev = ((bits >> 23) & 0xFF) - 127
    m = bits & 0x7FFFFF
    thr = bits & 0x3FFF
    out = np.zeros(x.shape, np.float64)

    def field(hi, lo):                       # tmp2[hi : lo]
        return (m >> lo) & ((1 << (hi - lo + 1)) - 1)

    # ev == -23: {1, m[22:10]} >= thr -> smallest denormal
    at23 = ev == -23
    out[at23 & (((1 << 13) | field(22, 10)) >= thr)] = 2.0 ** -22
    # |ev| <= 3: 3 mantissa bits, ties-away rounding on the TA bit m[19] in both modes
    # |ev| 4..7: 2 bits, frac = m[20:7]; |ev| 8..15: 1 bit, frac = m[21:8]
    for lo_e, hi_e, man_bits in ((0, 3, 3), (4, 7, 2), (8, 15, 1)):
        sel = (np.abs(ev) >= lo_e) & (np.abs(ev) <= hi_e)
        keep = field(22, 23 - man_bits)
        if man_bits == 3:
            up = field(19, 19) == 1
        else:
            frac = field(22 - man_bits, 9 - man_bits)
            exact = field(22 - man_bits, 0) == 0
            up = (frac >= thr) & ~exact
        value = 2.0 ** ev * (1 + (keep + up) / 2.0 ** man_bits)
        out = np.where(sel, value, out)
    # ev -22..-16: denormal 2^ev, frac = m[22:9]
    sel = (ev >= -22) & (ev <= -16)
    up = (field(22, 9) >= thr) & (m != 0)
    out = np.where(sel, 2.0 ** np.where(up, ev + 1, ev), out)
    out = np.where(ev > 15, np.inf, out)
    return np.where(out >= 1.5 * 2.0 ** 15, np.inf, out)


def encode_hif8(x: np.ndarray, mode: int) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    rnd = mode & 0xF
    neg = np.signbit(x)
    finite = np.isfinite(x)
    xf = np.where(finite, x, 0).astype(np.float32)
    inf_code = HIF8_MAX if mode & SAT else HIF8_INF
    if rnd == ROUND:
        code, overflow = grid_round(xf, HIF8_GRID, ROUND)
        code = np.where(np.abs(xf) < 2.0 ** -23, 0, code)   # below half of 2^-22
    elif rnd == HYBRID:
        mag = hif8_hybrid_magnitude(xf)
        overflow = np.isinf(mag)
        code = _hif8_code_of_values(np.where(overflow, 0.0, mag))
    else:
        raise ValueError("HiFloat8 takes ROUND or HYBRID")
    code = np.where(overflow | np.isinf(x), inf_code, code)
    code = np.where(code == HIF8_INF, inf_code, code)
    code = np.where(code == 0, 0, code | np.where(neg, 0x80, 0))    # no -0
    nan = np.isnan(x)
    return np.where(nan, 0 if mode & NAN_TO_ZERO else HIF8_NAN, code)


def decode_hif8(codes: np.ndarray) -> np.ndarray:
    return HIF8_TABLE[np.asarray(codes, dtype=np.int64)].astype(np.float32)


# ---------------------------------------------------------------------------------------------
# FLOAT8_E8M0
# ---------------------------------------------------------------------------------------------

E8M0_TABLE = e8m0_table()
E8M0_GRID = Grid(E8M0_TABLE[:255], np.arange(255, dtype=np.int64), 2.0 ** 128, 255)


def encode_e8m0(x: np.ndarray, mode: int) -> np.ndarray:
    """Magnitude onto the powers of two 2^-127..2^127 (sign dropped, as the NPU's cast does).
    TRUNC/FLOOR: toward zero (the exponent field); zero -> 0x00; overflow -> 0xFE; inf -> 0xFE;
    NaN -> 0xFF; ROUND ties up."""
    x = np.asarray(x, dtype=np.float32)
    rnd = mode & 0xF
    a = np.abs(np.where(np.isfinite(x), x, 0))
    if rnd == FLOOR:
        rnd = TRUNC                          # on magnitudes
    code, overflow = grid_round(a, E8M0_GRID, rnd)
    code = np.where(overflow | np.isinf(x), 0xFE, code)
    return np.where(np.isnan(x), 0xFF, code)


def decode_e8m0(codes: np.ndarray) -> np.ndarray:
    return E8M0_TABLE[np.asarray(codes, dtype=np.int64)].astype(np.float32)


# ---------------------------------------------------------------------------------------------
# Integers
# ---------------------------------------------------------------------------------------------

def round_integer(x64: np.ndarray, rnd: int) -> np.ndarray:
    """float64 -> float64 integer with the round mode (all exact for float32 inputs)."""
    if rnd == RINT:
        return np.rint(x64)
    if rnd == ROUND:
        return np.copysign(np.floor(np.abs(x64) + 0.5), x64)
    if rnd == FLOOR:
        return np.floor(x64)
    if rnd == CEIL:
        return np.ceil(x64)
    if rnd == TRUNC:
        return np.trunc(x64)
    raise ValueError(rnd)


def encode_int(x: np.ndarray, bits: int, mode: int) -> np.ndarray:
    """float32 -> signed `bits`-wide integer (int64 array). SAT clamps; otherwise the low bits
    are kept (two's complement) and +-inf -> max/min; NaN -> 0."""
    x = np.asarray(x, dtype=np.float32)
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    finite = np.isfinite(x)
    r = round_integer(np.where(finite, x, 0).astype(np.float64), mode & 0xF)
    if mode & SAT:
        out = np.clip(r, lo, hi).astype(np.int64)
    else:
        low = np.fmod(r, 2.0 ** bits)                    # exact; same sign as r
        low = np.where(low < 0, low + 2.0 ** bits, low)  # 0 .. 2^bits - 1
        out = np.where(low > hi, low - 2.0 ** bits, low).astype(np.int64)
    out = np.where(np.isinf(x), np.where(x > 0, hi, lo), out)
    return np.where(np.isnan(x), 0, out)


# ---------------------------------------------------------------------------------------------
# Packing
# ---------------------------------------------------------------------------------------------

def pack4(nibbles: np.ndarray) -> np.ndarray:
    """Element 2k in the low nibble of byte k; an odd tail's high nibble is 0."""
    out = bytearray((len(nibbles) + 1) // 2)
    for i, v in enumerate(np.asarray(nibbles).tolist()):
        out[i // 2] |= (int(v) & 0xF) << (4 * (i % 2))
    return np.frombuffer(bytes(out), dtype=np.uint8)


# ---------------------------------------------------------------------------------------------
# Test inputs
# ---------------------------------------------------------------------------------------------

def all_fp16_and_bf16_as_f32() -> np.ndarray:
    """Every fp16 and every bf16 bit pattern, widened exactly to float32 (131072 values)."""
    codes = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    return np.concatenate([codes.view(np.float16).astype(np.float32),
                           codes.view(ml_dtypes.bfloat16).astype(np.float32)])


def boundary_sweep(grid: Grid, ulps: int = 2, max_points: int | None = None,
                   seed: int = 0) -> np.ndarray:
    """float32 values at and around every grid point and every midpoint between neighbours
    (+-`ulps` float32 ulps), both signs, plus the overflow point."""
    ext = np.append(grid.mags, grid.over)
    mids = (ext[:-1] + ext[1:]) / 2
    pts = np.concatenate([ext, mids])
    if max_points is not None and len(pts) > max_points:
        pts = np.random.default_rng(seed).choice(pts, max_points, replace=False)
    with np.errstate(over="ignore"):
        base = pts.astype(np.float32)    # bf16's overflow point 2^128 becomes inf
    out = [base]
    up, down = base.copy(), base.copy()
    for _ in range(ulps):
        up = np.nextafter(up, np.float32(np.inf))
        down = np.nextafter(down, np.float32(0))
        out += [up, down]
    v = np.concatenate(out)
    return np.concatenate([v, -v])


def specials() -> np.ndarray:
    """+-0, +-inf, NaNs with several payloads and both signs, float32 subnormals and extremes."""
    nan_bits = np.array([0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7FA00000, 0x7FE12345,
                         0xFFC00000, 0xFF800001, 0xFFFFFFFF], dtype=np.uint32)
    sub_bits = np.array([1, 2, 0x400000, 0x7FFFFF, 0x600000], dtype=np.uint32)
    vals = np.array([0.0, -0.0, np.inf, -np.inf, np.finfo(np.float32).max,
                     -np.finfo(np.float32).max, np.finfo(np.float32).tiny,
                     -np.finfo(np.float32).tiny], dtype=np.float32)
    sub = sub_bits.view(np.float32)
    return np.concatenate([vals, nan_bits.view(np.float32), sub, -sub])


def random_f32(n: int, seed: int = 1) -> np.ndarray:
    """Uniform random float32 bit patterns (every exponent equally likely, NaNs included)."""
    return np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint64).astype(
        np.uint32).view(np.float32)
