"""The operators the torch probe (tests/test_torch_npu_probe.py) reached and the emulator lacked:
aclnnArgMin (reduce/reduce.toml). Data-driven: an operator's values are rows of VALUES (a call and its
torch CPU / float64 NumPy reference, per dtype of the vendor's 950 list), its dtype lists rows of DTYPE_ROWS
(950 in-process, A2 in one subprocess), its refusals rows of INVALID_CALLS and NULL_STATUS; one torch_npu
child for the torch calls."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided
from _status_calls import status_codes

RNG = np.random.default_rng(2811)
F32 = np.float32
ALL = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
       "uint32", "uint64", "bool"]


def T(a):
    """A NumPy array as a torch CPU tensor (bf16 through its bits)."""
    a = np.ascontiguousarray(a)
    if a.dtype == R.BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def rand(shape, name, lo=-8, hi=8):
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if name.startswith("uint"):
        lo = 0
    v = RNG.integers(lo, hi, shape) if name[0] in "iu" else RNG.standard_normal(shape) * 3
    return R.cast(np.asarray(v, np.float64), name)


# ---- values: (operator, dtypes, check(name)) --------------------------------------------------------------

def _argmin(name):
    x = rand((5, 7, 3), name)
    for dim, keep, view in [(1, False, False), (-1, True, True), (0, False, True)]:
        oshape = T(x).argmin(dim, keepdim=keep).shape
        for odt in (np.int64, np.int32):
            got = ops.ArgMin(strided(x) if view else x, dim, keep, np.zeros(oshape, odt))
            assert got.dtype == odt and np.array_equal(got, T(x).argmin(dim, keepdim=keep).numpy()), (name, dim)


def _argmin_edges(_):
    x = F32([[3, 1, np.nan, 1], [2, -np.inf, -np.inf, 0], [0.0, -0.0, 0.0, 1]])
    assert ops.ArgMin(x, 1, False, np.zeros(3, np.int64)).tolist() == T(x).argmin(1).tolist() == [2, 1, 0]
    assert int(ops.ArgMin(F32(7), 0, False, np.full((), 9, np.int64))) == 0   # 0-d: index 0 (the vendor's Fill)
    assert int(ops.ArgMin(F32(7), -1, True, np.full((), 9, np.int32))) == 0
    assert ops.ArgMin(np.zeros((0, 3), F32), 1, False, np.zeros(0, np.int64)).shape == (0,)   # nothing to do


ARG_MIN = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8"]
VALUES = [
    ("ArgMin", ARG_MIN, _argmin),
    ("ArgMin", ["float32"], _argmin_edges),
]


@pytest.mark.parametrize("op,names,check", VALUES, ids=[f"{v[0]}-{i}" for i, v in enumerate(VALUES)])
def test_values_match_the_reference(op, names, check):
    for name in names:
        check(name)


# ---- dtype lists per SoC: (operator, builder(dtype) -> args, 950 list, A2 list) ---------------------------

def t(name, shape, fill=1):
    return ("t", name, list(shape), fill)


DTYPE_ROWS = [
    ("ArgMin", lambda d: [t(d, (2, 3)), 1, False, t("int64", (2,))], ARG_MIN, ARG_MIN),
]


def _dtype_calls():
    return [(op, build(name)) for op, build, _, _ in DTYPE_ROWS for name in ALL]


def _dtype_want(soc_index):
    return [0 if name in row[2 + soc_index] else INVALID for row in DTYPE_ROWS for name in ALL]


def test_dtype_lists_950():
    assert status_codes(_dtype_calls(), "Ascend950PR") == _dtype_want(0)


def test_dtype_lists_a2():
    assert status_codes(_dtype_calls(), "Ascend910B4") == _dtype_want(1)


# ---- refusals: (operator, args, code, message) -------------------------------------------------------------

X23 = np.zeros((2, 3), F32)
INVALID_CALLS = [
    ("ArgMin", (X23, 2, False, np.zeros(2, np.int64)), "dim must be within the range of [-2, 1], but it is 2."),
    ("ArgMin", (F32(1), 1, False, np.zeros((), np.int64)), "dim must be within the range of [-1, 0], but it is 1."),
    ("ArgMin", (X23.astype(bool), 9, False, np.zeros(2, np.int64)), "dim must be within the range"),   # dim first
    ("ArgMin", (X23.astype(bool), 1, False, np.zeros(2, np.int64)), "self dtype BOOL is not supported"),
    ("ArgMin", (X23, 1, False, np.zeros(2, F32)), "out dtype FLOAT is not supported"),
    ("ArgMin", (np.zeros((2, 0), F32), 1, False, np.zeros(2, np.int64)),
     "Excepted reduction dim 1 to have non-zero size."),
    ("ArgMin", (X23, 1, True, np.zeros(2, np.int64)), "[2, 1]"),
]


@pytest.mark.parametrize("op,args,text", INVALID_CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(INVALID_CALLS)])
def test_invalid_arguments_return_161002(op, args, text):
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (INVALID, True), str(err)


NULL_STATUS = {"ArgMin": 4}


@pytest.mark.parametrize("op", list(NULL_STATUS))
def test_null_arguments(op):
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", NULL_STATUS[op]) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


# ---- torch_npu: the torch calls reach the operators and match torch CPU -------------------------------------

TORCH_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4, 6); x[1, 2] = float('nan')
CASES = {
    "argmin": (lambda a: a.argmin(dim=0), (x,)),
    "argmin_all": (lambda a: a.argmin(), (x,)),
    "argmin_keep_int": (lambda a: a.argmin(dim=1, keepdim=True), ((x * 5).int(),)),
}
for key, (fn, args) in CASES.items():
    got = fn(*[a.npu() for a in args]); want = fn(*args)
    OUT[key] = [str(got.device), bool(torch.equal(got.cpu(), want))]
"""


def test_torch_npu_reaches_the_operators():
    from _math_ops import torch_npu_run
    out = torch_npu_run(TORCH_BODY, {})
    assert out and all(dev.startswith("npu") and ok for dev, ok in out.values()), out
