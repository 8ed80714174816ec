"""The shape moves and generators of native_stubs/src/ops/conversion/shape.toml: Tril / InplaceTril, Flip, Roll,
Repeat, the RepeatInterleave forms, InplaceMaskedFillTensor and Linspace -- moves bit for bit against NumPy
(np.tril, np.flip, np.roll, np.tile, np.repeat, np.where), Linspace against the arch35 kernel's fp32 steps written
out in NumPy and within a bound of float64; every dtype of the vendor's lists (Ascend 950 here, Atlas A2 in one
child), strided views, the validation codes and messages, and torch_npu's calls on the emulator.

Adding an operator adds a row to OPS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _op_helpers import INNER_NULLPTR, raw_null_status, strided
from _shape_helpers import (A2, ALL, INVALID, NULLPTR, check_lists, dec, enc, names, npdt,
                            register_torch, same_bits, sample, torch_results)
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R

RNG = np.random.default_rng(6161)
F = np.float32


def zeros(shape, name):
    return np.zeros(shape, npdt(name))


# ---- the moves --------------------------------------------------------------------------------------------

def run_tril(name, inplace=False):
    x = sample(name, (2, 4, 5))
    want = np.tril(x, 1)
    if inplace:
        t = strided(x, transpose=True)
        ops.InplaceTril(t, 1)
        return t.numpy(), want
    return ops.Tril(strided(x), 1, zeros(x.shape, name)), want


def run_flip(name):
    x = sample(name, (3, 4, 5))
    return ops.Flip(strided(x), [0, -1], zeros(x.shape, name)), np.flip(x, (0, 2))


def run_roll(name):
    x = sample(name, (3, 4, 5))
    got = ops.Roll(strided(x), [2, -7, 1], [1, 2, 1], zeros(x.shape, name))
    flat = ops.Roll(x, [-4], [], zeros(x.shape, name))
    return np.concatenate([got, flat]), np.concatenate([np.roll(x, (3, -7), (1, 2)), np.roll(x, -4)])


def run_repeat(name):
    x = sample(name, (2, 3))
    return ops.Repeat(strided(x), [2, 1, 3], zeros((2, 2, 9), name)), np.tile(x, (2, 1, 3))


def run_repeat_interleave(name):
    x = sample(name, (3, 4))
    counts = np.array([2, 0, 1, 3])
    flat_counts = RNG.integers(0, 3, 12)
    got = [ops.RepeatInterleaveIntWithDim(strided(x), 2, 0, 6, zeros((6, 4), name)),
           ops.RepeatInterleaveWithDim(x, counts, 1, 6, zeros((3, 6), name)).T,
           ops.RepeatInterleaveInt(x, 3, 36, zeros((36,), name)),
           ops.RepeatInterleave(strided(x), flat_counts.astype(np.int32), int(flat_counts.sum()),
                                zeros((int(flat_counts.sum()),), name))]
    want = [np.repeat(x, 2, 0), np.repeat(x, counts, 1).T, np.repeat(x.reshape(-1), 3),
            np.repeat(x.reshape(-1), flat_counts)]
    return (np.concatenate([g.reshape(-1) for g in got]), np.concatenate([w.reshape(-1) for w in want]))


def run_masked_fill(name):
    x = sample(name, (3, 4))
    mask = RNG.integers(0, 2, (4,)).astype(bool)
    v = sample(name, (1,)).reshape(())
    t = strided(x, transpose=True)
    ops.InplaceMaskedFillTensor(t, mask, v)
    return t.numpy(), np.where(mask, v, x)


def linspace_ref(start, end, n, name):
    """The arch35 kernel: fp32 start, end, step; the first n // 2 values start + i * step, the rest end - (n - 1 - i)
    * step, each a fp32 product then a fp32 sum (DOUBLE: the same in double); one step: start."""
    if n == 1:
        return R.cast(np.array([start]), name)
    if name == "float64":
        step = (end - start) / (n - 1)
        i = np.arange(n, dtype=np.float64)
        return np.where(i < n // 2, start + i * step, end - (n - 1 - i) * step)
    s, e = F(start), F(end)
    step = F((e - s) / F(n - 1))
    i = np.arange(n)
    k = np.where(i < n // 2, i, i - (n - 1)).astype(F)
    v = np.where(i < n // 2, s, e) + (k * step).astype(F)
    return R.cast(v.astype(F), name)


def run_linspace(name):
    got, want = [], []
    for a, b, n in ((-1.0, 3.3, 37), (5.0, -2.0, 10), (0.0, 1.0, 1), (2.0, 7.0, 2)):
        got.append(ops.Linspace(ops.Scalar(a, np.float64), ops.Scalar(b, np.float64), n, zeros((n,), name)))
        want.append(linspace_ref(a, b, n, name))
    return np.concatenate(got), np.concatenate(want)


@dataclass
class Op:
    dtypes_950: list[str]
    dtypes_a2: list[str]
    run: Callable          # name -> (got, want)


TRIL = "UINT8 INT8 INT16 INT32 INT64 FLOAT16 FLOAT DOUBLE BOOL BF16 UINT16 UINT32 UINT64"
FLIP_A2 = "FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 BF16 BOOL DOUBLE"
FLIP_950 = "INT8 UINT8 INT16 UINT16 INT32 UINT32 INT64 UINT64 FLOAT16 BF16 FLOAT DOUBLE BOOL"
ROLL = "FLOAT FLOAT16 INT8 UINT8 INT32 UINT32 BOOL INT64 BF16 INT16"
REPEAT = "FLOAT FLOAT16 DOUBLE UINT8 INT8 INT16 INT32 INT64 BOOL BF16 UINT32 UINT64 UINT16"
RI_A2 = "UINT8 INT8 INT16 INT32 INT64 BOOL FLOAT16 FLOAT BF16"
RI_950 = RI_A2 + " UINT16 UINT32 UINT64"
MASKED_FILL = "INT32 INT8 BOOL INT64 FLOAT FLOAT16 BF16"
LINSPACE = "FLOAT FLOAT16 BF16 INT32 INT16 INT8 UINT8 INT64 DOUBLE"
OPS = {
    "Tril": Op(names(TRIL), names(TRIL), run_tril),
    "InplaceTril": Op(names(TRIL), names(TRIL), lambda n: run_tril(n, True)),
    "Flip": Op(names(FLIP_950), names(FLIP_A2), run_flip),
    "Roll": Op(names(ROLL), names(ROLL), run_roll),
    "Repeat": Op(names(REPEAT), names(REPEAT), run_repeat),
    "RepeatInterleave": Op(names(RI_950), names(RI_A2), run_repeat_interleave),
    "InplaceMaskedFillTensor": Op(names(MASKED_FILL), names(MASKED_FILL), run_masked_fill),
    "Linspace": Op(names(LINSPACE), names(LINSPACE), run_linspace),
}
CASES = [(op, d) for op, o in OPS.items() for d in o.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_against_the_reference(op, name):
    got, want = OPS[op].run(name)
    same_bits(got, want)


def test_linspace_within_float64_and_torch():
    torch = pytest.importorskip("torch")
    for a, b, n in ((-1.0, 3.3, 1000), (1e3, -1e-3, 257), (0.0, 1.0, 100)):
        got = ops.Linspace(ops.Scalar(a, np.float64), ops.Scalar(b, np.float64), n, np.zeros(n, F))
        exact = np.linspace(F(a), F(b), n)
        # class b on the arch35 steps; against float64: within 4 ulp of the largest magnitude
        assert np.all(np.abs(got - exact) <= 4 * np.spacing(F(max(abs(a), abs(b))))), (a, b, n)
        assert np.allclose(got, torch.linspace(a, b, n).numpy(), rtol=0, atol=4 * np.spacing(F(max(abs(a), abs(b)))))


def test_repeat_interleave_tensor_and_counts_faults():
    counts = np.array([2, 0, 3, 1])
    for dt in (np.int64, np.int32):
        same_bits(ops.RepeatInterleaveTensor(counts.astype(dt), 6, np.zeros(6, dt)),
                  np.repeat(np.arange(4), counts).astype(dt))
    x = sample("float32", (4,))
    with pytest.raises(AclError) as e:                                     # counts do not sum to outputSize
        ops.RepeatInterleave(x, counts, 7, np.zeros(7, F))
    assert "sum to" in str(e.value)
    with pytest.raises(AclError):                                          # a negative count
        ops.RepeatInterleave(x, np.array([2, -1, 3, 2]), 6, np.zeros(6, F))


def test_zero_d_empty_and_aliasing():
    x = sample("float32", (4, 4))
    t = pyaclnn.from_numpy(x.copy())
    ops.Tril(t, -1, t)                                                     # out is self
    same_bits(t.numpy(), np.tril(x, -1))
    same_bits(ops.Flip(np.float32(2).reshape(()), [0], np.zeros((), F)), np.float32(2).reshape(()))
    same_bits(ops.Repeat(np.float32(2).reshape(()), [], np.zeros((), F)), np.float32(2).reshape(()))
    same_bits(ops.Repeat(np.float32(2).reshape(()), [3], np.zeros(3, F)), np.full(3, 2, F))
    assert ops.Roll(np.zeros((0, 3), F), [1], [], np.zeros((0, 3), F)).shape == (0, 3)
    assert ops.Repeat(x, [0, 2], np.zeros((0, 8), F)).shape == (0, 8)
    assert ops.Linspace(ops.Scalar(0, np.int64), ops.Scalar(1, np.int64), 0, np.zeros(0, F)).shape == (0,)


# ---- the status codes of every dtype on both SoCs ----------------------------------------------------------

def list_calls(op, n):
    t = lambda shape: ["t", n, shape]        # noqa: E731
    return {
        "Tril": [t([3, 3]), 0, t([3, 3])],
        "InplaceTril": [t([3, 3]), 0],
        "Flip": [t([2, 3]), [0], t([2, 3])],
        "Roll": [t([2, 3]), [1], [1], t([2, 3])],
        "Repeat": [t([2, 3]), [2, 1], t([4, 3])],
        "RepeatInterleave": [t([2, 3]), ["t", "int64", [1], 2], 12, t([12])],
        "InplaceMaskedFillTensor": [t([2, 3]), ["t", "bool", [3]], ["t", n, []]],
        "Linspace": [["s", 0, "int64"], ["s", 4, "int64"], 5, t([5])],
    }[op]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    cases = [(op, n, list_calls(op, n), 0 if n in (o.dtypes_950 if soc != A2 else o.dtypes_a2) else INVALID)
             for op, o in OPS.items() for n in ALL]
    for form, args in (("RepeatInterleaveWithDim", lambda n: [["t", n, [2, 3]], ["t", "int64", [3], 2], 1, 6,
                                                              ["t", n, [2, 6]]]),
                       ("RepeatInterleaveInt", lambda n: [["t", n, [2, 3]], 2, 12, ["t", n, [12]]]),
                       ("RepeatInterleaveIntWithDim", lambda n: [["t", n, [2, 3]], 2, 0, 4, ["t", n, [4, 3]]])):
        lst = OPS["RepeatInterleave"].dtypes_950 if soc != A2 else OPS["RepeatInterleave"].dtypes_a2
        cases += [(form, n, args(n), 0 if n in lst else INVALID) for n in ALL]
    check_lists(cases, soc)


def test_catalog_lists_are_the_vendor_lists():
    from pyaclnn import _catalog
    cat = _catalog.operators()
    known = lambda ns: " ".join(n for n in ns if "FLOAT8" not in n)   # noqa: E731 (the 8-bit floats: bytes)
    for op, o in OPS.items():
        d = cat[f"aclnn{op}"]["dtypes"]
        d = d.get("self", d.get("selfRef", d.get("out", next(iter(d.values())))))
        assert names(known(d["950"])) == o.dtypes_950 and names(known(d["A2"])) == o.dtypes_a2, op


# ---- validation -------------------------------------------------------------------------------------------

X = np.zeros((2, 3), F)
S = lambda v: ops.Scalar(v, np.int64)     # noqa: E731
VALIDATION = [
    ("Tril", (X[0], 0, X[0]), "Dim of self should be last 2 dims."),
    ("Tril", (X, 0, X.astype(np.float16)), "should be the same"),
    ("Tril", (X, 0, X.T.copy()), "Shape of out should be [2, 3]"),
    ("InplaceTril", (np.zeros((1,) * 9, F), 0), "at most 8 are supported"),
    ("Flip", (X, [0, -2], X), "dim:[0] appears multiple times in the list of dims"),
    ("Flip", (X, [2], X), "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("Roll", (X, [1, 2], [0], X), "The size of shifts and dims should be the same"),
    ("Roll", (X, [1, 2], [], X), "The size of shifts must be 1 if the size of dims is 0."),
    ("Roll", (X, [1], [3], X), "The values of dims should be in range [-2, 1]."),
    ("Repeat", (X, [2], X), "can not be smaller than number of dimensions of input tensor"),
    ("Repeat", (X, [1, -1], X), "repeats expected 2th value > 0, but got -1"),
    ("Repeat", (X, [1, 2], X), "Shape of out should be [2, 6]"),
    ("RepeatInterleaveIntWithDim", (X, -1, 0, 4, X), "repeats -1 can not be negative."),
    ("RepeatInterleaveIntWithDim", (X, 2, 2, 4, X), "Dimension out of range (expected to be in range of [-2, 1]"),
    ("RepeatInterleaveWithDim", (X, np.array([1, 2]), 1, 3, X), "must be size 1 or have the same size 3"),
    ("RepeatInterleave", (X, np.ones((2, 1), np.int64), 6, np.zeros(6, F)), "repeats has 2 dimensions"),
    ("RepeatInterleave", (X, np.array([1.0]), 6, np.zeros(6, F)), "repeats dtype DOUBLE is not supported"),
    ("RepeatInterleaveTensor", (np.ones((2, 2), np.int64), 4, np.zeros(4, np.int64)),
     "repeats must be an empty tensor / 1D tensor."),
    ("InplaceMaskedFillTensor", (X, np.zeros(3, bool), np.zeros(1, F)), "value must be a 0-dimensional tensor"),
    ("InplaceMaskedFillTensor", (X, np.zeros((3, 3), bool), np.zeros((), F)), "can not broadcast"),
    ("InplaceMaskedFillTensor", (X[:1], np.zeros((2, 3), bool), np.zeros((), F)), "Shape of selfRef"),
    ("InplaceMaskedFillTensor", (X, np.zeros(3, np.uint8), np.zeros((), F)), "mask dtype UINT8 is not supported"),
    ("Linspace", (S(0), S(1), -1, np.zeros(0, F)), "number of steps must be non-negative."),
    ("Linspace", (S(0), S(1), 3, np.zeros(4, F)), "size of out must equal to steps"),
]


@pytest.mark.parametrize("op,args,text", VALIDATION, ids=[f"{v[0]}-{i}" for i, v in enumerate(VALIDATION)])
def test_validation_codes_and_messages(op, args, text):
    with pytest.raises(AclError) as info:
        getattr(ops, op)(*args)
    assert info.value.code == INVALID and text in (info.value.message or ""), (info.value.code, info.value.message)


@pytest.mark.parametrize("func,n,code", [("aclnnTrilGetWorkspaceSize", 3, NULLPTR),
                                         ("aclnnFlipGetWorkspaceSize", 3, NULLPTR),
                                         ("aclnnRollGetWorkspaceSize", 4, NULLPTR),
                                         ("aclnnRepeatGetWorkspaceSize", 3, NULLPTR),
                                         ("aclnnRepeatInterleaveGetWorkspaceSize", 4, NULLPTR),
                                         ("aclnnInplaceMaskedFillTensorGetWorkspaceSize", 3, NULLPTR),
                                         ("aclnnLinspaceGetWorkspaceSize", 4, INNER_NULLPTR)])
def test_null_arguments(func, n, code):
    assert raw_null_status(func, n) == code


# ---- torch_npu on the emulator --------------------------------------------------------------------------------

TX = sample("float32", (3, 4, 5))
register_torch("shape_moves", """
x = T(dec(SPEC["x"]))
calls = {"tril": lambda t: torch.tril(t, -1), "tril_": lambda t: t.clone().tril_(1),
         "flip": lambda t: torch.flip(t, (0, 2)), "roll": lambda t: torch.roll(t, (2, -1), (1, 2)),
         "roll_flat": lambda t: torch.roll(t, 7), "repeat": lambda t: t.repeat(2, 1, 1, 2),
         "tile": lambda t: torch.tile(t, (2,)), "ri_int": lambda t: t.repeat_interleave(2, dim=1),
         "ri_int_flat": lambda t: t.repeat_interleave(3),
         "ri_counts": lambda t: t.repeat_interleave(torch.tensor([1, 0, 2], device=t.device), dim=0),
         "ri_counts_flat": lambda t: t[0, 0].repeat_interleave(torch.tensor([1, 0, 2, 1, 3], device=t.device)),
         "masked_fill_t": lambda t: t.masked_fill(t > 0, torch.tensor(-2.0, device=t.device)),
         "linspace": lambda t: torch.linspace(-1, 2.5, 50, device=t.device),
         "linspace_half": lambda t: torch.linspace(0, 10, 9, device=t.device, dtype=torch.float16)}
for dev in ("cpu", "npu"):
    for name, f in calls.items():
        run_array(f"{name}-{dev}", lambda: f(x.to(dev)))
""", {"x": enc(TX)})


@pytest.mark.parametrize("call", ["tril", "tril_", "flip", "roll", "roll_flat", "repeat", "tile", "ri_int",
                                  "ri_int_flat", "ri_counts", "ri_counts_flat", "masked_fill_t", "linspace",
                                  "linspace_half"])
def test_torch_npu_calls(call):
    res = torch_results("shape_moves")
    npu, cpu = res[f"{call}-npu"], res[f"{call}-cpu"]
    assert "error" not in npu, npu
    if call.startswith("linspace"):
        assert np.allclose(dec(npu).astype(np.float64), dec(cpu).astype(np.float64), rtol=1e-3, atol=1e-6)
    else:
        same_bits(dec(npu), dec(cpu))
