"""Operators op-plugin's own test files needed (issue 21 point 5, the "misc" share): Cummax and Cummin
(reduce/cum_extreme.toml) and the others this file's tables list -- against float64 NumPy references written
from the vendor's definitions (exact operators bit for bit), every dtype of the vendor's lists (Ascend 950 here,
Atlas A2 statuses in one subprocess), strided views, empty and 0-d tensors, the validation codes and messages,
and torch's calls through torch_npu on the emulator against torch CPU (added to the family test files'
torch_npu children: test_reduce_more.py ...).

Adding an operator adds rows to the tables."""
from __future__ import annotations

import numpy as np
import pytest

from _gen_ops import assert_null_checks, codes_on, message
from _math_ops import A2, INVALID, code, names, same_bits
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(2121)
FLOATS = ("float32", "float16", "bfloat16", "float64")


def values(name, shape, scale=3.0):
    """Samples of dtype `name` with repeats (ties) and, for floats, a NaN and infinities."""
    if name == "bool":
        return RNG.random(shape) > 0.5
    if name in FLOATS:
        x = np.round(RNG.standard_normal(shape) * scale, 1)
        flat = x.reshape(-1)
        if flat.size > 8:
            flat[[3, 5, 7]] = [np.nan, np.inf, -np.inf]
        return R.cast(x, name)
    info = np.iinfo(R.np_dtype(name))
    return R.cast(RNG.integers(max(int(info.min), -6), min(int(info.max), 7), shape), name)


# ---- Cummax / Cummin: exact -------------------------------------------------------------------------------------

def cum_ref(x, dim, largest):
    """The vendor kernel's walk: keep the running value while strictly better, else take the new element."""
    xs = np.moveaxis(np.asarray(x), dim, -1)
    vals, idx = xs.copy(), np.zeros(xs.shape, np.int64)
    for pos in np.ndindex(xs.shape[:-1]):
        cur, at = None, 0
        for k in range(xs.shape[-1]):
            y = xs[pos + (k,)]
            keep = cur is not None and (cur > y if largest else cur < y)
            if not keep:
                cur, at = y, k
            vals[pos + (k,)], idx[pos + (k,)] = cur, at
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


@pytest.mark.parametrize("name", names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 UINT8 BOOL BF16"))
def test_cummax_cummin_every_dtype(name):
    x = values(name, (3, 4, 5))
    for op, largest in (("Cummax", True), ("Cummin", False)):
        for dim, idx_dtype, view in ((1, np.int64, True), (-1, np.int32, False), (0, np.int64, True)):
            want_v, want_i = cum_ref(x, dim, largest)
            v, i = getattr(ops, op)(strided(x, transpose=True) if view else x, dim, np.zeros(x.shape, x.dtype),
                                    np.zeros(x.shape, idx_dtype))
            same_bits(v, want_v)
            same_bits(i, want_i.astype(idx_dtype))


def test_cummax_cummin_edges():
    x = np.array([1.0, np.nan, 2.0, 2.0, -0.0, 0.0, np.nan, np.nan], np.float32)
    v, i = ops.Cummax(x, 0, np.zeros_like(x), np.zeros(8, np.int64))
    same_bits(v, np.array([1, np.nan, 2, 2, 2, 2, np.nan, np.nan], np.float32))   # a NaN is replaced, ties: later
    same_bits(i, np.array([0, 1, 2, 3, 3, 3, 6, 7]))
    v, i = ops.Cummin(x, 0, np.zeros_like(x), np.zeros(8, np.int64))
    same_bits(v, np.array([1, np.nan, 2, 2, -0.0, 0.0, np.nan, np.nan], np.float32))
    same_bits(i, np.array([0, 1, 2, 3, 4, 5, 6, 7]))
    v, i = ops.Cummin(np.float32(3).reshape(()), -1, np.zeros((), np.float32), np.zeros((), np.int64))
    assert v.tolist() == 3.0 and i.tolist() == 0                      # Cummin takes a 0-d self
    e = np.zeros((0, 3), np.float32)
    assert ops.Cummax(e, 1, e.copy(), np.zeros((0, 3), np.int64))[0].shape == (0, 3)


def test_cummax_cummin_validation():
    x, i64 = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int64)
    assert "dimension specified as 0 but tensor has not dimensions." in message(
        ops.Cummax, np.float32(1).reshape(()), 0, np.zeros((), np.float32), np.zeros((), np.int64))
    assert "dim must be within the range of [-2, 1], but it is 2." in message(ops.Cummin, x, 2, x, i64)
    assert code(ops.Cummax, x, 1, x, i64.astype(np.int16)) == INVALID
    assert code(ops.Cummin, x.astype(np.uint16), 1, x.astype(np.uint16), i64) == INVALID
    assert "to have same size as tensor for indicesOut" in message(ops.Cummax, x, 1, x, np.zeros((3, 2), np.int64))
    assert code(ops.Cummin, x, 1, x.astype(np.float16), i64) == 0    # valuesOut of another listed dtype: cast
    assert_null_checks((("aclnnCummaxGetWorkspaceSize", 4), ("aclnnCumminGetWorkspaceSize", 4)))


# ---- status per SoC (one A2 subprocess) -------------------------------------------------------------------------

# The calls whose status differs between the SoCs' lists.
SOC_CALLS = """[
    code(ops.Cummax, np.ones((2, 3), ml_dtypes.bfloat16), 1, np.ones((2, 3), ml_dtypes.bfloat16),
         np.ones((2, 3), np.int64)),
]"""
SOC_CODES = {"Ascend950PR": [0], A2: [0]}


@pytest.mark.parametrize("soc", list(SOC_CODES))
def test_status_per_soc(soc):
    assert codes_on(soc, SOC_CALLS) == SOC_CODES[soc]
