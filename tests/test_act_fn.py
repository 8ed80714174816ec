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


def dtype_name(a: np.ndarray) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


def scalar_as(v, name: str) -> np.ndarray:
    """A Python scalar converted to a dtype as the vendor's ConvertToTensor does (the NPU's Cast rules)."""
    src = np.array(v, np.int64 if isinstance(v, int) and not isinstance(v, bool) else np.float64)
    return R.cast(src, name)


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


# ---- the operators ---------------------------------------------------------------------------------

@dataclass
class Act:
    ref: Callable                    # reference(x[, y], *attrs) -> result in the compute dtype
    dtypes_950: list[str]            # the vendor's support list of self (Ascend 950)
    dtypes_a2: list[str]             # ... on Atlas A2
    attrs: tuple = ()                # the scalar arguments after the tensors (Python values)
    inplace: bool = False            # has aclnnInplace<name>(selfRef, *attrs)
    bad_attrs: list = field(default_factory=list)   # attribute tuples that phase 1 refuses (161002)
    scale: float = 4.0               # input samples: normal * scale
    same_dtype_out: bool = True      # out must have self's dtype


INTS = names("INT32 INT64 INT16 INT8 UINT8")
HARDTANH = names("FLOAT16 FLOAT INT32 INT64 INT16 INT8 UINT8 DOUBLE BF16")

ACTS = {
    "Hardtanh": Act(clamp_ref, HARDTANH, HARDTANH, attrs=(-1.5, 2.25), inplace=True, bad_attrs=[(2.0, 1.0), (3, -3)]),
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
        if a.same_dtype_out:
            out.append((op, [t("float32")] + attrs + [t("float16")], INVALID))
        out.append((op, [t("float32")] + attrs + [t("float32", (3, 2))], INVALID))
        out.append((op, [t("float32", [1] * 9)] + attrs + [t("float32", [1] * 9)], INVALID))
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


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
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

# (torch call, input dtypes, exact): torch CPU's arithmetic may differ from the vendor's kernel in the last
# bit for the tolerance-class operators; those compare within TORCH_ULP.
TORCH_CASES = [
    ("lambda x: Fn.hardtanh(x, -1.5, 2.25)", ["float32"], True),
    ("lambda x: Fn.hardtanh(x, -2, 3)", ["int32"], True),
    ("lambda x: Fn.hardtanh_(x, -0.5, 0.5)", ["bfloat16"], True),
]


def test_torch_npu_calls_match_torch_cpu():
    spec = {"cases": []}
    for k, (fn, dts, _) in enumerate(TORCH_CASES):
        spec["cases"].append({"id": str(k), "fn": fn, "args": [enc(sample(d, (3, 17), RNG)) for d in dts]})
    res = torch_npu_run(_TORCH_BODY, spec)
    for k, (fn, dts, exact) in enumerate(TORCH_CASES):
        got, want = (dec(v) for v in res[str(k)])
        if exact:
            same_bits(got, want)
