"""Bitwise operators and shifts (native_stubs/src/ops/logical/bitops.toml): every dtype of the vendor's lists
(Ascend 950 here, Atlas A2 in a subprocess) against NumPy bit for bit, the vendor's type promotion (tensor pairs,
scalars per SoC), broadcasting, strided views with offsets, the in-place forms, empty tensors, the validation
codes, and torch_npu's calls on the emulator against torch CPU.

Adding an operator adds a row to UNARY, PAIRS or SHIFTS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, ALL, INVALID, NULLPTR, dec, enc, same_bits, torch_npu_run
from _math_ops import names as _names
from _op_helpers import INNER_NULLPTR, strided
from _pointwise_calls import SOC950, TORCH_EVAL_BODY, assert_codes
from pyaclnn import ops
from reference import elementwise as R

RNG = np.random.default_rng(2033)
UNSIGNED = ["uint16", "uint32", "uint64"]
EVERY = ALL + UNSIGNED


def names(text: str) -> list[str]:
    """'INT8 UINT16 BOOL' -> ['int8', 'uint16', 'bool'] (the vendor lists as the tests write them)."""
    wide = {"UINT16": "uint16", "UINT32": "uint32", "UINT64": "uint64"}
    return [wide[n] if n in wide else _names(n)[0] for n in text.split()]


def ints(name: str, shape=(6, 17)) -> np.ndarray:
    """Integers over the whole range of the dtype (both signs, the extremes), BOOL 0/1."""
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    info = np.iinfo(np.dtype(name))
    x = RNG.integers(int(info.min), int(info.max), shape, dtype=np.dtype(name), endpoint=True)
    flat = x.reshape(-1)
    flat[:4] = [0, info.max, info.min, 1][:flat.size]
    return x


def promote(a: str, b: str) -> str | None:
    """The vendor's TensorTensor promotion table (UINT16/32/64 only with themselves)."""
    if a == b:
        return a
    if a in UNSIGNED or b in UNSIGNED:
        return None
    return R.promote(a, b)


# ---- unary --------------------------------------------------------------------------------------------

@dataclass
class Unary:
    fn: Callable
    dtypes_950: list[str]
    dtypes_a2: list[str]


UNARY = {
    "BitwiseNot": Unary(np.invert, names("INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64 BOOL"),
                        names("INT16 INT32 INT64 INT8 UINT8 BOOL")),
}
UNARY_CASES = [(op, d) for op, u in UNARY.items() for d in u.dtypes_950]


@pytest.mark.parametrize("op,name", UNARY_CASES, ids=[f"{o}-{d}" for o, d in UNARY_CASES])
def test_unary_every_dtype(op, name):
    x = ints(name)
    same_bits(getattr(ops, op)(x, np.zeros_like(x)), UNARY[op].fn(x))
    same_bits(getattr(ops, op)(strided(x, transpose=True), np.zeros_like(x)), UNARY[op].fn(x))
    assert getattr(ops, op)(np.zeros((0, 2), x.dtype), np.zeros((0, 2), x.dtype)).shape == (0, 2)


# ---- pairs: Tensor, Scalar and in-place forms -----------------------------------------------------------

@dataclass
class Pair:
    fn: Callable                     # NumPy's function in the compute dtype
    tensor_950: list[str]            # the Tensor forms' list (self and other)
    tensor_a2: list[str]
    scalar_950: list[str]            # the Scalar forms' list (self and the scalar)
    scalar_a2: list[str]


BW_OR = names("INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64 BOOL")
BW_XOR_A2 = names("INT8 INT16 INT32 INT64 UINT8 BOOL")
PAIRS = {
    "BitwiseOr": Pair(np.bitwise_or, BW_OR, BW_OR, BW_OR, names("INT8 INT16 INT32 INT64 UINT8 BOOL UINT16")),
    "BitwiseXor": Pair(np.bitwise_xor, BW_OR, BW_OR, BW_OR, BW_XOR_A2),
}
# (Xor's Tensor list on Atlas A2 is the short one too)
PAIRS["BitwiseXor"].tensor_a2 = BW_XOR_A2


def scalar_compute(self: str, sdt: str, value, soc: str) -> str | None:
    """BitwiseOr/XorScalar's GetPromoteDType: regbase (Ascend 950) keeps self's dtype (BOOL self promotes);
    other SoCs promote with INT32 for an INT64 scalar that fits, else with the scalar's dtype."""
    if soc == SOC950:
        return promote(self, sdt) if self == "bool" else self
    if sdt == "int64":
        return promote(self, "int32" if -2**31 <= value < 2**31 else "int64")
    return promote(self, sdt)


def pair_ref(op: str, x: np.ndarray, y, out: str, soc: str = SOC950, sdt: str = "int64") -> np.ndarray:
    xn = "bool" if x.dtype == bool else x.dtype.name
    if isinstance(y, np.ndarray):
        c = promote(xn, "bool" if y.dtype == bool else y.dtype.name)
        yc = R.cast(y, c)
    else:
        c = scalar_compute(xn, sdt, y, soc)
        yc = R.cast(np.array(y, R.np_dtype(sdt)), c)
    return R.cast(PAIRS[op].fn(R.cast(x, c), yc), out)


PAIR_CASES = [(op, d) for op, p in PAIRS.items() for d in p.tensor_950]


@pytest.mark.parametrize("op,name", PAIR_CASES, ids=[f"{o}-{d}" for o, d in PAIR_CASES])
def test_pair_every_dtype(op, name):
    p = PAIRS[op]
    x = ints(name)
    partners = [name] + ([] if name in UNSIGNED else [d for d in ("int8", "uint8", "int64", "bool") if d != name])
    for other in partners:
        y = ints(other, (17,))
        c = promote(name, other)
        got = getattr(ops, op + "Tensor")(x, y, np.zeros(x.shape, R.np_dtype(c)))
        same_bits(got, pair_ref(op, x, y, c))
    if name in p.scalar_950:
        for v in (0, 5, -3, 300, 2**40):
            c = scalar_compute(name, "int64", v, SOC950)
            got = getattr(ops, op + "Scalar")(x, v, np.zeros(x.shape, R.np_dtype(c)))
            same_bits(got, pair_ref(op, x, v, c))
        if name == "bool":
            same_bits(getattr(ops, op + "Scalar")(x, True, np.zeros(x.shape, bool)), pair_ref(op, x, True, "bool",
                                                                                             sdt="bool"))


@pytest.mark.parametrize("op", list(PAIRS))
def test_pair_broadcast_strided_inplace_empty(op):
    x, y = ints("int16", (4, 1, 7)), ints("int32", (3, 1))
    same_bits(getattr(ops, op + "Tensor")(x, y, np.zeros((4, 3, 7), np.int64)), pair_ref(op, x, y, "int64"))
    a, b = ints("int32", (5, 8)), ints("int8", (5, 8))
    same_bits(getattr(ops, op + "Tensor")(strided(a, transpose=True), strided(b), np.zeros((5, 8), np.int32)),
              pair_ref(op, a, b, "int32"))
    same_bits(getattr(ops, op + "Scalar")(strided(a), 77, np.zeros((5, 8), np.int32)), pair_ref(op, a, 77, "int32"))
    for name in ("int32", "uint8", "bool", "uint64"):
        x, y = ints(name, (4, 9)), ints(name, (9,))
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, "Inplace" + op + "Tensor")(t, y)
        same_bits(t.numpy(), pair_ref(op, x, y, name))
        t = pyaclnn.from_numpy(x.copy())
        v = True if name == "bool" else 6
        getattr(ops, "Inplace" + op + "Scalar")(t, v)
        same_bits(t.numpy(), pair_ref(op, x, v, name, sdt="bool" if name == "bool" else "int64"))
    view = strided(a)
    getattr(ops, "Inplace" + op + "Tensor")(view, b[:1])
    same_bits(view.numpy(), pair_ref(op, a, b[:1], "int32"))
    assert getattr(ops, op + "Tensor")(np.zeros((0, 3), np.int32), np.zeros((3,), np.int8),
                                       np.zeros((0, 3), np.int32)).shape == (0, 3)
    assert getattr(ops, op + "Scalar")(np.zeros((0, 3), np.int32), 1, np.zeros((0, 3), np.int32)).shape == (0, 3)


_A2_VALUES = """
import json, sys
import numpy as np
from pyaclnn import ops
x = np.uint8([0, 1, 7, 200, 255])
out = {op: getattr(ops, op + "Scalar")(x, 300, np.zeros(5, np.int32)).tolist() for op in ("BitwiseOr", "BitwiseXor")}
print("RESULT " + json.dumps(out))
"""


def test_scalar_promotion_per_soc():
    # uint8 | 300 into an INT32 out: Ascend 950 computes in UINT8 (300 -> 44), Atlas A2 in INT32.
    import helpers
    x = np.uint8([0, 1, 7, 200, 255])
    for op in PAIRS:
        same_bits(getattr(ops, op + "Scalar")(x, 300, np.zeros(5, np.int32)), pair_ref(op, x, 300, "int32"))
    rc, stdout, stderr = helpers.run_python(_A2_VALUES, {"PYACLNN_STUB_SOC": A2})
    assert rc == 0, stderr[-2000:]
    got = __import__("json").loads([ln for ln in stdout.splitlines() if ln.startswith("RESULT ")][-1][7:])
    for op in PAIRS:
        assert got[op] == pair_ref(op, x, 300, "int32", soc=A2).tolist()
        assert got[op] != pair_ref(op, x, 300, "int32").tolist()


# ---- shifts ------------------------------------------------------------------------------------------

SHIFT = names("INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64")
SHIFTS = {"LeftShift": True, "RightShift": False}     # operator -> left


def dname(a) -> str:
    return "bool" if a.dtype == bool else a.dtype.name


def shift_ref(left: bool, x: np.ndarray, y, out: str, sdt: str = "int64") -> np.ndarray:
    """In the promoted dtype: the amount clamped into [0, bits - 1] (unsigned amounts never negative), a
    wrapping left shift, an arithmetic (signed) or logical (unsigned) right shift."""
    yn = dname(y) if isinstance(y, np.ndarray) else sdt
    c = promote(dname(x), yn)
    dt, bits = np.dtype(c), np.dtype(c).itemsize * 8
    xc = R.cast(x, c)
    yc = R.cast(y if isinstance(y, np.ndarray) else np.array(y, np.dtype(sdt)), c)
    if dt.kind == "u":
        amount = np.minimum(yc.astype(np.uint64), np.uint64(bits - 1))
    else:
        amount = np.clip(yc.astype(np.int64), 0, bits - 1).astype(np.uint64)
    if left:
        r = (xc.astype(np.uint64) << amount).astype(dt)
    elif dt.kind == "u":
        r = (xc.astype(np.uint64) >> amount).astype(dt)
    else:
        r = (xc.astype(np.int64) >> amount.astype(np.int64)).astype(dt)
    return R.cast(r, out)


def amounts(name: str, shape) -> np.ndarray:
    """Shift amounts of a dtype: in range, negative, and beyond the width."""
    info = np.iinfo(np.dtype(name))
    lo, hi = max(int(info.min), -5), min(int(info.max), 70)
    return RNG.integers(lo, hi, shape, endpoint=True).astype(np.dtype(name))


SHIFT_CASES = [(op, d) for op in SHIFTS for d in SHIFT]


@pytest.mark.parametrize("op,name", SHIFT_CASES, ids=[f"{o}-{d}" for o, d in SHIFT_CASES])
def test_shift_every_dtype(op, name):
    left = SHIFTS[op]
    x = ints(name)
    for other in [name] + ([] if name in UNSIGNED else ["int8", "int64"]):
        y = amounts(other, (17,))
        c = promote(name, other)
        same_bits(getattr(ops, op)(x, y, np.zeros(x.shape, np.dtype(c))), shift_ref(left, x, y, c))
    if left and name not in UNSIGNED:
        for v in (0, 3, 7, 9, 33, 70, -2):                       # LeftShifts: promoted with the INT64 scalar
            same_bits(ops.LeftShifts(x, v, np.zeros(x.shape, x.dtype)), shift_ref(True, x, v, name))
    if left and name in UNSIGNED:                                # ... whose own dtype keeps UINT16/32/64
        same_bits(ops.LeftShifts(x, ops.Scalar(5, name), np.zeros(x.shape, x.dtype)),
                  shift_ref(True, x, 5, name, sdt=name))


def test_shift_broadcast_strided_empty_in_place_out():
    x, y = ints("int32", (4, 1, 7)), amounts("int8", (3, 1))
    for op, left in SHIFTS.items():
        same_bits(getattr(ops, op)(x, y, np.zeros((4, 3, 7), np.int64)), shift_ref(left, x, y, "int64"))
        a, b = ints("int16", (5, 8)), amounts("int16", (5, 8))
        same_bits(getattr(ops, op)(strided(a, transpose=True), strided(b), np.zeros((5, 8), np.int16)),
                  shift_ref(left, a, b, "int16"))
        t = pyaclnn.from_numpy(a.copy())                          # torch_npu's <<= and >>=: out is self
        getattr(ops, op)(t, b, t)
        same_bits(t.numpy(), shift_ref(left, a, b, "int16"))
        # empty: nothing to do, and the promotion is not checked (the vendor returns first)
        e = np.zeros((0, 3), np.uint16)
        assert getattr(ops, op)(e, np.zeros((3,), np.int32), np.zeros((0, 3), np.uint16)).shape == (0, 3)
    assert ops.LeftShifts(np.zeros((0, 2), np.uint32), 3, np.zeros((0, 2), np.uint32)).shape == (0, 2)
    x8 = ints("int8", (3, 4))
    same_bits(ops.LeftShifts(strided(x8), 2, np.zeros((3, 4), np.int8)), shift_ref(True, x8, 2, "int8"))


# ---- validation --------------------------------------------------------------------------------------

def t(d, s=(2, 3)):
    return ("t", d, list(s))


def calls_and_codes(soc: str) -> list[tuple]:
    out = []
    for op, u in UNARY.items():
        ins = u.dtypes_950 if soc != A2 else u.dtypes_a2
        out += [(op, [("n",), t("int32")], INNER_NULLPTR), (op, [t("int32"), ("n",)], INNER_NULLPTR)]
        out += [(op, [t(d), t(d)], 0 if d in ins else INVALID) for d in EVERY]
        out += [(op, [t("int32"), t("int64")], INVALID), (op, [t("int32"), t("int32", (3, 2))], INVALID),
                (op, [t("int32", [1] * 9), t("int32", [1] * 9)], INVALID)]
    for op, p in PAIRS.items():
        ins = p.tensor_950 if soc != A2 else p.tensor_a2
        sins = p.scalar_950 if soc != A2 else p.scalar_a2
        T_, S_, IT, IS = op + "Tensor", op + "Scalar", "Inplace" + op + "Tensor", "Inplace" + op + "Scalar"
        i64 = ("s", 3, "int64")
        for k in range(3):
            args = [t("int32"), t("int32"), t("int32")]
            args[k] = ("n",)
            out.append((T_, args, NULLPTR))
            args = [t("int32"), i64, t("int32")]
            args[k] = ("n",)
            out.append((S_, args, NULLPTR))
        out += [(IT, [("n",), t("int32")], NULLPTR), (IT, [t("int32"), ("n",)], NULLPTR),
                (IS, [("n",), i64], NULLPTR), (IS, [t("int32"), ("n",)], NULLPTR)]
        for d in EVERY:
            out.append((T_, [t(d), t(d), t(d)], 0 if d in ins else INVALID))
            out.append((T_, [t("int16"), t(d), t("int64")], 0 if d in ins and promote("int16", d) else INVALID))
            out.append((IT, [t(d), t(d)], 0 if d in ins else INVALID))
            sdt_ok = d in sins and (scalar_compute(d, "int64", 3, soc) is not None)
            out.append((S_, [t(d), i64, t(d)], 0 if sdt_ok and (d != "bool") else INVALID))
            ok = d in sins and scalar_compute("int32", d, 1, soc) is not None
            out.append((S_, [t("int32"), ("s", 1, d), t("int32")], 0 if ok else INVALID))
        out += [(T_, [t("int32"), t("int32"), t("bool")], INVALID),                 # INT32 can't be cast to BOOL
                (T_, [t("uint16"), t("int32"), t("int32")], INVALID),              # no promotion
                (T_, [t("int32", (2, 3)), t("int32", (4, 3)), t("int32")], INVALID),
                (T_, [t("int32"), t("int32", (3,)), t("int32", (3, 2))], INVALID),
                (T_, [t("int32", [1] * 9), t("int32"), t("int32", [1] * 9)], INVALID),
                (S_, [t("int32"), i64, t("int32", (3, 2))], INVALID),
                (S_, [t("int32", [1] * 9), i64, t("int32", [1] * 9)], INVALID),
                (S_, [t("int32"), ("s", 1.5, "float64"), t("int32")], INVALID),
                (IT, [t("int32", (1, 3)), t("int32", (2, 3))], INVALID),
                (IT, [t("int32", (2, 3)), t("int32", (3,))], 0),
                (IS, [t("bool"), ("s", True, "bool")], 0)]
    for op in SHIFTS:
        for k in range(3):
            args = [t("int32"), t("int32"), t("int32")]
            args[k] = ("n",)
            out.append((op, args, NULLPTR))
        for d in EVERY:
            ok = d in SHIFT
            out += [(op, [t(d), t("int32"), t("int64")], 0 if ok and promote(d, "int32") else INVALID),
                    (op, [t("int32"), t(d), t("int64")], 0 if ok and promote(d, "int32") else INVALID),
                    (op, [t("int32"), t("int32"), t(d)], 0 if ok else INVALID)]
        out += [(op, [t("uint32"), t("uint16"), t("uint32")], INVALID),          # no promotion
                (op, [t("uint32", (0, 3)), t("uint16", (3,)), t("uint32", (0, 3))], 0),   # ... unless empty
                (op, [t("int32", (2, 3)), t("int32", (4, 3)), t("int32")], INVALID),
                (op, [t("int32"), t("int32"), t("int32", (3, 2))], INVALID),
                (op, [t("int32", [1] * 9), t("int32"), t("int32", [1] * 9)], INVALID),
                (op, [t("int32"), t("int32", [1] * 9), t("int32", [1] * 9)], INVALID)]
    i64 = ("s", 3, "int64")
    out += [("LeftShifts", [("n",), i64, t("int32")], NULLPTR), ("LeftShifts", [t("int32"), ("n",), t("int32")], NULLPTR),
            ("LeftShifts", [t("int32"), i64, ("n",)], NULLPTR),
            ("LeftShifts", [t("int32"), ("s", 3, "float32"), t("int32")], INVALID),
            ("LeftShifts", [t("float32"), i64, t("float32")], INVALID),
            ("LeftShifts", [t("int32"), i64, t("bool")], INVALID),
            ("LeftShifts", [t("uint16"), i64, t("uint16")], INVALID),
            ("LeftShifts", [t("uint16", (0, 3)), i64, t("uint16", (0, 3))], 0),
            ("LeftShifts", [t("int32"), i64, t("int32", (3, 2))], INVALID),
            ("LeftShifts", [t("int32", [1] * 9), i64, t("int32", [1] * 9)], INVALID)]
    return out


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    assert_codes(calls_and_codes(soc), soc)


# ---- torch_npu on the emulator -----------------------------------------------------------------------

TORCH_CASES = [
    ("lambda x, y: torch.bitwise_or(x, y)", ["int32", "int8"]),
    ("lambda x, y: x | y", ["bool", "bool"]),
    ("lambda x: torch.bitwise_or(x, 12)", ["int16"]),
    ("lambda x, y: torch.bitwise_xor(x, y)", ["int64", "uint8"]),
    ("lambda x, y: x.bitwise_xor_(y)", ["int32", "int32"]),
    ("lambda x: x.bitwise_xor_(-7)", ["int8"]),
    ("lambda x, y: x << y", ["int32", "amount:int8"]),
    ("lambda x: x << 3", ["int64"]),
    ("lambda x, y: x >> y", ["int16", "amount:int16"]),
    ("lambda x: x >> 2", ["int32"]),
    ("lambda x, y: x.__ilshift__(y)", ["int32", "amount:int32"]),
    ("lambda x: torch.bitwise_not(x)", ["int32"]),
    ("lambda x: ~x", ["bool"]),
    ("lambda x: x.bitwise_not_()", ["int8"]),
]


def test_torch_npu_calls_match_torch_cpu():
    def arg(d):   # "amount:<dtype>": shift amounts in [0, 7] (torch and the vendor differ outside the width)
        return RNG.integers(0, 8, (3, 11)).astype(d[7:]) if d.startswith("amount:") else ints(d, (3, 11))
    spec = {"cases": [{"id": str(k), "fn": fn, "args": [enc(arg(d)) for d in dts]}
                      for k, (fn, dts) in enumerate(TORCH_CASES)]}
    res = torch_npu_run(TORCH_EVAL_BODY, spec)
    for case in spec["cases"]:
        got, want = (dec(v) for v in res[case["id"]])
        same_bits(got, want)
