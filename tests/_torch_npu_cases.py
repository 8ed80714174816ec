"""Ordinary torch code on `npu` tensors, as cases for tests/test_torch_npu.py: tensor creation, copies
(H2D / D2H / D2D, non-contiguous, casting) and the elementwise operators.

A case is a few lines of torch code that set `r`; the child (tests/_torch_npu_child.py) runs them once
with the inputs on "npu" and once on "cpu". The golden value of each case is named by `ref`:
  "torch"     torch CPU's result, bit for bit: data movement, and IEEE-exact fp32 / integer arithmetic
              (one rounding per operation, as the NPU's fp32 vector unit and torch CPU both do);
  a function  the independent NumPy reference (tests/reference/elementwise.py) of the NPU's rounding:
              every fp16 / bf16 / fp8 result, casts whose NPU rule torch leaves undefined, and alpha != 1
              (the NPU's Axpy rounds y * alpha to fp32 before adding; torch CPU fuses a + alpha * y
              into one FMA, so its last bit may differ).
Names in the code: `a`, `b`, ... the inputs on the device; `a_host` ... the same on the CPU; `dev`;
`npu(t)` = t.npu() on the npu run (the identity on the cpu run).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import ml_dtypes
import numpy as np

from reference import elementwise as R

RNG = np.random.default_rng(20261202)

# Every dtype torch_npu 2.13 maps to an aclDataType (CalcuOpUtil.cpp, AT_ALL_SCALAR_TYPE_AND_ACL_DATATYPE_PAIR).
MAPPED_DTYPES = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool",
                 "uint16", "uint32", "uint64", "complex32", "complex64", "complex128", "float8_e4m3fn",
                 "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn_x2"]
ITEMSIZE = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1, "int16": 2, "int32": 4,
            "int64": 8, "bool": 1, "uint16": 2, "uint32": 4, "uint64": 8, "complex32": 4, "complex64": 8,
            "complex128": 16, "float8_e4m3fn": 1, "float8_e5m2": 1, "float8_e8m0fnu": 1, "float4_e2m1fn_x2": 1}
NP_DTYPES = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
             "bfloat16": ml_dtypes.bfloat16}

# Creation ops and the selfRef dtypes the vendor documents for the aclnn operator each one calls
# (hicann/ops-math: math/ones_like/docs/aclnnInplaceOne.md, math/zero_op/docs/aclnnInplaceZero.md,
# conversion/fill/docs/aclnnInplaceFillScalar.md, Ascend 950 rows). torch.full and .fill_ both call
# aclnnInplaceFillScalar.
_FILL = {"float32", "float16", "uint8", "int8", "int16", "int32", "int64", "float64", "complex64", "complex128",
         "bool", "bfloat16", "uint16", "uint32", "uint64"}
VENDOR_CREATION = {
    "ones": ("aclnnInplaceOne", {"float32", "float16", "int8", "int16", "int32", "int64", "uint8", "bool", "float64",
                                 "bfloat16"}),
    "zeros": ("aclnnInplaceZero", {"int8", "int32", "int64", "uint8", "float16", "float32", "bool", "float64", "int16",
                                   "uint16", "complex128", "complex64", "bfloat16", "float8_e5m2", "float8_e4m3fn",
                                   "float4_e2m1fn_x2"}),
    "full": ("aclnnInplaceFillScalar", _FILL),
    "fill_": ("aclnnInplaceFillScalar", _FILL),
}
# What the vendor supports and the emulator does not (yet): the engine has no complex or 4-bit
# elements. The emulator refuses these with 161002 and a message naming the dtype.
EMULATOR_GAPS = {"ones": set(), "zeros": {"complex64", "complex128", "float4_e2m1fn_x2"},
                 "full": {"complex64", "complex128"}, "fill_": {"complex64", "complex128"}}
# The value each dtype is filled with by torch.full / .fill_ (rounded as the NPU casts the scalar).
FILL_VALUE = {"bool": True, "uint8": 200, "int8": -7, "int16": -300, "int32": -70000, "int64": -(2 ** 40),
              "uint16": 60000, "uint32": 4000000000, "uint64": 2 ** 40, "float8_e8m0fnu": 2.0}
CREATION_SHAPE = (2, 3)


def expected_fill(name: str, op: str) -> np.ndarray:
    if op in ("ones", "zeros"):
        return np.full(CREATION_SHAPE, 1 if op == "ones" else 0, np_dtype(name))
    value = FILL_VALUE.get(name, 0.1)
    if isinstance(value, float):   # the NPU's scalar cast: a double goes to fp32 first, then narrower
        return R.cast(np.full(CREATION_SHAPE, value, np.float64), name)
    return np.full(CREATION_SHAPE, value, np_dtype(name))


def np_dtype(name: str) -> np.dtype:
    return np.dtype(NP_DTYPES.get(name, name))


def values(name: str, shape, *, specials: bool = True, small_ints: bool = False) -> np.ndarray:
    """Values that exercise rounding: integers over the whole range (or small ones), floats spread over
    magnitudes, with 0, -0, +-inf, NaN and a tie of the fp16 / bf16 grid in front when `specials`."""
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    dt = np_dtype(name)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = (max(info.min, -50), min(info.max, 50)) if small_ints else (info.min, info.max)
        return RNG.integers(lo, hi, shape, endpoint=True, dtype=np.int64).astype(dt)
    x = RNG.standard_normal(shape) * 10.0 ** RNG.integers(-3, 4, shape)
    flat = x.reshape(-1)
    if specials:
        flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0 + 2.0 ** -11, 1.0 + 2.0 ** -8, 70000.0][:flat.size]
    return x.astype(np.float64) if name == "float64" else R.cast(x.astype(np.float32), name)


@dataclass
class Case:
    name: str
    code: str
    inputs: dict[str, np.ndarray]
    ref: str | Callable[..., np.ndarray] = "torch"
    why: str = ""
    tol: float | None = None      # None: bit for bit; else max|npu - ref| <= tol * max|ref| (class c operators)


def _copies(dtype: str) -> list[Case]:
    a = values(dtype, (4, 6))
    p = f"{dtype}_"
    return [
        Case(p + "h2d_transposed", "r = npu(a_host.t())", {"a": a}),
        Case(p + "h2d_slice_step_offset", "r = npu(a_host[1:, ::2])", {"a": a}),
        Case(p + "h2d_to", "r = a_host.to(dev)", {"a": a}),
        Case(p + "d2h_transposed", "r = a.t().cpu()", {"a": a}),
        Case(p + "d2h_slice_step_offset", "r = a[::2, 1::3].cpu()", {"a": a}),
        Case(p + "d2d_t_contiguous", "r = a.t().contiguous()", {"a": a}),
        Case(p + "d2d_slice_clone", "r = a[1:, ::2].clone()", {"a": a}),
        Case(p + "d2d_offset_contiguous", "r = a[2:, 1:5].contiguous()", {"a": a}),
        Case(p + "d2d_copy_between_strided_views",
             "r = torch.zeros(6, 8, dtype=a.dtype, device=a.device)\nr[::2, 1::2].copy_(a.t()[1:4, :4])", {"a": a}),
        Case(p + "d2d_copy_broadcast", "r = torch.zeros(3, 6, dtype=a.dtype, device=a.device)\nr.copy_(a[1])",
             {"a": a}),
    ]


def _cast(dst: str) -> Callable[..., np.ndarray]:
    return lambda a, **_: R.cast(a, dst)


def _casts() -> list[Case]:
    f32 = values("float32", (4, 6))
    f32[0, :4] = [65520.0, 65519.0, 449.0, 3.0e38]      # fp16 / e4m3fn / bf16 overflow boundaries
    f32[1, :3] = [2.0 ** -20, -(2.0 ** -24), 2.0 ** -9 * 1.5]   # fp16 / fp8 subnormals
    in_range = (RNG.standard_normal((4, 6)) * 60).astype(np.float32)    # float -> int truncation
    big_ints = RNG.integers(-2 ** 31, 2 ** 31 - 1, (4, 6), dtype=np.int64).astype(np.int32)
    cases = []
    # (.double() on an npu tensor gives float32: torch_npu's _to_copy replaces Double by Float and warns
    # "Device do not support double dtype now"; a copy_ into a float64 tensor does cast.)
    for dst, code in [("float16", "r = a.half()"), ("bfloat16", "r = a.bfloat16()"),
                      ("float64", "r = torch.empty(4, 6, dtype=torch.float64, device=a.device).copy_(a)"),
                      ("float8_e4m3fn", "r = a.to(torch.float8_e4m3fn)"), ("float8_e5m2", "r = a.to(torch.float8_e5m2)"),
                      ("bool", "r = a.bool()")]:
        cases.append(Case(f"cast_float32_to_{dst}", code, {"a": f32}, _cast(dst), "the NPU's Cast (RNE; E4M3FN overflow is NaN)"))
    cases += [
        Case("cast_float32_to_float16_transposed", "r = a.t().half()", {"a": f32}, lambda a: R.cast(a.T, "float16")),
        Case("cast_float32_to_bfloat16_slice", "r = a[::2, 1:].to(torch.bfloat16)", {"a": f32},
             lambda a: R.cast(a[::2, 1:], "bfloat16")),
        Case("cast_h2d_to_npu_float16", "r = a_host.to(dev, torch.float16)", {"a": f32}, _cast("float16")),
        Case("cast_float16_to_float32", "r = a.float()", {"a": values("float16", (4, 6))}),
        Case("cast_bfloat16_to_float32", "r = a.float()", {"a": values("bfloat16", (4, 6))}),
        Case("cast_bfloat16_to_float16", "r = a.half()", {"a": values("bfloat16", (4, 6))}, _cast("float16"),
             "through fp32; bf16 values beyond fp16's range become inf"),
        Case("cast_float8_e4m3fn_to_float32", "r = a.float()", {"a": R.cast(f32, "float8_e4m3fn")}),
        Case("cast_int32_to_float16", "r = a.half()", {"a": big_ints}, _cast("float16"),
             "int -> fp16 rounds through fp32 on the NPU"),
        Case("cast_int32_to_bfloat16", "r = a.bfloat16()", {"a": big_ints}, _cast("bfloat16")),
        Case("cast_int32_to_float32", "r = a.float()", {"a": big_ints}),
        Case("cast_float32_to_int32_in_range", "r = a.to(torch.int32)", {"a": in_range}),
        Case("cast_float32_to_int8_in_range", "r = a.to(torch.int8)", {"a": in_range}),
        Case("cast_int64_to_int8_wraps", "r = a.to(torch.int8)", {"a": values("int64", (4, 6))}),
        Case("cast_copy_between_strided_views",
             "r = torch.zeros(6, 8, dtype=torch.float16, device=a.device)\nr[::2, 1::2].copy_(a.t()[1:4, :4])",
             {"a": f32}, _strided_cast_ref),
    ]
    return cases


def _strided_cast_ref(a):
    r = np.zeros((6, 8), np.float16)
    r[::2, 1::2] = R.cast(a.T[1:4, :4], "float16")
    return r


def _binary_ref(op: str, scalar=None, out: str | None = None):
    """NumPy reference of `a op b` in torch's promoted dtype, or of `a op scalar` for an fp16 / bf16 `a`:
    the scalar as fp32 and the op in fp32, rounded once to a's dtype. (The NPU keeps fp16 when the scalar
    fits it, else computes in fp32; for one +, -, *, / both give the same bits, since fp32 carries more
    than 2p + 2 bits of an fp16 / bf16 result and so the double rounding is innocuous.)"""
    def ref(a, b=None):
        if b is None:
            return R.binary(op, a, np.float32(scalar), "float32", out or a.dtype.name)
        compute = R.promote(a.dtype.name, b.dtype.name)
        if op == "div" and compute not in R.FLOATS:
            compute = "float32"
        return R.binary(op, a, b, compute, out or compute)
    return ref


def _axpy_ref(alpha: float, sign: float = 1.0):
    def ref(a, b):
        compute = R.promote(a.dtype.name, b.dtype.name)
        return R.axpy_f32(a, b, sign * alpha, compute, compute)
    return ref


OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}


def _arith() -> list[Case]:
    cases = []
    shape = (4, 6)
    for dt in ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int16", "int8", "uint8", "bool"]:
        a, b = values(dt, shape), values(dt, shape)
        if dt in ("float16", "bfloat16"):
            a[0, :2] = [60000.0, -60000.0] if dt == "float16" else [3.0e38, -3.0e38]   # overflow to +-inf
            b[0, :2] = a[0, :2]
        exact = dt not in ("float16", "bfloat16")
        for op, sym in OPS.items():
            if dt == "bool" and op in ("sub", "div"):
                continue                        # torch refuses bool subtraction; bool / bool is covered by ints
            ref = "torch" if exact else _binary_ref(op)
            cases.append(Case(f"{dt}_{op}_tensor", f"r = a {sym} b", {"a": a, "b": b}, ref))
        if dt == "bool":
            continue
        row, col, lead = values(dt, (6,)), values(dt, (4, 1)), values(dt, (3, 1, 6))
        for op, sym, other in [("add", "+", row), ("mul", "*", col), ("sub", "-", lead), ("div", "/", row)]:
            cases.append(Case(f"{dt}_{op}_broadcast_{'x'.join(map(str, other.shape))}", f"r = a {sym} b",
                              {"a": a, "b": other}, "torch" if exact else _binary_ref(op)))
        for op, sym, s in [("add", "+", 2.5), ("sub", "-", 3), ("mul", "*", 0.1), ("div", "/", 3.0), ("mul", "*", 100)]:
            cases.append(Case(f"{dt}_{op}_scalar_{s}", f"r = a {sym} {s!r}", {"a": a},
                              "torch" if exact else _binary_ref(op, s)))
        cases.append(Case(f"{dt}_rmul_scalar", "r = 2.5 * a", {"a": a}, "torch" if exact else _binary_ref("mul", 2.5)))
        cases.append(Case(f"{dt}_add_noncontiguous", "r = a.t() + b.t()[:, ::1]", {"a": a, "b": b},
                          "torch" if exact else lambda a, b: _binary_ref("add")(a.T, b.T)))
    cases += _alpha_and_inplace() + _mixed()
    return cases


def _alpha_and_inplace() -> list[Case]:
    cases = []
    shape = (4, 6)
    axpy_why = "the NPU's Axpy rounds b * alpha to fp32 before the add; torch CPU fuses both into one FMA"
    for dt in ["float32", "float16", "bfloat16"]:
        a, b = values(dt, shape), values(dt, shape)
        cases += [
            Case(f"{dt}_add_alpha", "r = torch.add(a, b, alpha=2.5)", {"a": a, "b": b}, _axpy_ref(2.5), axpy_why),
            Case(f"{dt}_sub_alpha", "r = torch.sub(a, b, alpha=0.3)", {"a": a, "b": b}, _axpy_ref(0.3, -1.0), axpy_why),
            Case(f"{dt}_inplace_add_alpha", "r = a.add_(b, alpha=-1.7)", {"a": a, "b": b}, _axpy_ref(-1.7), axpy_why),
        ]
        exact = dt == "float32"
        cases += [
            Case(f"{dt}_inplace_add", "r = a.add_(b)", {"a": a, "b": b}, "torch" if exact else _binary_ref("add")),
            Case(f"{dt}_inplace_mul", "r = a.mul_(b)", {"a": a, "b": b}, "torch" if exact else _binary_ref("mul")),
            Case(f"{dt}_inplace_mul_scalar", "r = a.mul_(0.1)", {"a": a}, "torch" if exact else _binary_ref("mul", 0.1)),
            Case(f"{dt}_inplace_sub_scalar", "r = a.sub_(1.5)", {"a": a}, "torch" if exact else _binary_ref("sub", 1.5)),
            Case(f"{dt}_inplace_div", "r = a.div_(b)", {"a": a, "b": b}, "torch" if exact else _binary_ref("div")),
            Case(f"{dt}_inplace_add_broadcast", "r = a.add_(b[0])", {"a": a, "b": b},
                 "torch" if exact else lambda a, b: _binary_ref("add")(a, b[0])),
            Case(f"{dt}_inplace_mul_strided_view", "r = a\nr[:, ::2].mul_(b[:, 1::2])", {"a": a, "b": b},
                 "torch" if exact else _strided_inplace_ref),
        ]
    f64a, f64b = values("float64", shape), values("float64", shape)
    cases.append(Case("float64_add_alpha", "r = torch.add(a, b, alpha=2.5)", {"a": f64a, "b": f64b},
                      lambda a, b: a + b * 2.5, "DOUBLE on Ascend950 is Mul then Add, each rounded in fp64; torch "
                      "CPU may fuse them"))
    for dt in ["int32", "int64", "int8", "uint8", "int16"]:
        a, b = values(dt, shape), values(dt, shape)
        cases += [   # integer alpha is exact (wrapping) arithmetic: torch CPU is the reference
            Case(f"{dt}_add_alpha", "r = torch.add(a, b, alpha=3)", {"a": a, "b": b}),
            Case(f"{dt}_sub_alpha", "r = torch.sub(a, b, alpha=-2)", {"a": a, "b": b}),
            Case(f"{dt}_inplace_add", "r = a.add_(b)", {"a": a, "b": b}),
            Case(f"{dt}_inplace_mul", "r = a.mul_(b)", {"a": a, "b": b}),
            Case(f"{dt}_inplace_mul_scalar", "r = a.mul_(7)", {"a": a}),
            Case(f"{dt}_adds_alpha", "r = torch.add(a, 5, alpha=3)", {"a": a}),
        ]
    return cases


def _strided_inplace_ref(a, b):
    r = a.copy()
    r[:, ::2] = _binary_ref("mul")(a[:, ::2], b[:, 1::2])
    return r


def _mixed() -> list[Case]:
    shape = (4, 6)
    f16, bf16, f32 = values("float16", shape), values("bfloat16", shape), values("float32", shape)
    i32, i64, u8, i8 = (values(n, shape) for n in ("int32", "int64", "uint8", "int8"))
    bools = values("bool", shape)
    return [
        Case("mixed_float16_plus_float32", "r = a + b", {"a": f16, "b": f32}),
        Case("mixed_float16_plus_bfloat16", "r = a + b", {"a": f16, "b": bf16}),
        Case("mixed_int32_plus_float16", "r = a + b", {"a": i32, "b": f16}, _binary_ref("add"),
             "int32 is cast to fp16 (through fp32) before the add"),
        Case("mixed_int64_times_bfloat16", "r = a * b", {"a": i64, "b": bf16}, _binary_ref("mul")),
        Case("mixed_uint8_plus_int8", "r = a + b", {"a": u8, "b": i8}),
        Case("mixed_bool_times_int32", "r = a * b", {"a": bools, "b": i32}),
        Case("mixed_int32_div_int64", "r = a / b", {"a": i32, "b": i64}),
        Case("mixed_int32_times_float_scalar", "r = a * 2.5", {"a": i32}),
        Case("mixed_int64_plus_float32", "r = a + b", {"a": i64, "b": f32}),
        Case("mixed_float16_plus_0dim_float32", "r = a + torch.tensor(2.5)", {"a": f16}, _binary_ref("add", 2.5),
             "a 0-dim tensor does not promote: fp16 result"),
        Case("mixed_float32_inplace_add_float16", "r = a.add_(b)", {"a": f32, "b": f16}),
        Case("mixed_float16_inplace_add_float32", "r = a.add_(b)", {"a": f16, "b": f32},
             _binary_ref("add", out="float16"), "computed in fp32, stored to fp16"),
    ]


def _gather_and_shapes() -> list[Case]:
    """Indexing, concatenation, arange: data movement, bit for bit against torch CPU (class a)."""
    cases = []
    ids = np.array([[3, 0, -1], [2, 2, 4]], np.int64)
    for dt in ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "bool"]:
        a, b = values(dt, (5, 6)), values(dt, (5, 6))
        cases += [
            Case(f"{dt}_index_rows", "r = a[i]", {"a": a, "i": ids}),
            Case(f"{dt}_index_columns_strided", "r = a.t()[1:, i[0]]", {"a": a, "i": ids}),
            Case(f"{dt}_index_two_tensors", "r = a[i[0], i[1]]", {"a": a, "i": ids}),
            Case(f"{dt}_index_select", "r = torch.index_select(a, 1, i[1])", {"a": a, "i": ids}),
            Case(f"{dt}_index_put", "r = a.clone()\nr[i[0]] = b[:3]", {"a": a, "b": b, "i": ids}),
            Case(f"{dt}_cat", "r = torch.cat([a, b[:2]], 0)", {"a": a, "b": b}),
            Case(f"{dt}_cat_strided_dim1", "r = torch.cat([a.t(), b.t()[:, 1:]], 1)", {"a": a, "b": b}),
            Case(f"{dt}_stack", "r = torch.stack([a, b, a], -1)", {"a": a, "b": b}),
        ]
    w = values("float32", (7, 4), specials=False)
    cases += [
        Case("embedding", "r = torch.nn.functional.embedding(i, a)", {"a": w, "i": ids + 2}),
        Case("index_put_accumulate", "r = torch.zeros(5, 4, device=dev)\nr.index_put_((i[0],), a[:3], accumulate=True)",
             {"a": w, "i": np.array([[1, 3, 1]], np.int64)}, tol=0.0),
        Case("arange_int64", "r = torch.arange(2, 40, 3, device=dev)", {}),
        Case("arange_float32_integer_steps", "r = torch.arange(0, 16, 2, dtype=torch.float32, device=dev)", {}),
        Case("arange_float32_fractional", "r = torch.arange(-1.0, 1.0, 0.1, device=dev)", {}, tol=1e-6,
             why="the NPU computes start + round32(i * step) in fp32; torch CPU in double"),
    ]
    return cases


def _matmul_reductions_softmax() -> list[Case]:
    """Class c operators: within the stated tolerance of torch CPU (relative to the largest |ref|)."""
    def small(dt, shape):       # unit-scale values: no fp16 overflow in products and sums
        return R.cast(RNG.standard_normal(shape).astype(np.float32), dt)

    cases = []
    for dt, tol in [("float32", 1e-6), ("float16", 2e-3), ("bfloat16", 1.6e-2)]:
        a, b, c = small(dt, (3, 5, 8)), small(dt, (8, 6)), small(dt, (5, 6))
        cases += [
            Case(f"{dt}_matmul_3d_2d", "r = a @ b", {"a": a, "b": b}, tol=tol),
            Case(f"{dt}_matmul_transposed", "r = a[0] @ b.t().t()", {"a": a, "b": b}, tol=tol),
            Case(f"{dt}_bmm", "r = torch.bmm(a, a.transpose(1, 2))", {"a": a}, tol=tol),
            Case(f"{dt}_mm", "r = torch.mm(a[1], b)", {"a": a, "b": b}, tol=tol),
            Case(f"{dt}_addmm", "r = torch.addmm(c, a[2], b, beta=0.5, alpha=2.0)", {"a": a, "b": b, "c": c}, tol=tol),
            Case(f"{dt}_linear", "r = torch.nn.functional.linear(a, b.t(), c[0])", {"a": a, "b": b, "c": c}, tol=tol),
            Case(f"{dt}_sum_all", "r = a.sum()", {"a": a}, tol=tol),
            Case(f"{dt}_sum_dim", "r = a.sum(dim=1)", {"a": a}, tol=tol),
            Case(f"{dt}_mean_keepdim", "r = a.mean(-1, keepdim=True)", {"a": a}, tol=tol),
            Case(f"{dt}_softmax", "r = torch.softmax(a, dim=-1)", {"a": a}, tol=tol),
            Case(f"{dt}_softmax_dim0_strided", "r = torch.softmax(a.transpose(0, 2), dim=0)", {"a": a}, tol=tol),
            Case(f"{dt}_log_softmax", "r = torch.log_softmax(a, dim=1)", {"a": a}, tol=tol),
            Case(f"{dt}_amax", "r = a.amax(dim=(0, 2))", {"a": a}),
            Case(f"{dt}_max_all", "r = a.max()", {"a": a}),
            Case(f"{dt}_min_all", "r = a.min()", {"a": a}),
            Case(f"{dt}_max_dim", "r = a.max(dim=1).values", {"a": a}),
            Case(f"{dt}_max_dim_indices", "r = a.max(dim=1).indices", {"a": a}),
            Case(f"{dt}_argmax", "r = a.argmax(dim=-1)", {"a": a}),
        ]
    g, x = small("float32", (4, 9)), small("float32", (4, 9))
    cases.append(Case("softmax_backward", "x = a.clone().requires_grad_(True)\ny = torch.softmax(x, -1)\n"
                      "y.backward(b)\nr = x.grad", {"a": x, "b": g}, tol=1e-6))
    cases.append(Case("log_softmax_backward", "x = a.clone().requires_grad_(True)\ny = torch.log_softmax(x, -1)\n"
                      "y.backward(b)\nr = x.grad", {"a": x, "b": g}, tol=1e-6))
    cases.append(Case("matmul_backward", "x = a.clone().requires_grad_(True)\n(x @ b).sum().backward()\nr = x.grad",
                      {"a": x, "b": g.T.copy()}, tol=1e-6))
    cases.append(Case("embedding_backward", "w = a.clone().requires_grad_(True)\n"
                      "torch.nn.functional.embedding(i, w).sum().backward()\nr = w.grad",
                      {"a": x, "i": np.array([[0, 3, 3], [1, 0, 3]], np.int64)}, tol=0.0))
    cases.append(Case("index_backward", "w = a.clone().requires_grad_(True)\n(w[i] * 2.0).sum().backward()\n"
                      "r = w.grad", {"a": x, "i": np.array([[0, 3, 3], [1, 0, 3]], np.int64)}, tol=0.0))
    return cases


def _ulp_ref(fn, dtype: str):
    """float64 NumPy value rounded to fp32, then to the dtype: the emulator's transcendental rule
    (pyaclnn/ops/_fidelity.py, class c). Cases using it check the emulator, not an NPU."""
    def ref(a, b=None):
        with np.errstate(all="ignore"):
            v = fn(a.astype(np.float64)) if b is None else fn(a.astype(np.float64), b.astype(np.float64))
        return R.cast(R.cast(v, "float32"), dtype)
    return ref


def _pointwise() -> list[Case]:
    """Pointwise math, comparisons and masking: torch CPU bit for bit where the op is exact (class a),
    the float64-rounded-once reference for the transcendental ones (class c)."""
    shape = (4, 6)
    cases = []
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    for dt in ["float32", "float16", "bfloat16"]:
        a, b = values(dt, shape), values(dt, shape)
        pos = R.cast(np.abs(values("float32", shape, specials=False)) + 0.01, dt)
        exact = "torch" if dt == "float32" else None
        cases += [
            Case(f"{dt}_neg", "r = -a", {"a": a}),
            Case(f"{dt}_abs", "r = a.abs()", {"a": a}),
            Case(f"{dt}_ceil", "r = a.ceil()", {"a": a}),
            Case(f"{dt}_sqrt", "r = torch.sqrt(a)", {"a": pos}, _ulp_ref(np.sqrt, dt),
                 "IEEE sqrt (float64, rounded once); torch CPU's fp32 sqrt was measured 1 ulp off it here"),
            Case(f"{dt}_reciprocal", "r = 1 / a", {"a": pos}, exact or _ulp_ref(lambda v: 1.0 / v, dt)),
            Case(f"{dt}_rsub", "r = 1 - a", {"a": a},
                 exact or (lambda a, dt=dt: R.binary("sub", np.float32(1.0), a, "float32", dt))),
            Case(f"{dt}_exp", "r = torch.exp(a)", {"a": a}, _ulp_ref(np.exp, dt), "class c"),
            Case(f"{dt}_pow_scalar_base", "r = 2.5 ** a", {"a": b}, _ulp_ref(lambda v: 2.5 ** v, dt),
                 "aclnnPowScalarTensor, class c"),
            Case(f"{dt}_rsqrt", "r = torch.rsqrt(a)", {"a": pos}, _ulp_ref(lambda v: 1.0 / np.sqrt(v), dt), "class c"),
            Case(f"{dt}_cos", "r = torch.cos(a)", {"a": b}, _ulp_ref(np.cos, dt), "class c"),
            Case(f"{dt}_sin", "r = torch.sin(a)", {"a": b}, _ulp_ref(np.sin, dt), "class c"),
            Case(f"{dt}_sigmoid", "r = torch.sigmoid(a)", {"a": a}, _ulp_ref(sig, dt), "class c"),
            Case(f"{dt}_silu", "r = torch.nn.functional.silu(a)", {"a": a}, _ulp_ref(lambda v: v * sig(v), dt),
                 "class c"),
            Case(f"{dt}_square", "r = a ** 2", {"a": a}, exact or (lambda a, dt=dt: R.binary("mul", a, a, dt, dt))),
            Case(f"{dt}_eq_tensor", "r = a == b", {"a": a, "b": b.copy()}),
            Case(f"{dt}_ne_scalar", "r = a != 1.0", {"a": a}),
            Case(f"{dt}_gt_scalar", "r = a > 0.5", {"a": a}),
            Case(f"{dt}_lt_tensor_broadcast", "r = a < b[0]", {"a": a, "b": b}),
            Case(f"{dt}_ge_le", "r = (a >= b).int() + (a <= 0.0).int()", {"a": a, "b": b}),
            Case(f"{dt}_isfinite", "r = torch.isfinite(a)", {"a": a}),
            Case(f"{dt}_masked_fill", "r = a.masked_fill(b > 0, -1e4)", {"a": a, "b": b},
                 exact or (lambda a, b, dt=dt: np.where(b.astype(np.float32) > 0, R.cast(np.float64([-1e4]), dt), a))),
            Case(f"{dt}_where", "r = torch.where(a > b, a, b)", {"a": a, "b": b}),
            Case(f"{dt}_triu", "r = torch.triu(a, 1)", {"a": a}),
            Case(f"{dt}_triu_causal_mask", "r = torch.full((5, 5), float('-inf'), dtype=a.dtype, device=a.device)"
                 ".triu(1)", {"a": a}),
        ]
    i32 = values("int32", shape, small_ints=True)
    bools = values("bool", shape)
    cases += [
        Case("int32_neg", "r = -a", {"a": i32}),
        Case("int32_abs", "r = a.abs()", {"a": i32}),
        Case("int32_pow_3", "r = a ** 3", {"a": i32}),
        Case("int32_pow_scalar_base", "r = 3 ** a.abs()", {"a": i32}),
        Case("int32_eq_scalar", "r = a == 3", {"a": i32}),
        Case("int32_gt_float_scalar", "r = a > 2.5", {"a": i32}),
        Case("bool_and", "r = a & b", {"a": bools, "b": values("bool", shape)}),
        Case("int32_masked_fill_", "r = a\nr.masked_fill_(b, 7)", {"a": i32, "b": bools}),
    ]
    return cases


def creation_spec() -> dict:
    return {"shape": list(CREATION_SHAPE), "dtypes": MAPPED_DTYPES, "values": FILL_VALUE}


def all_cases() -> list[Case]:
    copies = [c for dt in ["float32", "float16", "bfloat16", "float64", "int32", "int64", "int8", "uint8", "bool",
                           "float8_e4m3fn"] for c in _copies(dt)]
    return copies + _casts() + _arith() + _gather_and_shapes() + _matmul_reductions_softmax() + _pointwise()


def encode(arr: np.ndarray) -> dict:
    arr = np.ascontiguousarray(arr)
    return {"dtype": arr.dtype.name, "shape": list(arr.shape), "hex": arr.tobytes().hex()}
