"""Expected phase-1 status of aclnnGroupedDynamicMx{Quant,QuantV2}GetWorkspaceSize (spec §2),
as a function of an argument description, for table-driven tests.

Order and codes follow the vendor op_api (hicann/ops-nn quant/grouped_dynamic_mx_quant/op_api,
master e5c3fa9 = generation "G2"), then the kernel tiling checks (§2.2). On the real toolkit a
tiling rejection crashes the process in ViewCopy; the emulator refuses it with 561103 instead
(spec correction 1), which is what this function returns. "G2+" models the stricter V2 op_api of
ops-nn 59f9e06 (§2.3) on top of the same tiling. groupIndex VALUES are never validated.

Not modelled (they depend on allocation failures, not on the arguments): #0 executor creation
(561101), #17 Contiguous copy failure and #20 ViewCopy failure (561103).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .gmq_scales import narrow_to_float

# aclDataType values
ACL_FLOAT, ACL_FLOAT16, ACL_INT32, ACL_INT64, ACL_BF16 = 0, 1, 3, 9, 27
ACL_FLOAT8_E5M2, ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E8M0 = 35, 36, 37
ACL_FLOAT4_E2M1, ACL_FLOAT4_E1M2 = 40, 41

# aclnnStatus values
ACLNN_SUCCESS = 0
ACLNN_ERR_PARAM_NULLPTR = 161001
ACLNN_ERR_PARAM_INVALID = 161002
ACLNN_ERR_INNER_NULLPTR = 561103

FP8_TYPES = (ACL_FLOAT8_E4M3FN, ACL_FLOAT8_E5M2)
FP4_TYPES = (ACL_FLOAT4_E2M1, ACL_FLOAT4_E1M2)
GENERATIONS = ("G2", "G2+")


@dataclass(frozen=True)
class TensorArg:
    dtype: int
    shape: tuple[int, ...]
    contiguous: bool = True

    @property
    def is_empty(self) -> bool:
        size = 1
        for d in self.shape:
            size *= d
        return size == 0


@dataclass(frozen=True)
class GmqCall:
    """One GetWorkspaceSize call. None for a tensor or roundMode means a NULL pointer.
    scale_alg / dst_type_max are ignored for version 1 (it hard-wires 0 / 0.0)."""
    x: TensorArg | None
    group_index: TensorArg | None
    y: TensorArg | None
    mxscale: TensorArg | None
    round_mode: str | None = "rint"
    dst_type: int = ACL_FLOAT8_E4M3FN
    blocksize: int = 32
    scale_alg: int = 0
    dst_type_max: float = 0.0
    version: int = 2
    soc: str = "Ascend950PR"


@dataclass(frozen=True)
class Verdict:
    status: int
    rule: str = ""          # which check decided it ("" = passed everything)
    launches: bool = False  # True when a kernel is queued (status 0 and x not empty)


def make_call(m: int, n: int, g: int, *, x_dtype: int = ACL_BF16,
              y_dtype: int = ACL_FLOAT8_E4M3FN, **changes) -> GmqCall:
    """A valid call for x [m, n], y of y_dtype (dstType the same) and g groups; keyword changes
    then replace GmqCall fields."""
    call = GmqCall(x=TensorArg(x_dtype, (m, n)), group_index=TensorArg(ACL_INT32, (g,)),
                   y=TensorArg(y_dtype, (m, n)),
                   mxscale=TensorArg(ACL_FLOAT8_E8M0, (_c_div(m, 64) + g, n, 2)),
                   dst_type=y_dtype)
    return replace(call, **changes)


def is_950_family(soc: str) -> bool:
    """The op_api runs only on "regbase" (arch35) SoCs: the Ascend950 family."""
    return soc.startswith("Ascend950")


def _c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _bad(rule: str, status: int = ACLNN_ERR_PARAM_INVALID) -> Verdict:
    return Verdict(status, rule)


def _g2plus_attr_rule(call: GmqCall) -> str:
    """ops-nn 59f9e06 V2: extra attribute checks after the dstType check (§2.3)."""
    fp4 = call.dst_type in FP4_TYPES
    d = call.dst_type_max
    if not fp4 and call.round_mode != "rint":
        return "g2plus roundMode for FP8"
    if fp4 and call.scale_alg == 1:
        return "g2plus scaleAlg 1 with FP4"
    if not fp4 and call.scale_alg == 2:
        return "g2plus scaleAlg 2 with FP8"
    if call.dst_type == ACL_FLOAT4_E2M1 and not (d == 0.0 or 6.0 <= d <= 12.0):
        return "g2plus dstTypeMax for E2M1"
    if call.dst_type == ACL_FLOAT4_E1M2 and not (d == 0.0 or 1.75 <= d <= 3.5 - 2.5e-7):
        return "g2plus dstTypeMax for E1M2"
    if not fp4 and d != 0.0:
        return "g2plus dstTypeMax for FP8"
    return ""


def _tiling_rule(call: GmqCall) -> str:
    """Kernel tiling rejections that the op_api lets through (§2.2), in tiling order."""
    fp4 = call.dst_type in FP4_TYPES
    if call.group_index.dtype != ACL_INT32:
        return "tiling groupIndex dtype"              # only reachable with G2+ and INT64
    if not fp4 and call.round_mode != "rint":
        return "tiling roundMode for FP8"
    scale_alg = call.scale_alg if call.version == 2 else 0
    if fp4 and scale_alg == 1:
        return "tiling scaleAlg 1 with FP4"
    if not fp4 and scale_alg == 2:
        return "tiling scaleAlg 2 with FP8"
    d = float(narrow_to_float(call.dst_type_max if call.version == 2 else 0.0))
    if call.dst_type == ACL_FLOAT4_E2M1 and (d < 0 or 0 < d < 6 or d > 12):
        return "tiling dstTypeMax for E2M1"
    if call.dst_type == ACL_FLOAT4_E1M2 and (d < 0 or 0 < d < 1.75 or d > 3.5):
        return "tiling dstTypeMax for E1M2"
    if fp4 and call.x.shape[1] % 2:
        return "tiling odd n with FP4"
    return ""


def expected_status(call: GmqCall, generation: str = "G2") -> Verdict:
    """The status GetWorkspaceSize returns for `call` (spec §2.1 order)."""
    if generation not in GENERATIONS:
        raise ValueError(f"unknown generation {generation!r}")
    v2 = call.version == 2
    g2plus = generation == "G2+" and v2
    for name in ("x", "group_index", "round_mode", "y", "mxscale"):          # 1
        if getattr(call, name) is None:
            return _bad(f"nullptr {name}", ACLNN_ERR_PARAM_NULLPTR)
    if not is_950_family(call.soc):                                          # 2
        return _bad("platform")
    x, gi, y, mx = call.x, call.group_index, call.y, call.mxscale
    if x.dtype not in (ACL_FLOAT16, ACL_BF16):                               # 3
        return _bad("dtype x")
    if gi.dtype not in ((ACL_INT32, ACL_INT64) if g2plus else (ACL_INT32,)):  # 4
        return _bad("dtype groupIndex")
    if y.dtype not in (FP8_TYPES + FP4_TYPES if v2 else FP8_TYPES):          # 5
        return _bad("dtype y")
    if mx.dtype != ACL_FLOAT8_E8M0:                                          # 6
        return _bad("dtype mxscale")
    if call.round_mode not in (("rint", "round", "floor") if v2 else ("rint",)):  # 7
        return _bad("roundMode")
    if call.blocksize != 32:                                                 # 8
        return _bad("blocksize")
    if v2 and call.scale_alg not in (0, 1, 2):                               # 9
        return _bad("scaleAlg")
    if call.dst_type != y.dtype:                                             # 10
        return _bad("dstType")
    if g2plus and (rule := _g2plus_attr_rule(call)):
        return _bad(rule)
    for name, tensor, rank in (("x", x, 2), ("groupIndex", gi, 1), ("y", y, 2),
                               ("mxscale", mx, 3)):                          # 11
        if len(tensor.shape) != rank:
            return _bad(f"rank {name}")
    if y.shape != x.shape:                                                   # 12
        return _bad("shape y")
    m, n = x.shape
    if g2plus and y.dtype in FP4_TYPES and n != -1 and n % 2:
        return _bad("g2plus odd n with FP4")
    if mx.shape[2] != 2:                                                     # 13
        return _bad("shape mxscale[2]")
    if mx.shape[1] != n:
        return _bad("shape mxscale[1]")
    if mx.shape[0] != _c_div(m, 64) + gi.shape[0]:
        return _bad("shape mxscale[0]")
    if gi.is_empty:                                                          # 14
        return _bad("empty groupIndex")
    if x.is_empty:                                                           # 15
        return Verdict(ACLNN_SUCCESS, "empty x")
    if v2 and y.dtype in FP4_TYPES and not y.contiguous:                     # 16
        return _bad("non-contiguous FP4 y")
    if rule := _tiling_rule(call):                                           # 18
        return _bad(rule, ACLNN_ERR_INNER_NULLPTR)
    if not mx.contiguous:                                                    # 19
        return _bad("non-contiguous mxscale")
    return Verdict(ACLNN_SUCCESS, "", launches=True)
