"""Independent NumPy references for the elementwise operators (written from the semantics, not
from the C code): torch's promotion table, the NPU's Cast rules, and each operator's arithmetic.

Float results: computing in float64 and rounding once to the compute dtype gives the correctly
rounded +, -, *, / for fp32/fp16/bf16 operands (float64 has >= 2p+2 bits), i.e. IEEE arithmetic in
that dtype -- what torch CPU does for fp32 and what the NPU's fp32-upcasting kernels do for
fp16/bf16. Integers wrap at the compute dtype's width.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)
ARITH = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"]
FLOATS = {"float16", "bfloat16", "float32", "float64"}


def np_dtype(name: str) -> np.dtype:
    return BF16 if name == "bfloat16" else np.dtype(name)


def promote(a: str, b: str) -> str:
    """torch.promote_types for the arithmetic dtypes (its published table)."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    if {a, b} == {"uint8", "int8"}:
        return "int16"
    if {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return a if ARITH.index(a) > ARITH.index(b) else b


def cast(x: np.ndarray, to: str) -> np.ndarray:
    """The NPU's Cast: float -> int truncates, saturates, NaN -> 0; int -> int wraps; -> bool is
    != 0; float -> narrower float rounds to nearest even through float32."""
    x = np.asarray(x)
    dt = np_dtype(to)
    if to == "bool":
        return (x != 0) | (np.isnan(x) if x.dtype.kind == "f" or x.dtype == BF16 else False)
    src_float = x.dtype.kind == "f" or x.dtype == BF16
    if dt.kind in "iu":
        if src_float:
            xf = np.trunc(x.astype(np.float64))
            info = np.iinfo(dt)
            hi, lo = xf >= float(info.max), xf <= float(info.min)   # float(int64 max) is 2**63
            inner = np.where(np.isnan(xf) | hi | lo, 0, xf).astype(dt)
            return np.where(hi, info.max, np.where(lo, info.min, inner)).astype(dt)
        return x.astype(np.int64).astype(dt)   # two's complement wrap
    if to == "float64":
        return x.astype(np.float64)
    with np.errstate(over="ignore"):   # overflow -> inf is the rule
        return x.astype(np.float32).astype(dt)


def binary(op: str, a: np.ndarray, b: np.ndarray, compute: str, out: str) -> np.ndarray:
    """out = cast(op(cast(a, compute), cast(b, compute)) rounded in compute, out)."""
    ca, cb = cast(a, compute), cast(b, compute)
    if compute in FLOATS:
        x, y = ca.astype(np.float64), cb.astype(np.float64)
        with np.errstate(all="ignore"):
            r = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y}[op]
        r = cast(r, compute)
    elif compute == "bool":
        r = {"add": ca | cb, "mul": ca & cb}[op]
    else:
        with np.errstate(all="ignore"):
            r = {"add": ca + cb, "sub": ca - cb, "mul": ca * cb}[op]
    return cast(r, out)


def axpy_f32(a: np.ndarray, b: np.ndarray, alpha: float, compute: str, out: str) -> np.ndarray:
    """The NPU's Axpy (AscendC Axpy = Muls then Add, both in fp32), inputs cast to `compute` first."""
    x = cast(a, compute).astype(np.float32)
    y = cast(b, compute).astype(np.float32)
    with np.errstate(all="ignore"):
        t = y * np.float32(alpha)
        r = x + t
    return cast(cast(r, compute), out)


# ---- pointwise operators (written from the operators' definitions) ---------------------------------

def ulp_distance(got: np.ndarray, want: np.ndarray, dtype: str) -> np.ndarray:
    """Distance in units in the last place of `dtype` (0 for equal values, incl. equal infinities
    and NaN against NaN); a monotone integer image of the float bit patterns."""
    width = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}[dtype]
    ui, si = np.dtype(f"u{width // 8}"), np.dtype(f"i{width // 8}")
    g = np.ascontiguousarray(cast(got, dtype)).view(ui).astype(np.int64)
    w = np.ascontiguousarray(cast(want, dtype)).view(ui).astype(np.int64)
    sign = np.int64(1) << (width - 1)
    g = np.where(g & sign, sign - g, g) if width < 64 else np.where(g < 0, np.iinfo(np.int64).min - g, g)
    w = np.where(w & sign, sign - w, w) if width < 64 else np.where(w < 0, np.iinfo(np.int64).min - w, w)
    nan = np.isnan(np.asarray(got, np.float64)) & np.isnan(np.asarray(want, np.float64))
    return np.where(nan, 0, np.abs(g - w))


def float_compute(dtype: str) -> str:
    """Float-only kernels (Sqrt, Cos, ...) compute integral and bool inputs in FLOAT."""
    return dtype if dtype in FLOATS else "float32"


def unary_exact(op: str, x: np.ndarray, compute: str) -> np.ndarray:
    """Neg / Abs / Ceil / Sqrt / Reciprocal in the compute dtype: one IEEE rounding at most (float64
    then one rounding gives the correctly rounded sqrt and 1/x of fp32/fp16/bf16 operands)."""
    c = cast(x, compute)
    if compute not in FLOATS:
        with np.errstate(all="ignore"):
            r = {"neg": lambda v: (0 - v.astype(np.int64)).astype(c.dtype),
                 "abs": lambda v: np.abs(v.astype(np.int64)).astype(c.dtype) if v.dtype != bool else v}[op](c)
        return r
    v = c.astype(np.float64)
    with np.errstate(all="ignore"):
        r = {"neg": -v, "abs": np.abs(v), "ceil": np.ceil(v), "sqrt": np.sqrt(v), "reciprocal": 1.0 / v}[op]
    return cast(r, compute)


def compare(op: str, a: np.ndarray, b, compute: str) -> np.ndarray:
    """Both operands cast to the compute dtype and compared there (IEEE: NaN compares unequal)."""
    x, y = cast(a, compute), cast(np.asarray(b), compute)
    if compute in FLOATS:
        x, y = x.astype(np.float64), y.astype(np.float64)
    elif compute == "bool":   # (numpy 1.24 compares bool arrays into non-canonical bytes such as 0xFE)
        x, y = x.astype(np.int8), y.astype(np.int8)
    with np.errstate(invalid="ignore"):
        return {"eq": np.equal, "ne": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
                "le": np.less_equal}[op](x, y)


def triu(x: np.ndarray, diagonal: int) -> np.ndarray:
    rows, cols = x.shape[-2:]
    keep = np.subtract.outer(np.arange(rows), np.arange(cols)) <= -diagonal
    return np.where(keep, x, np.zeros((), x.dtype))
