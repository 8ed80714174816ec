"""Activations defined by element functions (native_stubs/src/ops/activation/act_fn.toml): every dtype of the
vendor's lists (Ascend 950 here, Atlas A2 in a subprocess) against a NumPy reference written from the vendor's
kernel (bit for bit) or float64 (within the bound the fidelity note states), the in-place forms, strided views
with offsets, broadcasting (backwards), empty tensors, NaN/inf/-0.0, the validation codes, and torch_npu's
calls on the emulator against torch CPU (a call that succeeds there reached our operator: torch_npu refuses
"aclnnXxx ... not found" otherwise).

Adding an operator adds a row to ACTS (and its reference function)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, sample, status_codes, torch_npu_run
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

RNG = np.random.default_rng(2032)
F = np.float32
FLOATS = ("float32", "float16", "bfloat16", "float64")
SOC950 = "Ascend950PR"


def dtype_name(a: np.ndarray) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


def scalar_as(v, name: str) -> np.ndarray:
    """A Python scalar converted to a dtype as the vendor's ConvertToTensor does (the NPU's Cast rules)."""
    src = np.array(v, np.int64 if isinstance(v, int) and not isinstance(v, bool) else np.float64)
    return R.cast(src, name)


def f32(v) -> F:
    """A scalar attribute as the kernels take it (aclScalar::ToFloat)."""
    return F(v)


def round_away(x32: np.ndarray, name: str) -> np.ndarray:
    """fp32 -> fp16/bf16 with CAST_ROUND: nearest, ties away from zero."""
    x32 = np.asarray(x32, F)
    r = R.cast(x32, name)                                     # ties to even
    bits = r.view(np.uint16).copy()
    up = (bits + 1).astype(np.uint16).view(r.dtype)           # the neighbour away from zero (same sign)
    with np.errstate(all="ignore"):
        d_r = np.abs(x32.astype(np.float64) - r.astype(np.float64))
        d_up = np.abs(up.astype(np.float64) - x32.astype(np.float64))
    tie = np.isfinite(r.astype(np.float64)) & (d_r == d_up) & (d_r > 0)
    return np.where(tie, up, r).astype(r.dtype)


def back(r32: np.ndarray, name: str, mode: str = "rint") -> np.ndarray:
    """A kernel's fp32 result in the compute dtype: fp32 as is, fp16/bf16 cast back RINT or CAST_ROUND."""
    r32 = np.asarray(r32, F)
    if name == "float32":
        return r32
    return round_away(r32, name) if mode == "round" else R.cast(r32, name)


def up(x: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(F)


# ---- references, written from the vendor's kernels -------------------------------------------------

def clamp_ref(x: np.ndarray, lo, hi) -> np.ndarray:
    """ClipByValueV2: Max(x, lo) then Min(., hi) in x's dtype; NaN in x or a bound gives NaN; ties keep x."""
    name = dtype_name(x)
    lo, hi = scalar_as(lo, name), scalar_as(hi, name)
    r = np.where(x < lo, lo, x)
    r = np.where(hi < r, hi, r).astype(x.dtype)
    if name in FLOATS:
        nan = np.isnan(x.astype(np.float64)) | np.isnan(float(lo)) | np.isnan(float(hi))
        r = np.where(nan, np.array(np.nan, x.dtype), r).astype(x.dtype)
    return r


def leaky_relu_ref(x, slope):
    name = dtype_name(x)
    if name == "float64":
        return np.where(x > 0, x, x * float(f32(slope)))
    v = up(x)
    with np.errstate(all="ignore"):
        return back(np.where(v > 0, v, v * f32(slope)), name)


def hardswish_ref(x):
    v = up(x)
    with np.errstate(all="ignore"):
        t = np.maximum(np.minimum(v + F(3), F(6)), F(0))
        return back(np.maximum(v, F(-3)) * t * F(1.0 / 6.0), dtype_name(x), "round")


def hardsigmoid_ref(x):
    name = dtype_name(x)
    if name == "int32":
        t = np.maximum(np.minimum(x.astype(F) * F(1 / 6) + F(0.5), F(1)), F(0))
        return np.trunc(t).astype(np.int32)
    t = up(x) * F(1 / 6) + F(0.5)
    if name == "float32":
        return np.maximum(np.minimum(t, F(1)), F(0))
    r = back(t, name, "round" if name == "bfloat16" else "rint")
    return np.maximum(np.minimum(r, np.array(1, r.dtype)), np.array(0, r.dtype)).astype(r.dtype)


def softshrink_ref(x, lambd):
    v, l = up(x), f32(lambd)
    r = np.where(v > l, v - l, F(0))
    return back(np.where(v < -l, v + l, r), dtype_name(x))


def hardshrink_ref(x, lambd):
    l = max(f32(lambd), F(0))
    return np.where(np.abs(up(x)) <= l, np.zeros((), x.dtype), x).astype(x.dtype)


def threshold_ref(x, threshold, value):
    name = dtype_name(x)
    t, v = scalar_as(threshold, name), scalar_as(value, name)
    return np.where(x <= t, v, x).astype(x.dtype)


# ---- the operators ---------------------------------------------------------------------------------

@dataclass
class Act:
    ref: Callable                    # reference(x, *attrs) -> result in self's dtype (bit for bit)
    dtypes_950: list[str]            # the vendor's support list of self (Ascend 950)
    dtypes_a2: list[str]             # ... on Atlas A2
    attrs: tuple = ()                # the scalar arguments after the tensors (Python values)
    inplace: bool = False            # has aclnnInplace<name>(selfRef, *attrs)
    bad_attrs: list = field(default_factory=list)   # attribute tuples that phase 1 refuses (161002)
    scale: float = 4.0               # input samples: normal * scale
    rank_checked: bool = True        # more than 8 dimensions are refused
    out_f16: int = 0                 # the code of an FLOAT16 out for an FLOAT self (a different dtype)
    out_i32: int | dict = INVALID    # ... of an INT32 out (per SoC when a dict)


HARDTANH = names("FLOAT16 FLOAT INT32 INT64 INT16 INT8 UINT8 DOUBLE BF16")
LEAKY = names("FLOAT FLOAT16 DOUBLE BF16")
F3 = names("FLOAT FLOAT16 BF16")
THRESH = names("FLOAT INT32 FLOAT16 INT8 UINT8 INT16 INT64 BF16")

ACTS = {
    "Hardtanh": Act(clamp_ref, HARDTANH, HARDTANH, attrs=(-1.5, 2.25), inplace=True, bad_attrs=[(2.0, 1.0), (3, -3)],
                    out_f16=INVALID),
    "LeakyRelu": Act(leaky_relu_ref, LEAKY, LEAKY, attrs=(0.1,), inplace=True),
    "Hardswish": Act(hardswish_ref, F3, F3, inplace=True, rank_checked=False),
    "Hardsigmoid": Act(hardsigmoid_ref, names("FLOAT FLOAT16 INT32 BF16"), names("FLOAT FLOAT16 INT32 BF16"),
                       inplace=True, out_f16=INVALID),
    "Softshrink": Act(softshrink_ref, F3, F3, attrs=(0.5,), bad_attrs=[(-0.25,)]),
    "Hardshrink": Act(hardshrink_ref, F3, F3, attrs=(0.5,)),
    "Threshold": Act(threshold_ref, THRESH, THRESH, attrs=(0.25, -2.0), inplace=True,
                     out_i32={SOC950: 0, A2: INVALID}),
}


def call(op: str, xs, attrs, out: str | None = None):
    out = out or dtype_name(xs[0])
    shape = np.broadcast_shapes(*[np.shape(a) for a in xs])
    return getattr(ops, op)(*xs, *attrs, np.zeros(shape, R.np_dtype(out)))


def inputs(op: str, name: str, shape=(7, 19)) -> np.ndarray:
    return sample(name, shape, RNG, scale=ACTS[op].scale if op in ACTS else 4.0)


def attrs_for(a: Act, name: str) -> tuple:
    """The row's attributes, as integers for an integral self (whose lists take integral scalars)."""
    return a.attrs if name in FLOATS else tuple(int(v) if isinstance(v, float) else v for v in a.attrs)


CASES = [(op, d) for op, a in ACTS.items() for d in a.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_bit_exact(op, name):
    a = ACTS[op]
    x = inputs(op, name)
    attrs = attrs_for(a, name)
    same_bits(call(op, [x], attrs), a.ref(x, *attrs))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_fp16_bf16_every_value():
    # every fp16 / bf16 value through the kernels' fp32 steps and their closing casts (RINT or CAST_ROUND)
    for name in ("float16", "bfloat16"):
        bits = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
        x = bits.view(R.np_dtype(name))
        for op, a in ACTS.items():
            if name in a.dtypes_950:
                same_bits(call(op, [x], a.attrs), a.ref(x, *a.attrs))


def test_hardtanh_bounds_in_self_dtype_and_specials():
    x = F([-3, -1.5, -0.0, 0.0, 1, 2.5, np.nan, np.inf, -np.inf])
    same_bits(call("Hardtanh", [x], (-1.0, 2.0)), F([-1, -1, -0.0, 0, 1, 2, np.nan, 2, -1]))
    assert np.signbit(call("Hardtanh", [x], (0.0, 1.0))[2])               # ties keep self: -0.0
    assert np.isnan(call("Hardtanh", [x], (float("nan"), 1.0))).all()     # a NaN bound gives NaN (min <= max passes)
    # bounds converted to self's dtype: 1.7 -> int 1; an INT64 bound out of INT8's range wraps (-300 -> -44)
    same_bits(call("Hardtanh", [np.int8([-100, 5, 100])], (ops.Scalar(-300, "int64"), 1.7)), np.int8([-44, 1, 1]))
    i64 = np.int64([2**62 + 3, -(2**62), 5])                               # exact beyond 2^53
    same_bits(call("Hardtanh", [i64], (ops.Scalar(-(2**62) + 1, "int64"), ops.Scalar(2**62 + 1, "int64"))),
              np.int64([2**62 + 1, -(2**62) + 1, 5]))
    same_bits(call("Hardtanh", [np.float16([0.1, 70000 // 2])], (0.1, 1e5)), np.float16([0.1, 35000]))


def test_piecewise_specials():
    x = F([-4, -3, -1.5, -0.0, 0.0, 1, 2.5, 3, 5, np.nan, np.inf, -np.inf])
    same_bits(call("LeakyRelu", [x], (0.1,)), leaky_relu_ref(x, 0.1))
    assert np.signbit(call("LeakyRelu", [x], (0.1,))[3])                   # -0.0 * slope
    same_bits(call("Hardswish", [x], ()), hardswish_ref(x))
    assert np.isnan(call("Hardswish", [x], ())[9])
    same_bits(call("Softshrink", [x], (0.5,))[9:], F([0, np.inf, -np.inf]))   # NaN -> 0 (the kernel's compares)
    same_bits(call("Hardshrink", [x], (-1.0,)), hardshrink_ref(x, 0.0))   # a negative lambd counts as 0 (-0.0 -> +0)
    assert np.isnan(call("Threshold", [x], (1.0, -7.0))[9])                # NaN <= threshold is false: kept
    same_bits(call("Threshold", [np.int8([1, 5, -3])], (2, 100)), np.int8([100, 5, 100]))
    same_bits(call("Hardsigmoid", [np.int32([-5, 0, 2, 3, 4])], ()), np.int32([0, 0, 0, 1, 1]))
    # CAST_ROUND: a tie rounds away from zero (RINT would give the even neighbour)
    h = np.float16([2.0 ** -10 * 3])            # hardswish of a tiny positive value: x * 3 / 6 in fp32
    assert call("Hardswish", [h], ()).tobytes() == hardswish_ref(h).tobytes()


@pytest.mark.parametrize("op", [op for op, a in ACTS.items() if a.inplace])
def test_in_place_strided_and_empty(op):
    a = ACTS[op]
    for name in a.dtypes_950:
        x = inputs(op, name, (5, 12))
        attrs = attrs_for(a, name)
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, "Inplace" + op)(t, *attrs)
        same_bits(t.numpy(), a.ref(x, *attrs))
    x = inputs(op, "float32", (6, 9))
    same_bits(getattr(ops, op)(strided(x, transpose=True), *a.attrs, np.zeros((6, 9), F)), a.ref(x, *a.attrs))
    view = strided(x)
    getattr(ops, "Inplace" + op)(view, *a.attrs)
    same_bits(view.numpy(), a.ref(x, *a.attrs))
    empty = np.zeros((0, 3), F)
    assert call(op, [empty], a.attrs).shape == (0, 3)
    getattr(ops, "Inplace" + op)(pyaclnn.from_numpy(empty), *a.attrs)


@pytest.mark.parametrize("op", [op for op, a in ACTS.items() if not a.inplace])
def test_strided_empty_and_cast_out(op):
    a = ACTS[op]
    x = inputs(op, "float32", (6, 9))
    same_bits(getattr(ops, op)(strided(x, transpose=True), *a.attrs, np.zeros((6, 9), F)), a.ref(x, *a.attrs))
    assert call(op, [np.zeros((0, 3), F)], a.attrs).shape == (0, 3)
    x16 = inputs(op, "float16", (40,))
    if a.out_f16 == 0:   # computed in fp16, cast to the FLOAT out
        same_bits(call(op, [x16], a.attrs, "float32"), R.cast(a.ref(x16, *a.attrs), "float32"))


# ---- validation ------------------------------------------------------------------------------------

def calls_and_codes(soc: str) -> list[tuple]:
    """(operator, args, expected code): NULL operands, every dtype in and out of the lists, out's dtype and
    shape, 9 dimensions, refused attributes."""
    out = []
    t = lambda d, s=(2, 3): ("t", d, list(s))   # noqa: E731
    s = lambda v: ("s", v, "float64")            # noqa: E731
    for op, a in ACTS.items():
        ins = a.dtypes_950 if soc != A2 else a.dtypes_a2
        attrs = [s(v) for v in a.attrs]
        args = [t("float32")] + attrs + [t("float32")]
        for k in range(len(args)):
            out.append((op, args[:k] + [("n",)] + args[k + 1:], NULLPTR))
        for d in ALL:
            out.append((op, [t(d)] + attrs + [t(d)], 0 if d in ins else INVALID))
        out.append((op, [t("float32")] + attrs + [t("float16")], a.out_f16))
        i32 = a.out_i32[soc] if isinstance(a.out_i32, dict) else a.out_i32
        out.append((op, [t("float32")] + attrs + [t("int32")], i32))
        out.append((op, [t("float32")] + attrs + [t("float32", (3, 2))], INVALID))
        out.append((op, [t("float32", [1] * 9)] + attrs + [t("float32", [1] * 9)], INVALID if a.rank_checked else 0))
        for bad in a.bad_attrs:
            out.append((op, [t("float32")] + [("s", v, "int64" if isinstance(v, int) else "float64") for v in bad]
                        + [t("float32")], INVALID))
        if a.inplace:
            out.append(("Inplace" + op, [("n",)] + attrs, NULLPTR))
            for d in ALL:
                out.append(("Inplace" + op, [t(d)] + attrs, 0 if d in ins else INVALID))
    return out


def _codes_here(cases):
    def arg(a):
        if a[0] == "t":
            return np.ones(a[2], R.np_dtype(a[1]))
        if a[0] == "s":
            return ops.Scalar(a[1], a[2])
        return None
    return [code(getattr(ops, op), *[arg(a) for a in args]) for op, args, _ in cases]


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    cases = calls_and_codes(soc)
    got = _codes_here(cases) if soc != A2 else status_codes([[op, args] for op, args, _ in cases], A2)
    bad = [(c[0], c[1], c[2], g) for c, g in zip(cases, got) if c[2] != g]
    assert not bad, bad[:5]


# ---- torch_npu on the emulator -------------------------------------------------------------------

_TORCH_BODY = """
import torch.nn.functional as Fn
for case in SPEC["cases"]:
    fn = eval(case["fn"])
    args = [T(dec(a)) for a in case["args"]]
    got = fn(*[a.npu() for a in args])
    want = fn(*args)
    OUT[case["id"]] = [enc(to_np(got)), enc(to_np(want))]
"""

# (torch call, input dtypes, bound against torch CPU: 0 bit for bit, an int a max ulp distance, a float an absolute
# error (where the vendor's formula differs from torch's: Hardsigmoid's x/6 + 1/2 against (x + 3) / 6 cancels
# near x = -3))
TORCH_CASES = [
    ("lambda x: Fn.hardtanh(x, -1.5, 2.25)", ["float32"], 0),
    ("lambda x: Fn.hardtanh(x, -2, 3)", ["int32"], 0),
    ("lambda x: Fn.hardtanh_(x, -0.5, 0.5)", ["bfloat16"], 0),
    ("lambda x: Fn.leaky_relu(x, 0.2)", ["float32"], 0),
    ("lambda x: Fn.leaky_relu_(x, 0.01)", ["float16"], 0),
    ("lambda x: Fn.hardswish(x)", ["float32"], 1),
    ("lambda x: Fn.hardswish(x, inplace=True)", ["bfloat16"], 1),
    ("lambda x: Fn.hardsigmoid(x)", ["float32"], 2.0 ** -23),
    ("lambda x: Fn.hardsigmoid(x, inplace=True)", ["float16"], 2.0 ** -11),
    ("lambda x: Fn.softshrink(x, 0.5)", ["float32"], 0),
    ("lambda x: Fn.hardshrink(x, 0.5)", ["bfloat16"], 0),
    ("lambda x: Fn.threshold(x, 0.25, -2.0)", ["float32"], 0),
    ("lambda x: Fn.threshold(x, 1, 7, inplace=True)", ["int64"], 0),
]


def test_torch_npu_calls_match_torch_cpu():
    spec = {"cases": []}
    for k, (fn, dts, _) in enumerate(TORCH_CASES):
        spec["cases"].append({"id": str(k), "fn": fn,
                              "args": [enc(sample(d, (3, 17), RNG, specials=False)) for d in dts]})
    res = torch_npu_run(_TORCH_BODY, spec)
    for k, (fn, dts, bound) in enumerate(TORCH_CASES):
        got, want = (dec(v) for v in res[str(k)])
        if bound == 0 or dts[0] not in FLOATS:
            same_bits(got, want)
        elif isinstance(bound, float):
            assert np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64))) <= bound, fn
        else:
            assert R.ulp_distance(got, want, dts[0]).max() <= bound, fn
