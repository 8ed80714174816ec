"""Expected status of aclnnAddRmsNormDynamicQuant[V2] for a described call (spec B.3, B.4, B.5,
B.11 and the corrections box), for table-driven tests.

`expected_status(...)` returns a Verdict:
  phase 0, status 0    both phases succeed (early_return: phase 1 returns workspace 0 and phase 2
                       writes nothing)
  phase 1, status S    GetWorkspaceSize returns S
  phase 2, status S    GetWorkspaceSize returns 0, the run returns S (561103) and writes nothing:
                       the rejections of kernel selection and tiling (corrections box 1, Q8).
  rule                 which check fired (a short sentence to look for in the error message)
  vendor_undefined     the vendor source crashes or misbehaves here; the status is the emulator's
                       choice (documented in the rule)

Tensors are described by `Tensor(shape, dtype)` (None = NULL pointer); dtype names: "float16",
"bfloat16", "float32", "int8", "int4", "int32", "hifloat8", "float8_e4m3fn", "float8_e5m2", or any
other string for an unsupported type.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arnq_tiling import normalise_soc

SUCCESS = 0
PARAM_NULLPTR = 161001
PARAM_INVALID = 161002
INNER_TILING_ERROR = 561002
INNER_NULLPTR = 561103

X_TYPES = ("float16", "bfloat16")
Y_TYPES_V1_OPAPI = ("float8_e4m3fn", "float8_e5m2", "hifloat8", "int8")
Y_TYPES_A2_KERNEL = ("int8", "int4")
Y_TYPES_950_KERNEL = ("int8", "int4", "hifloat8", "float8_e4m3fn", "float8_e5m2")


@dataclass(frozen=True)
class Tensor:
    shape: tuple
    dtype: str

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def empty(self) -> bool:
        return self.numel == 0

    @property
    def rank(self) -> int:
        return len(self.shape)

    def last(self):
        return self.shape[-1] if self.shape else None


@dataclass(frozen=True)
class Verdict:
    phase: int
    status: int
    rule: str
    early_return: bool = False
    vendor_undefined: bool = False


class _Reject(Exception):
    def __init__(self, phase, status, rule, undefined=False):
        super().__init__(rule)
        self.verdict = Verdict(phase, status, rule, vendor_undefined=undefined)


def _fail(phase, status, rule, undefined=False):
    raise _Reject(phase, status, rule, undefined)


def expected_status(version: int, soc: str, x1, x2, gamma, y1, y2, x_out, scale1, scale2,
                    smooth1=None, smooth2=None, beta=None, epsilon: float = 1e-6,
                    output_mask=None, *, tiling_reject: str = "phase2") -> Verdict:
    """Expected (phase, status) of one call. tiling_reject "phase2" (default, corrections box 1)
    reports kernel-selection / tiling rejections as phase 2 561103; "phase1" as the documented
    phase 1 561002 (the Q8 alternative)."""
    soc = normalise_soc(soc)
    try:
        if version == 1:
            if beta is not None or output_mask is not None:
                raise ValueError("V1 has no beta / outputMask")
            early = _phase1_v1(x1, x2, gamma, smooth1, smooth2, y1, y2, x_out, scale1, scale2)
            out1, out2 = True, smooth1 is not None and smooth2 is not None
            dst = y1.dtype
        elif version == 2:
            early, out1, out2, dst = _phase1_v2(soc, x1, x2, gamma, smooth1, smooth2, y1, y2,
                                                x_out, scale1, scale2, output_mask)
        else:
            raise ValueError("version must be 1 or 2")
        if early:
            return Verdict(0, SUCCESS, "empty tensor: early return, nothing written",
                           early_return=True)
        l0 = _l0_tensors(x1, dst, out1, out2, x_out, scale1, scale2)
        if soc == "a2":
            _tiling_a2(x1, x2, gamma, smooth1, smooth2, beta, epsilon, output_mask, l0)
        else:
            _tiling_950(x1, x2, gamma, smooth1, smooth2, beta, output_mask, out1, out2, l0)
    except _Reject as rej:
        v = rej.verdict
        if v.phase == 2 and tiling_reject == "phase1":
            return Verdict(1, INNER_TILING_ERROR, v.rule, vendor_undefined=v.vendor_undefined)
        return v
    return Verdict(0, SUCCESS, "accepted")


# ---------------------------------------------------------------------------------------------
# phase 1: op_api
# ---------------------------------------------------------------------------------------------

def _phase1_v1(x1, x2, gamma, s1, s2, y1, y2, x_out, scale1, scale2) -> bool:
    for name, t in (("x1", x1), ("x2", x2), ("gamma", gamma), ("y1Out", y1), ("y2Out", y2),
                    ("xOut", x_out), ("scale1Out", scale1), ("scale2Out", scale2)):
        if t is None:
            _fail(1, PARAM_NULLPTR, f"{name} is NULL")
    for name, t in (("x1", x1), ("x2", x2), ("gamma", gamma), ("smoothScale1", s1),
                    ("smoothScale2", s2)):
        if t is not None and t.dtype not in X_TYPES:
            _fail(1, PARAM_INVALID, f"{name} dtype {t.dtype} not FLOAT16/BFLOAT16")
    for name, t in (("y1Out", y1), ("y2Out", y2)):
        if t.dtype not in Y_TYPES_V1_OPAPI:
            _fail(1, PARAM_INVALID, f"{name} dtype {t.dtype} not INT8/FP8/HIFLOAT8")
    if y1.dtype != y2.dtype:
        _fail(1, PARAM_INVALID, "y1Out and y2Out dtypes differ")
    if x_out.dtype not in X_TYPES:
        _fail(1, PARAM_INVALID, f"xOut dtype {x_out.dtype} not FLOAT16/BFLOAT16")
    for name, t in (("scale1Out", scale1), ("scale2Out", scale2)):
        if t.dtype != "float32":
            _fail(1, PARAM_INVALID, f"{name} dtype {t.dtype} not FLOAT")
    if x1.shape != x2.shape:
        _fail(1, INNER_TILING_ERROR, "x1 and x2 shape mismatch")
    if gamma.rank != 1:
        _fail(1, INNER_TILING_ERROR, "gamma shape dim num should be 1")
    if x1.rank == 0:
        _fail(1, INNER_TILING_ERROR, "x1 has rank 0 (vendor reads dim -1; emulator rejects)",
              undefined=True)
    if x1.last() != gamma.shape[0]:
        _fail(1, INNER_TILING_ERROR, "gamma shape isn't consistent with the last dimension of x1")
    for name, t in (("smoothScale1", s1), ("smoothScale2", s2)):
        if t is not None and t.shape != gamma.shape:
            _fail(1, INNER_TILING_ERROR, f"{name} shape mismatch with gamma")
    if x1.empty or gamma.empty or y2.empty:
        return True
    out2 = s1 is not None and s2 is not None
    for name, t, on in (("y1Out", y1, True), ("y2Out", y2, out2)):
        if on and t.shape != x1.shape:
            _fail(1, INNER_NULLPTR, f"{name} shape differs from x1 (ViewCopy of the result; "
                  "vendor behaviour not pinned down, emulator rejects)", undefined=True)
    return False


def _phase1_v2(soc, x1, x2, gamma, s1, s2, y1, y2, x_out, scale1, scale2, mask):
    has1, has2 = s1 is not None, s2 is not None
    if mask is not None:
        mask = [bool(v) for v in mask]
        if len(mask) != 2:
            _fail(1, PARAM_INVALID, f"the length of outputMask must be 2, got {len(mask)}")
        if has1 and not mask[0]:
            _fail(1, PARAM_INVALID, "smoothScale1Optional is not NULL but outputMask[0] is false")
        if has2 and not mask[1]:
            _fail(1, PARAM_INVALID, "smoothScale2Optional is not NULL but outputMask[1] is false")
        if not mask[0] and not mask[1]:
            _fail(1, PARAM_INVALID, "outputMask[0] and outputMask[1] are both false")
        out1, out2 = mask
    else:
        if has2 and not has1:
            _fail(1, PARAM_INVALID, "without outputMask, smoothScale2Optional needs "
                  "smoothScale1Optional")
        out1, out2 = True, has1 and has2
    required = [("x1", x1), ("x2", x2), ("gamma", gamma), ("xOut", x_out)]
    if out1:
        required += [("y1Out", y1), ("scale1Out", scale1)]
    if out2:
        required += [("y2Out", y2), ("scale2Out", scale2)]
    for name, t in required:
        if t is None:
            _fail(1, PARAM_NULLPTR, f"{name} is NULL")
    for name, t in (("y1Out", y1), ("y2Out", y2), ("scale1Out", scale1), ("scale2Out", scale2)):
        if t is None:
            _fail(1, PARAM_NULLPTR, f"inactive {name} is NULL (vendor dereferences it; emulator "
                  "reports NULL)", undefined=True)
    if not (soc == "950" and gamma.empty):
        if x1.empty or x2.empty or gamma.empty or y2.empty:
            return True, out1, out2, None
    if out1 and out2 and y1.dtype != y2.dtype:
        _fail(1, PARAM_INVALID, "y1 and y2 dtype must be same when both are active")
    active_dtype = y1.dtype if out1 else y2.dtype
    actives = [(n, t) for n, t, on in (("y1Out", y1, out1), ("y2Out", y2, out2)) if on]
    if active_dtype == "int32":
        for name, t in actives:
            if x1.rank == 0 or t.rank == 0 or x1.last() != 8 * t.last():
                _fail(1, PARAM_INVALID, f"for INT32 (packed int4) output, {name} last dim must be "
                      "1/8 of x1 last dim")
        for name, t in actives:
            if t.shape[:-1] != x1.shape[:-1]:
                _fail(1, INNER_NULLPTR, f"{name} leading dims differ from x1 (ViewCopy of the "
                      "result; vendor behaviour not pinned down, emulator rejects)", undefined=True)
        dst = "int4"
    else:
        for name, t in actives:
            if t.shape != x1.shape:
                _fail(1, INNER_TILING_ERROR, f"{name} shape must be same as x1")
        dst = active_dtype
    return False, out1, out2, dst


# ---------------------------------------------------------------------------------------------
# phase 2: the L0 op's kernel selection and tiling (results discarded at phase 1)
# ---------------------------------------------------------------------------------------------

def _l0_tensors(x1, dst, out1, out2, x_out, scale1, scale2) -> dict:
    """Output tensors as the L0 op allocates them (B.2): active y as x1's shape with dtype dst,
    active scale with the user's shape and dtype, inactive ones [1]."""
    one = (1,)
    return {
        "y1": Tensor(x1.shape if out1 else one, dst),
        "y2": Tensor(x1.shape if out2 else one, dst),
        "x": Tensor(x_out.shape, x_out.dtype),
        "scale1": Tensor(scale1.shape if out1 else one, scale1.dtype),
        "scale2": Tensor(scale2.shape if out2 else one, scale2.dtype),
        "out1": out1, "out2": out2, "dst": dst,
    }


def _kernel_binary(x1, x2, gamma, s1, s2, beta, l0, y_types):
    """OpDef: x1, x2, gamma, smooth scales, beta and xOut share one dtype, FLOAT16 or BFLOAT16."""
    for name, t in (("x2", x2), ("gamma", gamma), ("smoothScale1", s1), ("smoothScale2", s2),
                    ("beta", beta)):
        if t is not None and t.dtype != x1.dtype:
            _fail(2, INNER_NULLPTR, f"no kernel binary: {name} dtype differs from x1")
    if x1.dtype not in X_TYPES:
        _fail(2, INNER_NULLPTR, f"no kernel binary: x1 dtype {x1.dtype}")
    if l0["x"].dtype != x1.dtype:
        _fail(2, INNER_NULLPTR, "no kernel binary: xOut dtype differs from x1")
    if l0["dst"] not in y_types:
        _fail(2, INNER_NULLPTR, f"no kernel binary: y dtype {l0['dst']}")


def _tiling_a2(x1, x2, gamma, s1, s2, beta, epsilon, mask, l0):
    def present(t):                      # the 910B tiling treats an empty optional as absent
        return t is not None and not t.empty

    if not np.float32(epsilon) > 0 and not np.isnan(np.float32(epsilon)):
        _fail(2, INNER_NULLPTR, "epsilon must be greater than zero")
    if x1.rank == 0 or x2.rank == 0 or gamma.rank == 0:
        _fail(2, INNER_NULLPTR, "the shape dims of x1, x2 and gamma should be greater than 0")
    if x1.rank != x2.rank:
        _fail(2, INNER_NULLPTR, "the shape dims of x1 and x2 should be equal")
    if gamma.rank != 1:
        _fail(2, INNER_NULLPTR, "gamma shape dim num should be 1")
    if l0["x"].rank == 0 or l0["x"].last() != gamma.shape[0]:
        _fail(2, INNER_NULLPTR, "gamma shape isn't consistent with the last dimension of x")
    for name, t in (("x1", x1), ("x2", x2), ("gamma", gamma)):
        if t.dtype not in X_TYPES:
            _fail(2, INNER_NULLPTR, f"the dtypes of x1, x2 and gamma should be float16 or "
                  f"bfloat16 ({name})")
    for name, t in (("smoothScale1", s1), ("smoothScale2", s2), ("beta", beta)):
        if present(t) and t.dtype not in X_TYPES:
            _fail(2, INNER_NULLPTR, f"the dtype of optional input {name} should be float16 or "
                  "bfloat16")
    if l0["dst"] not in Y_TYPES_A2_KERNEL:
        _fail(2, INNER_NULLPTR, f"the dtypes of y1 and y2 should be int8 or int4 ({l0['dst']})")
    if l0["x"].dtype not in X_TYPES:
        _fail(2, INNER_NULLPTR, "the dtype of x should be float16 or bfloat16")
    if l0["scale1"].dtype != "float32" or l0["scale2"].dtype != "float32":
        _fail(2, INNER_NULLPTR, "the dtypes of scale1 and scale2 should be float32")
    for name, t in (("smoothScale1", s1), ("smoothScale2", s2)):
        if present(t) and t.shape != gamma.shape:
            _fail(2, INNER_NULLPTR, f"the shapes of {name} and gamma should be the same")
    if mask is None and present(s2) and not present(s1):
        _fail(2, INNER_NULLPTR, "smooth2 exist but smooth1 not exist, bad input")
    _kernel_binary(x1, x2, gamma, s1, s2, beta, l0, Y_TYPES_A2_KERNEL)
    # Not checked by the 910B tiling, but the kernel would read or write out of bounds:
    if x2.shape != x1.shape or x1.last() != gamma.shape[0] or l0["x"].shape != x1.shape:
        _fail(2, INNER_NULLPTR, "x2 / xOut shape differs from x1, or x1 last dim from gamma "
              "(not checked by the 910B tiling; emulator rejects)", undefined=True)
    if l0["dst"] == "int4" and x1.last() % 2:
        _fail(2, INNER_NULLPTR, "INT4 output with an odd last dim (not checked by the 910B "
              "tiling, rows would be misaligned; emulator rejects)", undefined=True)
    rows = int(np.prod(x1.shape[:-1], dtype=np.int64))
    for k in (1, 2):
        if l0[f"out{k}"] and l0[f"scale{k}"].numel != rows:
            _fail(2, INNER_NULLPTR, f"scale{k}Out does not hold one float per row (not checked "
                  "by the 910B tiling; emulator rejects)", undefined=True)


def _tiling_950(x1, x2, gamma, s1, s2, beta, mask, out1, out2, l0):
    if mask is None and s2 is not None and s1 is None:
        _fail(2, INNER_NULLPTR, "smoothScale2 requires smoothScale1 when outputMask is "
              "unavailable")
    if not 2 <= x1.rank <= 8 or not 2 <= x2.rank <= 8:
        _fail(2, INNER_NULLPTR, "the shape dims of x1 and x2 should be in range [2, 8]")
    for name, t in (("gamma", gamma), ("smoothScale1", s1), ("smoothScale2", s2), ("beta", beta)):
        if t is not None and t.rank != 1:
            _fail(2, INNER_NULLPTR, f"{name} must be 1D")
    if x2.shape != x1.shape:
        _fail(2, INNER_NULLPTR, "x2 shape should be same as x1")
    if x1.last() != gamma.shape[0]:
        _fail(2, INNER_NULLPTR, "gamma should match last dim of x1")
    for name, t in (("smoothScale1", s1), ("smoothScale2", s2), ("beta", beta)):
        if t is not None and t.shape != gamma.shape:
            _fail(2, INNER_NULLPTR, f"{name} shape should be same as gamma")
    if l0["dst"] == "int4" and x1.last() % 2:
        _fail(2, INNER_NULLPTR, "when dst_type is int4, the last dimension of x1 must be even")
    if x1.dtype not in X_TYPES:
        _fail(2, INNER_NULLPTR, "x1 dtype should be float16 or bf16")
    for name, t in (("x2", x2), ("gamma", gamma), ("smoothScale1", s1), ("smoothScale2", s2)):
        if t is not None and t.dtype != x1.dtype:
            _fail(2, INNER_NULLPTR, f"{name} dtype should be same as x1")
    if beta is not None and beta.dtype != gamma.dtype:
        _fail(2, INNER_NULLPTR, "beta dtype should be same as gamma")
    if l0["x"].shape != x1.shape:
        _fail(2, INNER_NULLPTR, "output x shape should be same as x1")
    prefix = x1.shape[:-1]
    rows = int(np.prod(prefix, dtype=np.int64))
    for k, on in ((1, out1), (2, out2)):
        s = l0[f"scale{k}"]
        if not on:
            continue
        if s.rank == 1:
            ok = s.shape[0] == rows
        elif s.rank == x1.rank - 1:
            ok = s.shape == prefix
        elif s.rank == x1.rank:
            ok = s.shape[:-1] == prefix and s.shape[-1] == 1
        else:
            ok = False
        if not ok:
            _fail(2, INNER_NULLPTR, f"scale{k} shape must be x1 without its last dim")
    for k, on in ((1, out1), (2, out2)):
        if on and l0[f"y{k}"].dtype not in Y_TYPES_950_KERNEL:
            _fail(2, INNER_NULLPTR, f"y{k} dtype should be int8, int4, fp8e4m3, fp8e5m2 or hifp8")
        if on and l0[f"scale{k}"].dtype != "float32":
            _fail(2, INNER_NULLPTR, f"scale{k} dtype should be float32")
    if l0["x"].dtype != x1.dtype:
        _fail(2, INNER_NULLPTR, "output x dtype should be same as x1")
    _kernel_binary(x1, x2, gamma, s1, s2, beta, l0, Y_TYPES_950_KERNEL)
