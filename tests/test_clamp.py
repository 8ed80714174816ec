"""Clamp and its Tensor and in-place forms (native_stubs/src/ops/math/clamp.toml): every dtype of the vendor's
list against a NumPy reference of the ClipByValueV2 kernel (Max then Min in the compute dtype, NaN propagates,
ties keep self) bit for bit, the vendor's compute dtype (scalar bounds: per SoC; tensor bounds: promotion),
absent bounds, broadcasting, strided views with offsets, the in-place forms, empty tensors, the validation codes
on both SoCs, and torch_npu's calls on the emulator against torch CPU.

Adding an operator adds a row to FORMS."""
from __future__ import annotations

import json

import numpy as np
import pytest

import helpers
import pyaclnn
from _math_ops import A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, sample, torch_npu_run
from _op_helpers import strided
from _pointwise_calls import SOC950, TORCH_EVAL_BODY, assert_codes
from pyaclnn import ops
from reference import elementwise as R

RNG = np.random.default_rng(2034)
FLOATS = ("float32", "float16", "bfloat16", "float64")
CLAMP = names("FLOAT16 FLOAT INT32 INT64 INT16 INT8 UINT8 DOUBLE BF16")
INT_RANGE = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-2**15, 2**15 - 1), "int32": (-2**31, 2**31 - 1),
             "int64": (-2**63, 2**63 - 1)}


def dname(a: np.ndarray) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


@np.errstate(invalid="ignore")   # NaN inputs are part of the test data
def clip(x: np.ndarray, lo, hi, c: str) -> np.ndarray:
    """ClipByValueV2 in dtype c: x, lo, hi (arrays of c, or None for an absent bound) broadcast."""
    r = x
    if lo is not None:
        r = np.where(r < lo, lo, r)
    if hi is not None:
        r = np.where(hi < r, hi, r)
    r = np.asarray(r).astype(R.np_dtype(c))
    if c in FLOATS:
        nan = np.isnan(x.astype(np.float64))
        for b in (lo, hi):
            if b is not None:
                nan = nan | np.isnan(np.asarray(b).astype(np.float64))
        r = np.where(nan, np.array(np.nan, r.dtype), r).astype(r.dtype)
    return r


def as_dtype(v, c: str) -> np.ndarray:
    """A Python scalar (int -> INT64, float -> DOUBLE) converted to dtype c as ConvertToTensor does."""
    return R.cast(np.array(v, np.int64 if isinstance(v, int) else np.float64), c)


def scalar_compute(self: str, bounds, out: str, soc: str = SOC950) -> str:
    """The scalar forms' compute dtype: Ascend 950 combines self with the bounds' category (floats count as
    FLOAT), other SoCs take out's dtype."""
    if soc != SOC950:
        return out
    cats = ["float32" if isinstance(b, float) else "int64" for b in bounds if b is not None]
    cat = cats[0] if len(set(cats)) == 1 else "float32"
    return R.promote(self, cat) if self not in FLOATS and cat == "float32" else self


def scalar_ref(x: np.ndarray, lo, hi, out: str, soc: str = SOC950) -> np.ndarray:
    c = scalar_compute(dname(x), [lo, hi], out, soc)
    return R.cast(clip(R.cast(x, c), None if lo is None else as_dtype(lo, c), None if hi is None else as_dtype(hi, c),
                       c), out)


def tensor_ref(x: np.ndarray, lo, hi, out: str) -> np.ndarray:
    c = dname(x)
    for b in (lo, hi):
        if b is not None and dname(b) != c:
            c = R.promote(c, dname(b))
    return R.cast(clip(R.cast(x, c), None if lo is None else R.cast(lo, c), None if hi is None else R.cast(hi, c), c),
                  out)


def bound_values(name: str):
    """A (min, max) pair of Python scalars for dtype `name` (integers for integral self)."""
    if name in FLOATS:
        return -1.25, 2.5
    lo, hi = INT_RANGE[name]
    return max(lo, -20), min(hi, 30)


# ---- every dtype, every form ------------------------------------------------------------------------

@pytest.mark.parametrize("name", CLAMP)
def test_scalar_forms_every_dtype(name):
    x = sample(name, (7, 19), RNG)
    lo, hi = bound_values(name)
    z = np.zeros(x.shape, x.dtype)
    same_bits(ops.Clamp(x, lo, hi, z), scalar_ref(x, lo, hi, name))
    same_bits(ops.Clamp(x, None, hi, z), scalar_ref(x, None, hi, name))
    same_bits(ops.Clamp(x, lo, None, z), scalar_ref(x, lo, None, name))
    same_bits(ops.ClampMin(x, lo, z), scalar_ref(x, lo, None, name))
    same_bits(ops.ClampMax(x, hi, z), scalar_ref(x, None, hi, name))
    t = pyaclnn.from_numpy(x.copy())
    ops.InplaceClampMax(t, hi)
    same_bits(t.numpy(), scalar_ref(x, None, hi, name))
    same_bits(ops.Clamp(x, hi, lo, z), scalar_ref(x, hi, lo, name))      # min > max: every element is max


@pytest.mark.parametrize("name", CLAMP)
def test_tensor_forms_every_dtype(name):
    x = sample(name, (5, 19), RNG)
    lo, hi = sample(name, (19,), RNG), sample(name, (5, 1), RNG)
    z = np.zeros(x.shape, x.dtype)
    same_bits(ops.ClampTensor(x, lo, hi, z), tensor_ref(x, lo, hi, name))
    same_bits(ops.ClampTensor(x, None, hi, z), tensor_ref(x, None, hi, name))
    same_bits(ops.ClampTensor(x, lo, None, z), tensor_ref(x, lo, None, name))
    same_bits(ops.ClampMinTensor(x, lo, z), tensor_ref(x, lo, None, name))
    same_bits(ops.ClampMaxTensor(x, hi, z), tensor_ref(x, None, hi, name))
    for op, args in (("InplaceClampMinTensor", (lo, None)), ("InplaceClampMaxTensor", (None, hi))):
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, op)(t, *[a for a in args if a is not None])
        same_bits(t.numpy(), tensor_ref(x, *args, name))


# ---- compute dtypes ----------------------------------------------------------------------------------

def test_scalar_forms_compute_dtype_on_950():
    x = np.int32([-3, -1, 0, 1, 2, 7])
    # an integral self with a floating bound computes in FLOAT: its result can't go to an INT32 out
    same_bits(ops.ClampMin(x, 0.5, np.zeros(6, np.float32)), np.float32([0.5, 0.5, 0.5, 1, 2, 7]))
    assert code(ops.ClampMin, x, 0.5, np.zeros(6, np.int32)) == INVALID
    same_bits(ops.Clamp(x, 0, 2.5, np.zeros(6, np.float16)), np.float16([0, 0, 0, 1, 2, 2.5]))
    # an integral bound with a floating self keeps self's dtype (the bound converted to it)
    same_bits(ops.ClampMax(np.float16([0.1, 70000 / 2]), 2**16, np.zeros(2, np.float16)), np.float16([0.1, 35000]))
    # a floating self with an out of another floating dtype: computed in self's dtype, then cast
    x32 = np.float32([1 + 2**-20, 3.0, -5])
    same_bits(ops.Clamp(x32, -4.0, 1 + 2**-21, np.zeros(3, np.float16)), R.cast(np.float32([1 + 2**-21, 1 + 2**-21,
                                                                                              -4]), "float16"))
    # the empty-tensor return comes before the promotion checks
    assert ops.ClampMin(np.zeros((0, 2), np.int32), 0.5, np.zeros((0, 2), np.int32)).shape == (0, 2)


_A2_SCRIPT = """
import json
import numpy as np
from pyaclnn import ops
x = np.int32([-3, -1, 0, 1, 2, 7])
out = {"min": ops.ClampMin(x, 0.5, np.zeros(6, np.int32)).tolist(),
       "f16": ops.Clamp(np.float32([1 + 2**-20, 3.0, -5]), -4.0, 1 + 2**-21, np.zeros(3, np.float16)).tolist()}
try:
    ops.Clamp(np.float32([1.0]), 0.0, 1.0, np.zeros(1, np.int32))
    out["cast"] = 0
except Exception as exc:
    out["cast"] = exc.code
print("RESULT " + json.dumps(out))
"""


def test_scalar_forms_compute_in_out_dtype_on_a2():
    # Atlas A2: the compute dtype is out's (self cast to it, the bounds converted to it): 0.5 -> INT32 0.
    rc, stdout, stderr = helpers.run_python(_A2_SCRIPT, {"PYACLNN_STUB_SOC": A2})
    assert rc == 0, stderr[-2000:]
    got = json.loads([ln for ln in stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    assert got["min"] == [0, 0, 0, 1, 2, 7]
    assert got["min"] == scalar_ref(np.int32([-3, -1, 0, 1, 2, 7]), 0.5, None, "int32", soc=A2).tolist()
    # self cast to FLOAT16 first: 1 + 2^-20 and the bound 1 + 2^-21 both round to 1
    assert got["f16"] == [1.0, 1.0, -4.0]
    assert got["cast"] == INVALID                                           # FLOAT self can't be cast to INT32


def test_tensor_forms_promote():
    x = np.int32([-3, -1, 0, 1, 2, 7])
    lo = np.float16([0.5])
    same_bits(ops.ClampMinTensor(x, lo, np.zeros(6, np.float32)), np.float32([0.5, 0.5, 0.5, 1, 2, 7]))
    assert code(ops.ClampMinTensor, x, lo, np.zeros(6, np.int32)) == INVALID     # FLOAT16 can't be cast to INT32
    same_bits(ops.ClampTensor(np.int8([-100, 0, 100]), np.int16([-300]), np.uint8([50]), np.zeros(3, np.int16)),
              np.int16([-100, 0, 50]))
    assert code(ops.ClampMaxTensor, x, np.bool_([True]), np.zeros(6, np.int32)) == 0       # BOOL bound: promoted
    assert code(ops.ClampMaxTensor, np.uint16([1]), np.uint16([0]), np.zeros(1, np.uint16)) == INVALID  # not listed


def test_nan_inf_ties_and_specials():
    x = np.float32([-3, -1.5, -0.0, 0.0, 1, 2.5, np.nan, np.inf, -np.inf])
    z = np.zeros_like(x)
    same_bits(ops.Clamp(x, -1.0, 2.0, z), np.float32([-1, -1, -0.0, 0, 1, 2, np.nan, 2, -1]))
    assert np.signbit(ops.ClampMin(x, 0.0, z)[2])                           # ties keep self: -0.0
    assert np.isnan(ops.ClampMax(x, float("nan"), z)).all()                  # a NaN bound gives NaN
    got = ops.ClampTensor(x, np.float32([np.nan, 0, 0, 0, 0, 0, 0, 0, 0]), None, z)
    assert np.isnan(got[0]) and not np.isnan(got[1:6]).any() and np.isnan(got[6])
    i64 = np.int64([2**62 + 3, -(2**62), 5])                                 # exact beyond 2^53
    same_bits(ops.Clamp(i64, -(2**62) + 1, 2**62 + 1, np.zeros(3, np.int64)), np.int64([2**62 + 1, -(2**62) + 1, 5]))
    same_bits(ops.ClampMax(np.int64([2**63 - 1, 0]), 2**63 - 2, np.zeros(2, np.int64)),
              np.int64([2**63 - 2, 0]))


def test_broadcast_strided_in_place_views_and_empty():
    x = sample("float32", (6, 9), RNG)
    lo, hi = sample("float32", (9,), RNG), sample("float32", (6, 1), RNG)
    same_bits(ops.ClampTensor(strided(x, transpose=True), strided(lo), hi, np.zeros((6, 9), np.float32)),
              tensor_ref(x, lo, hi, "float32"))
    same_bits(ops.Clamp(strided(x), -0.5, 0.5, np.zeros((6, 9), np.float32)), scalar_ref(x, -0.5, 0.5, "float32"))
    view = strided(x)
    ops.InplaceClampMinTensor(view, lo)
    same_bits(view.numpy(), tensor_ref(x, lo, None, "float32"))
    view = strided(x)
    ops.InplaceClampMax(view, 0.25)
    same_bits(view.numpy(), scalar_ref(x, None, 0.25, "float32"))
    e = np.zeros((0, 3), np.float32)
    assert ops.Clamp(e, 0.0, 1.0, e.copy()).shape == (0, 3)
    assert ops.ClampTensor(np.zeros((2, 3), np.float32), np.zeros((0, 1), np.float32), None,
                           np.zeros((2, 3), np.float32)).shape == (2, 3)                     # an empty bound: nothing
    ops.InplaceClampMaxTensor(pyaclnn.from_numpy(e), np.zeros((3,), np.float32))


# ---- validation --------------------------------------------------------------------------------------

def t(d, s=(2, 3)):
    return ("t", d, list(s))


F1 = ("s", 1.0, "float64")


def calls_and_codes(soc: str) -> list[tuple]:
    out = []
    f = t("float32")
    # NULL: the one-bound forms check their bound first; Clamp / ClampTensor need one bound at least
    out += [("Clamp", [("n",), F1, F1, f], NULLPTR), ("Clamp", [f, F1, F1, ("n",)], NULLPTR),
            ("Clamp", [f, ("n",), ("n",), f], NULLPTR), ("Clamp", [f, ("n",), F1, f], 0),
            ("ClampMin", [("n",), ("n",), ("n",)], NULLPTR), ("ClampMin", [("n",), F1, f], NULLPTR),
            ("ClampMax", [f, ("n",), f], NULLPTR), ("InplaceClampMax", [("n",), F1], NULLPTR),
            ("InplaceClampMax", [f, ("n",)], NULLPTR),
            ("ClampTensor", [f, ("n",), ("n",), f], NULLPTR), ("ClampTensor", [f, ("n",), f, f], 0),
            ("ClampTensor", [("n",), f, f, f], NULLPTR), ("ClampMinTensor", [f, ("n",), f], NULLPTR),
            ("ClampMaxTensor", [f, ("n",), f], NULLPTR), ("InplaceClampMinTensor", [("n",), f], NULLPTR),
            ("InplaceClampMaxTensor", [f, ("n",)], NULLPTR)]
    for d in ALL:
        ok = 0 if d in CLAMP else INVALID
        b = ("s", 1, "int64")
        out += [("Clamp", [t(d), b, b, t(d)], ok), ("ClampMin", [t(d), b, t(d)], ok), ("ClampMax", [t(d), b, t(d)], ok),
                ("InplaceClampMax", [t(d), b], ok), ("ClampTensor", [t(d), t(d), t(d), t(d)], ok),
                ("ClampMinTensor", [t(d), t(d), t(d)], ok), ("ClampMaxTensor", [t(d), t(d), t(d)], ok),
                ("InplaceClampMinTensor", [t(d), t(d)], ok), ("InplaceClampMaxTensor", [t(d), t(d)], ok),
                ("Clamp", [f, F1, F1, t(d)], 0 if d in CLAMP and d in FLOATS else INVALID)]
    out += [("Clamp", [f, F1, F1, t("float32", (3, 2))], INVALID),
            ("Clamp", [t("float32", [1] * 9), F1, F1, t("float32", [1] * 9)], INVALID),
            ("ClampTensor", [f, t("float32", (4, 3)), ("n",), f], INVALID),
            ("ClampTensor", [f, t("float32", (3,)), t("float32", (4, 1, 1)), f], INVALID),           # out's shape
            ("ClampTensor", [f, t("float32", [1] * 9), ("n",), f], INVALID),
            ("ClampMinTensor", [t("float32", (1, 3)), t("float32", (2, 3)), t("float32", (1, 3))], INVALID),
            ("InplaceClampMinTensor", [t("float32", (1, 3)), t("float32", (2, 3))], INVALID),
            ("InplaceClampMaxTensor", [t("float32", (2, 3)), t("float32", (3,))], 0),
            ("ClampMinTensor", [t("int32"), t("float32"), t("int32")], INVALID),
            ("ClampMin", [t("int32"), F1, t("int32")], INVALID if soc == SOC950 else 0),
            ("ClampMin", [t("float32"), F1, t("int32")], INVALID)]
    return out


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    assert_codes(calls_and_codes(soc), soc)


# ---- torch_npu on the emulator -----------------------------------------------------------------------

TORCH_CASES = [
    ("lambda x: torch.clamp(x, -1.5, 2.25)", [("float32", (3, 17))]),
    ("lambda x: torch.clamp(x, min=-3)", [("int32", (3, 17))]),
    ("lambda x: torch.clamp(x, max=0.5)", [("bfloat16", (3, 17))]),
    ("lambda x, a, b: torch.clamp(x, a, b)", [("float16", (3, 17)), ("float16", (17,)), ("float16", (3, 1))]),
    ("lambda x, b: torch.clamp(x, max=b)", [("float32", (3, 17)), ("float32", (17,))]),
    ("lambda x: torch.clamp_min(x, 0.25)", [("float32", (3, 17))]),
    ("lambda x: torch.clamp_max(x, 2)", [("int64", (3, 17))]),
    ("lambda x, a: torch.clamp_min(x, a)", [("float32", (3, 17)), ("float32", (17,))]),
    ("lambda x, b: torch.clamp_max(x, b)", [("int32", (3, 17)), ("int32", (3, 1))]),
    ("lambda x: x.clamp_max_(1.0)", [("float32", (3, 17))]),
    ("lambda x, b: x.clamp_max_(b)", [("float32", (3, 17)), ("float32", (17,))]),
    ("lambda x, a: x.clamp_min_(a)", [("float16", (3, 17)), ("float16", (17,))]),
    ("lambda x: x.clamp_(-1.0, 1.0)", [("float32", (3, 17))]),
]


def test_torch_npu_calls_match_torch_cpu():
    spec = {"cases": [{"id": str(k), "fn": fn, "args": [enc(sample(d, s, RNG)) for d, s in args]}
                      for k, (fn, args) in enumerate(TORCH_CASES)]}
    res = torch_npu_run(TORCH_EVAL_BODY, spec)
    for case in spec["cases"]:
        got, want = (dec(v) for v in res[case["id"]])
        same_bits(got, want)
