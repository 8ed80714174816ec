"""NumPy reference of aclnnAddRmsNormDynamicQuant (V1) and aclnnAddRmsNormDynamicQuantV2.

Written from /work/shared/spec/amp_update_scale_and_add_rms_norm_dynamic_quant.md section B (with
its corrections box, section C defaults and appendix D), checked against the vendor kernels
(hicann/ops-nn norm/add_rms_norm_dynamic_quant at e5c3fa9327ea); never from the C emulator.

Arithmetic is float32 with one rounding per operation, in the kernel's order, for all rows at
once: x = x1 + x2 (fp32), the template's sum of squares (arnq_reduce), the template's rstd
(arnq_rstd), y = (x*rstd)*gamma (+ beta), z_k = y*smooth_k, the chip's scale and quotient, and the
output cast (arnq_casts). Outputs are the raw values the NPU writes.

Open-question options (defaults = the spec's stated defaults, except Q11: see below):
  tree64_order      "adjacent" | "halves"            Q2  order inside one 64-lane reduce
  scalar_rstd_mode  "float" | "fma" | "double"       Q4  910B / 950 single-row scalar rstd
  mula              "fused" | "unfused"              Q5  950 perf Newton-Raphson MULA
  max_nan           "propagate" | "ignore"           Q7  NaN in the vector row max
  fp8_nan_sign      "zero" | "positive" | "keep"     Q11 FP8 NaN -> 0x00 / NaN code (+ / own sign)
  hif8_nan          "zero" | "nan"                   Q11 HiF8 NaN -> 0x00 or 0x80
  overflow_mode     "infnan" | "saturation"          Q3  fp32 -> fp16/bf16 narrowing of xOut
  ub_950            254976                           Q10 UB bytes used by the 950 template choice

Q11: the 950 kernel casts to FP8 / HiF8 with SatMode::SAT and CTRL[60] cleared (B.9.3), as
GroupedDynamicMxQuant does; the vendor Cast documentation says a NaN then becomes 0x00 while
CTRL[50] = 0 (the default; grouped_dynamic_mx_quant.md 4.6). The default "zero" follows it (e.g. an
all-zero row, q = 0/0); the NaN codes Q11 only assumed are the alternatives. +-inf -> +-max (SAT).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from . import arnq_casts as casts
from . import arnq_reduce as reduce
from .arnq_rstd import newton_raphson_rstd, scalar_rstd, vector_rstd
from .arnq_tiling import (A2_KEYS, UB_950, a2_slice_len, a2_template_key, normalise_soc,
                          split_chunk, split_loop, template_950)
from .arnq_validation import Tensor, expected_status  # noqa: F401  (re-exported)

F32 = np.float32
X_DTYPES = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
Y_DTYPES_A2 = {1: ("int8",), 2: ("int8", "int4", "int32")}
Y_DTYPES_950 = {1: ("int8", "hifloat8", "float8_e5m2", "float8_e4m3fn"),
                2: ("int8", "int4", "int32", "hifloat8", "float8_e5m2", "float8_e4m3fn")}

# 910B quant max; 950 divisors D = f32(1/Q) (the scale multiplies by D)
QM_A2 = {"int8": F32(127.0), "int4": F32(7.0), "int32": F32(7.0)}
Q_950 = {"int8": 127, "int4": 7, "int32": 7, "float8_e4m3fn": 448, "float8_e5m2": 57344,
         "hifloat8": 32768}
D_950 = {name: F32(1.0) / F32(q) for name, q in Q_950.items()}


def active_outputs(version: int, has_smooth1: bool, has_smooth2: bool, output_mask=None):
    """(out1, out2) per B.2; raises ValueError for the combinations that validation rejects."""
    if version == 1 and output_mask is not None:
        raise ValueError("V1 has no outputMask")
    if output_mask is None:
        if has_smooth2 and not has_smooth1:     # V2: phase 1 161002; V1: tiling (phase 2)
            raise ValueError("without outputMask, smoothScale2 needs smoothScale1")
        return True, has_smooth1 and has_smooth2
    mask = [bool(v) for v in output_mask]
    if len(mask) != 2:
        raise ValueError("outputMask must have 2 elements")
    if (has_smooth1 and not mask[0]) or (has_smooth2 and not mask[1]) or not any(mask):
        raise ValueError("outputMask inconsistent with the smooth scales, or all false")
    return mask[0], mask[1]


def _as_input(a, name: str, dtype=None) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype.name not in X_DTYPES:
        raise ValueError(f"{name} must be float16 or bfloat16, got {arr.dtype}")
    if dtype is not None and arr.dtype != dtype:
        raise ValueError(f"{name} dtype {arr.dtype} differs from x1 {dtype} (no kernel binary)")
    return arr


def narrow(x: np.ndarray, dtype: np.dtype, overflow_mode: str = "infnan") -> np.ndarray:
    """fp32 -> fp16/bf16, round to nearest even; overflow -> inf (INF/NaN mode) or +-max, NaN -> 0
    (saturation mode, Q3)."""
    if overflow_mode == "saturation":
        fmax = F32(float(np.finfo(dtype).max))
        x = np.where(np.isnan(x), F32(0.0), np.clip(x, -fmax, fmax))
    elif overflow_mode != "infnan":
        raise ValueError(f"unknown overflow mode {overflow_mode!r}")
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _row_max(z: np.ndarray, max_nan: str) -> np.ndarray:
    a = np.abs(z)
    if max_nan == "propagate":
        return np.max(a, axis=1)
    if max_nan == "ignore":
        return np.fmax.reduce(a, axis=1)
    raise ValueError(f"unknown max_nan {max_nan!r}")


def _slice_d_max(z: np.ndarray, slice_len: int, max_nan: str) -> np.ndarray:
    """910B slice-D: vector max per slice, combined on the scalar unit starting at 0 with
    `(tmp > local) ? tmp : local` (a NaN slice max is dropped there)."""
    n = z.shape[1]
    tail = n % slice_len or slice_len
    bounds = list(range(0, n - tail + 1, slice_len))
    local = np.zeros(z.shape[0], dtype=F32)
    for i, start in enumerate(bounds):
        stop = start + slice_len if i < len(bounds) - 1 else n
        tmp = _row_max(z[:, start:stop], max_nan)
        with np.errstate(invalid="ignore"):
            local = np.where(tmp > local, tmp, local)
    return local


def _encode(q: np.ndarray, y_dtype: str, out_shape, opts) -> np.ndarray:
    if y_dtype == "int8":
        return casts.encode_int8(q).reshape(out_shape)
    if y_dtype in ("int4", "int32"):
        packed = casts.encode_int4(q).reshape(out_shape[:-1] + (out_shape[-1] // 2,))
        return casts.int4_bytes_to_int32(packed) if y_dtype == "int32" else packed
    if y_dtype in casts.FP8_FORMATS:
        return casts.encode_fp8(q, y_dtype, opts["fp8_nan_sign"]).reshape(out_shape)
    if y_dtype == "hifloat8":
        return casts.encode_hif8(q, opts["hif8_nan"]).reshape(out_shape)
    raise ValueError(f"unsupported y dtype {y_dtype!r}")


def add_rms_norm_dynamic_quant(x1, x2, gamma, smooth1=None, smooth2=None, beta=None,
                               epsilon: float = 1e-6, output_mask=None, y_dtype: str = "int8",
                               soc: str = "950", version: int = 1, *, ub_950: int = UB_950,
                               tree64_order: str = "adjacent", scalar_rstd_mode: str = "float",
                               mula: str = "fused", max_nan: str = "propagate",
                               fp8_nan_sign: str = "zero", hif8_nan: str = "zero",
                               overflow_mode: str = "infnan", force_template: str | None = None):
    """Reference outputs of one call (what a successful phase 2 writes).

    Inputs are numpy arrays of float16 or ml_dtypes.bfloat16 (all the same dtype); x1, x2 shape
    [..., N], gamma / smooth / beta shape [N]. Returns a dict:
      y1, y2       int8 [..., N] (INT8), uint8 [..., N/2] packed (INT4), int32 [..., N/8] (INT32),
                   uint8 codes [..., N] (FP8 / HiF8); None when the output is inactive
      x_out        x1 + x2 narrowed to the input dtype, shape of x1 (None if nothing is written)
      scale1/2     float32 [...] (= x1.shape[:-1]); None when inactive
      rstd         float32 per row (diagnostic, not an operator output)
      template     "normal"/"single_row"/"slice_d" (a2), "perf"/"normal"/"single_row"/"split"/
                   "reduce_empty" (950), None for an early return
      written      False when the call returns early and writes nothing (B.11)
      out1, out2   active flags (B.2)
    Raises ValueError for inputs the operator rejects (see expected_status for the codes)."""
    soc = normalise_soc(soc)
    if version not in (1, 2):
        raise ValueError("version must be 1 or 2")
    if version == 1 and beta is not None:
        raise ValueError("V1 has no beta")
    allowed = (Y_DTYPES_A2 if soc == "a2" else Y_DTYPES_950)[version]
    if y_dtype not in allowed:
        raise ValueError(f"y dtype {y_dtype!r} not supported by V{version} on {soc}")
    opts = dict(fp8_nan_sign=fp8_nan_sign, hif8_nan=hif8_nan)

    x1 = _as_input(x1, "x1")
    dtype = x1.dtype
    x2 = _as_input(x2, "x2", dtype)
    gamma = _as_input(gamma, "gamma", dtype)
    smooth1 = None if smooth1 is None else _as_input(smooth1, "smooth1", dtype)
    smooth2 = None if smooth2 is None else _as_input(smooth2, "smooth2", dtype)
    beta = None if beta is None else _as_input(beta, "beta", dtype)
    if x1.ndim < 1 or x1.shape != x2.shape or gamma.ndim != 1 or gamma.shape[0] != x1.shape[-1]:
        raise ValueError("shapes: x2 must equal x1, gamma must be [x1.shape[-1]]")
    for name, t in (("smooth1", smooth1), ("smooth2", smooth2), ("beta", beta)):
        if t is not None and t.shape != gamma.shape:
            raise ValueError(f"{name} shape must equal gamma's")
    out1, out2 = active_outputs(version, smooth1 is not None, smooth2 is not None, output_mask)

    eps = F32(epsilon)
    n = x1.shape[-1]
    lead = x1.shape[:-1]
    m = int(np.prod(lead, dtype=np.int64))
    result = dict(y1=None, y2=None, x_out=None, scale1=None, scale2=None, rstd=None,
                  template=None, written=False, out1=out1, out2=out2)
    if y_dtype in ("int4", "int32") and n % 2:
        raise ValueError("INT4 output needs an even last dimension")
    if y_dtype == "int32" and n % 8:
        raise ValueError("INT32 output needs the last dimension divisible by 8")

    rank_ok = 2 <= x1.ndim <= 8
    if n == 0:
        if soc == "950" and version == 2:          # B.11: reduce-empty template, -inf scales
            if not rank_ok:
                raise ValueError("950 tiling needs x1 of rank 2..8")
            minus_inf = np.full(lead, -np.inf, dtype=F32)
            result.update(template="reduce_empty", written=True,
                          scale1=minus_inf.copy() if out1 else None,
                          scale2=minus_inf.copy() if out2 else None)
        return result
    if m == 0:
        return result
    if soc == "a2" and eps <= 0:
        raise ValueError("910B tiling rejects epsilon <= 0")
    if soc == "950" and not rank_ok:
        raise ValueError("950 tiling needs x1 of rank 2..8")

    x = x1.reshape(m, n).astype(F32) + x2.reshape(m, n).astype(F32)
    g = gamma.astype(F32)
    smooth = {1: None if smooth1 is None else smooth1.astype(F32),
              2: None if smooth2 is None else smooth2.astype(F32)}
    b = None if beta is None else beta.astype(F32)
    avg = F32(1.0) / F32(n)
    q = x * x

    if soc == "a2":
        key = a2_template_key(n, y_dtype, beta is not None)
        template = force_template or A2_KEYS[key]
        if template == "slice_d":
            s = reduce.slice_d(q, a2_slice_len(y_dtype), tree64_order)
        else:
            s = reduce.half_interval(q, tree64_order)
        rstd = scalar_rstd(s, avg, eps, scalar_rstd_mode)
    else:
        qb = (smooth1 is not None) + (smooth2 is not None)
        template = force_template or template_950(n, m, out1, out2, qb, beta is not None, ub_950)
        if template == "perf":
            rstd = newton_raphson_rstd(reduce.fold_reduce(q, tree64_order), avg, eps, mula)
        elif template == "normal":
            rstd = vector_rstd(reduce.normal_reduce(q, tree64_order), avg, eps)
        elif template == "single_row":
            rstd = scalar_rstd(reduce.half_interval(q, tree64_order), avg, eps, scalar_rstd_mode)
        elif template == "split":
            chunk = split_chunk(int(out1), int(out2), qb, int(beta is not None), ub_950)
            s = reduce.split_reduce(q, chunk, split_loop(n, chunk), tree64_order)
            rstd = vector_rstd(s, avg, eps)
        else:
            raise ValueError(f"unknown 950 template {template!r}")

    with np.errstate(invalid="ignore", over="ignore"):
        y = (x * rstd[:, None]) * g
        if b is not None:
            y = y + b

    active = [k for k, on in ((1, out1), (2, out2)) if on]
    if soc == "a2":
        quotients = _quant_a2(y, smooth, active, y_dtype, template, max_nan)
    elif template == "single_row":
        quotients = _quant_950_single_row(y, smooth, active, y_dtype, max_nan)
    else:
        quotients = _quant_950(y, smooth, active, y_dtype, max_nan)

    for k, (scale, qk) in quotients.items():
        result[f"y{k}"] = _encode(qk, y_dtype, x1.shape, opts)
        result[f"scale{k}"] = scale.reshape(lead)
    result.update(x_out=narrow(x, dtype, overflow_mode).reshape(x1.shape), rstd=rstd,
                  template=template, written=True)
    return result


def _smoothed(y: np.ndarray, smooth_k):
    return y if smooth_k is None else y * smooth_k


def _quant_a2(y, smooth, active, y_dtype, template, max_nan):
    """910B (B.8.3): inv = QM/m (scalar), scale = 1/inv, q = z*inv (vector multiply)."""
    qm = QM_A2[y_dtype]
    out = {}
    for k in active:
        z = _smoothed(y, smooth[k])
        if template == "slice_d":
            mx = _slice_d_max(z, a2_slice_len(y_dtype), max_nan)
        else:
            mx = _row_max(z, max_nan)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            inv = qm / mx
            scale = F32(1.0) / inv
            out[k] = (scale, z * inv[:, None])
    return out


def _quant_950(y, smooth, active, y_dtype, max_nan):
    """950 perf / normal / split (B.9.3): scale = m*D, q = z/scale (true division)."""
    d = D_950[y_dtype]
    out = {}
    for k in active:
        z = _smoothed(y, smooth[k])
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            scale = _row_max(z, max_nan) * d
            out[k] = (scale, z / scale[:, None])
    return out


def _quant_950_single_row(y, smooth, active, y_dtype, max_nan):
    """950 single row (B.9.3): quant2 first; scale = m / f32(1/D) on the scalar unit, q = z/scale.
    Quirk: with out2 active and no smoothScale2, y itself is divided by scale2 in place, so quant1
    works on y/scale2 (times smoothScale1 if given)."""
    qms = F32(1.0) / D_950[y_dtype]
    out = {}
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if 2 in active:
            z2 = _smoothed(y, smooth[2])
            scale2 = _row_max(z2, max_nan) / qms
            q2 = z2 / scale2[:, None]
            out[2] = (scale2, q2)
            if smooth[2] is None:
                y = q2
        if 1 in active:
            z1 = _smoothed(y, smooth[1])
            scale1 = _row_max(z1, max_nan) / qms
            out[1] = (scale1, z1 / scale1[:, None])
    return out


def textbook_rms_norm(x1, x2, gamma, beta=None, epsilon: float = 1e-6) -> np.ndarray:
    """float64 RMSNorm of x1 + x2, for sanity comparisons only (not a golden)."""
    x = np.asarray(x1, dtype=np.float64) + np.asarray(x2, dtype=np.float64)
    rms = np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + epsilon)
    y = x / rms * np.asarray(gamma, dtype=np.float64)
    if beta is not None:
        y = y + np.asarray(beta, dtype=np.float64)
    return y


__all__ = ["add_rms_norm_dynamic_quant", "expected_status", "Tensor", "active_outputs",
           "textbook_rms_norm", "normalise_soc"]
