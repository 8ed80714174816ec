"""Sorting, coordinates and whole-tensor comparisons (native_stubs/src/ops/sort/sort.toml,
index/nonzero.toml, compare/closeness.toml): Sort (stable, NaN largest) bit for bit against NumPy's stable
argsort and torch CPU, Nonzero against NumPy, Equal and IsClose against NumPy references written from the
op_apis and the arch35 kernel; every dtype of the vendor's lists (Ascend 950; Atlas A2 statuses in one
subprocess), strided views, validation codes and messages, and torch_npu's calls on the emulator.

Adding an operator adds a row to one of the tables."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, INVALID, code, dec, names, same_bits
from _gen_ops import assert_null_checks, codes_on, message, torch_pairs
from _op_helpers import strided
from pyaclnn import ops
from pyaclnn.ops._select_ops import view_shape
from reference import elementwise as R

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(2829)
FLOATS = ("float32", "float16", "bfloat16", "float64")


def values(name, shape, few=False):
    """Samples with repeats (ties) and, for floats, NaN / inf / -0.0 / 0.0."""
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if name in FLOATS:
        x = RNG.integers(-4, 5, shape).astype(np.float64) * 0.5
        flat = x.reshape(-1)
        if flat.size >= 5:
            flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
        return R.cast(x, name)
    info = np.iinfo(R.np_dtype(name))
    return RNG.integers(max(int(info.min), -6), min(int(info.max), 7), shape).astype(name)


def sort_ref(x, axis, descending):
    """Stable order with NaN the largest; ties (incl. -0.0 and 0.0) in input order."""
    key = np.asarray(x, np.float64) if x.dtype != np.uint64 else x
    if descending:
        nan = np.isnan(key) if key.dtype.kind == "f" else np.zeros(key.shape, bool)
        # descending stable: sort by (not NaN, -value) keeping input order among equals
        k = np.where(nan, -np.inf, -key) if key.dtype.kind == "f" else -key.astype(np.float64)
        idx = np.argsort(k, axis=axis, kind="stable")
    else:
        idx = np.argsort(key, axis=axis, kind="stable")                  # NumPy puts NaN last
    return np.take_along_axis(x, idx, axis), idx


# ---- Sort: exact -------------------------------------------------------------------------------------------

SORT = names("FLOAT16 FLOAT BF16 UINT8 INT8 INT16 INT32 INT64 UINT16 UINT32 UINT64 BOOL")


@pytest.mark.parametrize("name", SORT)
def test_sort_every_dtype(name):
    x = values(name, (5, 13))
    for dim, desc, stable in ((1, False, True), (0, True, False), (-1, True, True)):
        v, i = ops.Sort(strided(x, transpose=True), stable, dim, desc, np.zeros_like(x), np.zeros(x.shape, np.int64))
        wv, wi = sort_ref(x, dim, desc)
        same_bits(v, wv)
        same_bits(i, wi.astype(np.int64))


def test_sort_edge_shapes_and_wider_values():
    s = np.float32(3.0).reshape(())
    v, i = ops.Sort(s, False, 0, False, np.zeros((), np.float32), np.zeros((), np.int64))
    assert float(v) == 3.0 and int(i) == 0
    e = np.zeros((0, 3), np.float32)
    assert ops.Sort(e, False, 1, False, e.copy(), np.zeros((0, 3), np.int64))[0].shape == (0, 3)


# ---- Nonzero: exact ------------------------------------------------------------------------------------------

NONZERO = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE BOOL BF16 UINT16 UINT32 UINT64")


@pytest.mark.parametrize("name", NONZERO)
def test_nonzero_every_dtype(name):
    x = values(name, (3, 4, 5))
    x = np.where(RNG.random(x.shape) < 0.5, np.zeros((), x.dtype), x).astype(x.dtype)
    out = pyaclnn.empty((x.size, 3), "int64")
    ops.Nonzero(strided(x), out)
    shape = view_shape(out)
    want = np.argwhere(np.asarray(x, np.float64) != 0 if name not in ("uint64",) else x != 0)
    assert shape == want.shape
    same_bits(out.numpy().reshape(-1)[:want.size].reshape(want.shape), want.astype(np.int64))


# ---- Equal: exact; IsClose: the arch35 kernel's fp32 steps (class b) -------------------------------------------

EQUAL = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 BOOL DOUBLE UINT16 UINT32 UINT64 BF16")


@pytest.mark.parametrize("name", EQUAL)
def test_equal_every_dtype(name):
    x = values(name, (4, 6))
    x = np.where(np.isnan(np.asarray(x, np.float64)), np.ones((), x.dtype), x).astype(x.dtype) if name in FLOATS else x
    y = x.copy()
    one = np.zeros(1, bool)
    assert ops.Equal(strided(x), y, one).tolist() == [True]
    y.reshape(-1)[5] = y.reshape(-1)[6] if y.reshape(-1)[5] != y.reshape(-1)[6] else ~y.reshape(-1)[5] \
        if name == "bool" else y.reshape(-1)[5] + 1
    assert ops.Equal(x, y, one).tolist() == [bool(np.array_equal(np.asarray(x, np.float64), np.asarray(y, np.float64)))]
    assert ops.Equal(x, x[:, :3].copy(), one).tolist() == [False]                     # shapes differ
    assert ops.Equal(x, x.reshape(6, 4).copy(), one).tolist() == [False]              # the same elements
    if name in FLOATS:
        assert ops.Equal(np.full(3, np.nan, x.dtype), np.full(3, np.nan, x.dtype), one).tolist() == [False]


def test_equal_promotes_and_empty():
    one = np.zeros(1, bool)
    assert ops.Equal(np.int32([1, 2]), np.float16([1, 2]), one).tolist() == [True]
    assert ops.Equal(np.zeros((0, 2), np.float32), np.zeros((0, 2), np.int8), one).tolist() == [True]
    assert ops.Equal(np.zeros((0, 2), np.float32), np.zeros((2, 0), np.float32), one).tolist() == [False]


def isclose_ref(a, b, rtol, atol, equal_nan):
    x, y = R.cast(a, "float32"), R.cast(b, "float32")
    f = np.float32
    diff = np.abs(x - y)
    bound = (np.abs(y) * f(rtol)).astype(f) + f(atol)
    res = (x == y) | ((diff <= bound) & (np.abs(y) < np.inf))
    if equal_nan:
        res |= np.isnan(x) & np.isnan(y)
    return res


ISCLOSE = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE BOOL BF16")


@pytest.mark.parametrize("name", ISCLOSE)
def test_isclose_every_dtype(name):
    a = values(name, (4, 1, 16))
    b = values(name, (3, 1)) if name not in FLOATS else R.cast(np.asarray(values(name, (3, 1)), np.float64) * 1.0001,
                                                                 name)
    for rtol, atol, eq in ((1e-5, 1e-8, False), (0.01, 0.5, True)):
        got = ops.IsClose(a, strided(b), rtol, atol, eq, np.zeros((4, 3, 16), bool))
        same_bits(got, isclose_ref(*np.broadcast_arrays(a, b), rtol, atol, eq))


def test_isclose_near_the_bound():
    a = RNG.standard_normal(3000).astype(np.float32)
    b = (a + RNG.standard_normal(3000).astype(np.float32) * 1e-5).astype(np.float32)
    got = ops.IsClose(a, b, 1e-5, 1e-6, False, np.zeros(3000, bool))
    same_bits(got, isclose_ref(a, b, 1e-5, 1e-6, False))
    assert 0.1 < got.mean() < 0.9


# ---- validation ------------------------------------------------------------------------------------------------

def test_validation_codes_and_messages():
    x = np.zeros((2, 3), np.float32)
    i64 = np.zeros((2, 3), np.int64)
    assert "dim should be in range [-2, 1]." in message(ops.Sort, x, False, 2, False, x, i64)
    assert code(ops.Sort, x, False, 1, False, x, i64.astype(np.int32)) == INVALID
    assert code(ops.Sort, x.astype(np.float64), False, 1, False, x.astype(np.float64), i64) == INVALID   # 950 list
    assert code(ops.Sort, x, False, 1, False, x[:, :2].copy(), i64) == INVALID
    assert code(ops.Nonzero, x, np.zeros((6, 2), np.int32)) == INVALID
    one = np.zeros(1, bool)
    assert code(ops.Equal, x, x, np.zeros(1, np.int32)) == INVALID
    assert code(ops.Equal, x, x, np.zeros((1, 1), bool)) == INVALID
    assert "can not promote dtype" in message(ops.Equal, x.astype(np.uint16), x, one)
    assert code(ops.IsClose, x, x.astype(np.float16), 1e-5, 1e-8, False, x.astype(bool)) == INVALID   # dtypes match
    assert code(ops.IsClose, x, np.zeros((4, 3), np.float32), 1e-5, 1e-8, False, x.astype(bool)) == INVALID
    assert code(ops.IsClose, x.astype(np.uint16), x.astype(np.uint16), 1e-5, 1e-8, False, x.astype(bool)) == INVALID
    assert_null_checks((
        ("aclnnSortGetWorkspaceSize", 6), ("aclnnNonzeroGetWorkspaceSize", 2),
                 ("aclnnEqualGetWorkspaceSize", 3), ("aclnnIsCloseGetWorkspaceSize", 6)))


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_status_per_soc(soc):
    """Nonzero's unsigned types are Ascend 950's (the A2 side in one subprocess)."""
    got = codes_on(soc, "[code(ops.Nonzero, np.ones((2, 3), dt), np.zeros((6, 2), np.int64)) "
                        "for dt in (np.uint16, np.uint64, ml_dtypes.bfloat16)]")
    assert got == ([0, 0, 0] if soc != A2 else [INVALID, INVALID, 0])


# ---- torch_npu on the emulator -----------------------------------------------------------------------------------

TORCH_X = values("float32", (5, 12))
CALLS = """{
    "sort": lambda t: torch.sort(t, dim=1)[0],
    "sort_idx": lambda t: torch.sort(t, dim=0, descending=True, stable=True)[1],
    "argsort": lambda t: torch.argsort(t, dim=1, stable=True), "msort": lambda t: torch.msort(t),
    "nonzero": lambda t: torch.nonzero(t > 0.5), "where": lambda t: torch.stack(torch.where(t < 0)),
    "equal": lambda t: torch.tensor([torch.equal(t, t.clone()), torch.equal(t, t + 1)]),
    "isclose": lambda t: torch.isclose(t, t * 1.00001, equal_nan=True),
    "allclose": lambda t: torch.tensor([torch.allclose(t[1:], t[1:] + 1e-9), torch.allclose(t[1:], t[1:] + 1)]),
}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_pairs(CALLS, TORCH_X)


@pytest.mark.parametrize("call", ["sort", "sort_idx", "argsort", "msort", "nonzero", "where", "equal", "isclose",
                                  "allclose"])
def test_torch_npu_calls(on_npu, call):
    res = on_npu[call]
    assert "error" not in res, res
    same_bits(dec(res[0]), dec(res[1]))
