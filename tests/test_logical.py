"""The logical operators (native_stubs/src/ops/logical/logical.toml): every input dtype of the vendor's lists
(Ascend 950 here, Atlas A2 in a subprocess) against NumPy's logical functions of bool(x) (x != 0, NaN true),
bit for bit, every output dtype, broadcasting, strided views with offsets, the in-place forms, empty tensors,
the validation codes, and torch_npu's calls on the emulator against torch CPU.

Adding an operator adds a row to OPS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, sample, torch_npu_run
from _op_helpers import strided
from _pointwise_calls import SOC950, assert_codes
from pyaclnn import ops
from reference import elementwise as R

RNG = np.random.default_rng(2031)
# out dtypes the engine holds besides ALL (the vendor's out lists name them)
UNSIGNED = ["uint16", "uint32", "uint64"]


@dataclass
class Op:
    fn: Callable                     # NumPy's function of the BOOL operands
    dtypes_950: list[str]            # self (and other) support list, Ascend 950
    dtypes_a2: list[str]             # ... Atlas A2
    out_950: list[str] | None        # out's support list (None: not checked)
    out_a2: list[str] | None
    inplace: bool = True
    unary: bool = False
    rank_checked_if_contiguous: bool = True   # LogicalNot checks 8 dimensions only on non-contiguous tensors


LG_AND = names("FLOAT FLOAT16 INT32 DOUBLE BF16 INT8 UINT8 INT16 INT64 BOOL")

LG_OR_OUT_950 = names("INT64 INT32 INT16 INT8 UINT8 DOUBLE FLOAT FLOAT16 BF16 BOOL") + UNSIGNED
LG_XOR = names("FLOAT16 FLOAT DOUBLE INT8 UINT8 INT16 INT32 INT64 BOOL BF16")
LG_NOT = names("UINT8 INT8 INT16 INT32 INT64 FLOAT16 FLOAT DOUBLE BOOL BF16")

OPS = {
    "LogicalAnd": Op(np.logical_and, LG_AND, LG_AND, None, None),
    "LogicalOr": Op(np.logical_or, LG_AND, LG_AND, LG_OR_OUT_950, LG_AND),
    "LogicalXor": Op(np.logical_xor, LG_XOR, LG_XOR, LG_XOR, LG_XOR, inplace=False),
    "LogicalNot": Op(np.logical_not, LG_NOT, LG_NOT, LG_NOT, LG_NOT, unary=True, rank_checked_if_contiguous=False),
}


def truth(x: np.ndarray) -> np.ndarray:
    return R.cast(x, "bool")


def ref(op: str, args, out: str) -> np.ndarray:
    return R.cast(OPS[op].fn(*[truth(a) for a in args]), out)


def call(op: str, args, out_dtype: str = "bool"):
    shape = np.broadcast_shapes(*[np.shape(a) for a in args])
    return getattr(ops, op)(*args, np.zeros(shape, R.np_dtype(out_dtype)))


def inputs(op: str, name: str, shape=(6, 17)):
    """Samples with the specials (0, -0, inf, -inf, NaN) and many zeros (so that both truth values occur)."""
    x = sample(name, shape, RNG)
    flat = x.reshape(-1)
    flat[RNG.integers(0, flat.size, flat.size // 3)] = 0
    return x


CASES = [(op, d) for op, o in OPS.items() for d in o.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_bit_exact(op, name):
    o = OPS[op]
    x = inputs(op, name)
    if o.unary:
        same_bits(call(op, [x]), ref(op, [x], "bool"))
        return
    for partner in (name, o.dtypes_950[(o.dtypes_950.index(name) + 3) % len(o.dtypes_950)]):
        y = inputs(op, partner)
        same_bits(call(op, [x, y]), ref(op, [x, y], "bool"))


@pytest.mark.parametrize("op", list(OPS))
def test_out_dtypes(op):
    o = OPS[op]
    args = [inputs(op, "float32")] + ([] if o.unary else [inputs(op, "int32")])
    for out in o.out_950 if o.out_950 is not None else ALL + UNSIGNED:
        same_bits(call(op, args, out), ref(op, args, out))
    if o.out_950 is not None:
        for out in [d for d in ALL + UNSIGNED if d not in o.out_950]:
            assert code(call, op, args, out) == INVALID, out


@pytest.mark.parametrize("op", list(OPS))
def test_broadcast_strided_inplace_empty(op):
    o = OPS[op]
    if o.unary:
        x = inputs(op, "float16", (5, 8))
        same_bits(getattr(ops, op)(strided(x, transpose=True), np.zeros((5, 8), bool)), ref(op, [x], "bool"))
    else:
        x, y = inputs(op, "float16", (4, 1, 7)), inputs(op, "int64", (3, 1))
        same_bits(call(op, [x, y]), ref(op, [x, y], "bool"))
        a, b = inputs(op, "float32", (5, 8)), inputs(op, "int8", (5, 8))
        same_bits(getattr(ops, op)(strided(a, transpose=True), strided(b), np.zeros((5, 8), bool)),
                  ref(op, [a, b], "bool"))
        assert call(op, [np.zeros((0, 3), np.float32), np.zeros((1, 3), bool)]).shape == (0, 3)
    if not o.inplace:
        return
    for name in ("float32", "int32", "bool", "bfloat16"):      # selfRef keeps its dtype: 0/1 of it
        x = inputs(op, name, (4, 9))
        args = [x] if o.unary else [x, inputs(op, "float16", (9,))]
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, "Inplace" + op)(t, *args[1:])
        same_bits(t.numpy(), ref(op, args, name))
    x = inputs(op, "float32", (6, 5))                        # in place on a strided view with an offset
    args = [x] if o.unary else [x, inputs(op, "uint8", (6, 1))]
    view = strided(x)
    getattr(ops, "Inplace" + op)(view, *args[1:])
    same_bits(view.numpy(), ref(op, args, "float32"))
    getattr(ops, "Inplace" + op)(pyaclnn.from_numpy(np.zeros((0, 2), np.float32)),
                                 *([] if o.unary else [np.zeros((2,), bool)]))


def calls_and_codes(soc: str) -> list[tuple]:
    """(operator, args, expected code) on `soc`: NULL operands, every dtype in and out of the lists, shapes."""
    out = []
    for op, o in OPS.items():
        ins = o.dtypes_950 if soc != A2 else o.dtypes_a2
        outs = o.out_950 if soc != A2 else o.out_a2
        n = 1 if o.unary else 2
        t = lambda d, s=(2, 3): ("t", d, list(s))   # noqa: E731
        for k in range(n + 1):
            args = [t("float32")] * n + [t("bool")]
            args[k] = ("n",)
            out.append((op, args, NULLPTR))
        for d in ALL + UNSIGNED[:1]:
            ok = d in ins
            out.append((op, [t(d)] * n + [t("bool")], 0 if ok else INVALID))
            if n == 2:
                out.append((op, [t("float32"), t(d), t("bool")], 0 if ok else INVALID))
            ok_out = outs is None or d in outs
            out.append((op, [t("float32")] * n + [t(d)], 0 if ok_out else INVALID))
        out.append((op, [t("float32")] * n + [t("bool", (3, 2))], INVALID))           # out's shape
        out.append((op, [t("float32", [1] * 9)] * n + [t("bool", [1] * 9)],           # 9 dimensions
                    INVALID if o.rank_checked_if_contiguous else 0))
        if n == 2:
            out.append((op, [t("float32", (2, 3)), t("float32", (4, 3)), t("bool", (2, 3))], INVALID))
        if o.inplace:
            out.append(("Inplace" + op, [("n",)] + [t("float32")] * (n - 1), NULLPTR))
            if n == 2:
                out.append(("Inplace" + op, [t("float32"), ("n",)], NULLPTR))
                out.append(("Inplace" + op, [t("float32", (1, 3)), t("float32", (2, 3))], INVALID))
                out.append(("Inplace" + op, [t("float32", (2, 3)), t("float32", (3,))], 0))
    return out


def test_logical_not_checks_rank_of_non_contiguous_tensors_only():
    x = np.zeros([1] * 8 + [4], np.float32)
    assert ops.LogicalNot(x, np.zeros(x.shape, bool)).shape == x.shape                 # 9 dimensions, contiguous
    view = strided(np.zeros([2] * 9, np.float32))
    assert code(ops.LogicalNot, view, np.zeros([2] * 9, bool)) == INVALID
    assert code(ops.InplaceLogicalNot, view) == INVALID
    same_bits(ops.LogicalNot(strided(np.float32([[0, 2], [np.nan, -0.0]])), np.zeros((2, 2), np.int8)),
              np.int8([[1, 0], [0, 1]]))


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    assert_codes(calls_and_codes(soc), soc)


# ---- torch_npu on the emulator -------------------------------------------------------------------

_TORCH_BODY = """
for case in SPEC["cases"]:
    fn, args = case["fn"], [dec(a) for a in case["args"]]
    cpu = [T(a) for a in args]
    npu = [t.npu() for t in cpu]
    if fn.endswith("_"):
        getattr(npu[0], fn)(*npu[1:])
        getattr(cpu[0], fn)(*cpu[1:])
        got, want = npu[0], cpu[0]
    elif case.get("out"):
        o_npu = torch.empty(npu[0].shape, dtype=getattr(torch, case["out"])).npu()
        o_cpu = torch.empty(cpu[0].shape, dtype=getattr(torch, case["out"]))
        getattr(torch, fn)(*npu, out=o_npu)
        getattr(torch, fn)(*cpu, out=o_cpu)
        got, want = o_npu, o_cpu
    else:
        got, want = getattr(torch, fn)(*npu), getattr(torch, fn)(*cpu)
    OUT[case["id"]] = [enc(to_np(got)), enc(to_np(want))]
"""

TORCH_CASES = [
    ("logical_and", ["float32", "int32"], None),
    ("logical_and", ["bool", "bfloat16"], "float32"),
    ("logical_and_", ["float32", "float32"], None),
    ("logical_or", ["float16", "int8"], None),
    ("logical_or", ["float32", "float32"], "int32"),
    ("logical_or_", ["int64", "bool"], None),
    ("logical_xor", ["float32", "bool"], None),
    ("logical_xor", ["int32", "int32"], "float16"),
    ("logical_not", ["float32"], None),
    ("logical_not", ["int8"], "int32"),
    ("logical_not_", ["float16"], None),
]


def test_torch_npu_calls_match_torch_cpu():
    spec, k = {"cases": []}, 0
    for fn, dts, out in TORCH_CASES:
        args = [inputs("", d, (3, 11)) for d in dts]
        spec["cases"].append({"id": str(k), "fn": fn, "args": [enc(a) for a in args], "out": out})
        k += 1
    res = torch_npu_run(_TORCH_BODY, spec)
    for case in spec["cases"]:
        got, want = res[case["id"]]
        same_bits(dec(got), dec(want))
