"""aclnnCumsum and aclnnTopk against NumPy (np.cumsum in float64 / int64 with wrap; a stable argsort)
and torch CPU: every dtype of the vendor's lists, any dim, strided input, ties and NaN, sorted and
unsorted selections, and the vendor's validation codes."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from pyaclnn import ops
from pyaclnn.tensor import as_acl_dtype
from _op_helpers import INVALID, NULLPTR, code_of, strided
from reference import elementwise as R
from test_elementwise_arith import same_bits

RNG = np.random.default_rng(1519)
FLOATS = ["float32", "float16", "bfloat16", "float64"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]


def sample(name, shape):
    if name in FLOATS:
        return R.cast(RNG.standard_normal(shape) * 4, name)
    info = np.iinfo(np.dtype(name))
    return RNG.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(name)


def acl(name):
    return as_acl_dtype(name)


# ---- aclnnCumsum --------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS + INTS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumsum_every_dtype_and_dim(name, dim):
    x = sample(name, (4, 5, 6))
    got = ops.Cumsum(x, dim, acl(name), np.zeros_like(x))
    if name in FLOATS:       # each prefix: float64 sum rounded once through fp32 (within an ulp of NumPy's)
        want64 = np.cumsum(x.astype(np.float64), axis=dim)
        want = want64 if name == "float64" else R.cast(want64.astype(np.float32), name)
        ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
        assert (np.abs(got.astype(np.float64) - want.astype(np.float64)) <= ulp).all()
    else:                    # exact, wrapping at the dtype's width
        want = np.cumsum(x.astype(np.int64), axis=dim).astype(name)
        np.testing.assert_array_equal(got, want)


def test_cumsum_casts_self_to_out_dtype_and_strided():
    x = RNG.integers(-50, 50, (6, 7)).astype(np.int32)
    got = ops.Cumsum(strided(x, transpose=True), 1, acl("float32"), np.zeros((6, 7), np.float32))
    np.testing.assert_array_equal(got, np.cumsum(x, axis=1).astype(np.float32))


def test_cumsum_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = sample("float32", (3, 100))
    want = torch.cumsum(torch.from_numpy(x), 1).numpy()
    got = ops.Cumsum(x, 1, acl("float32"), np.zeros_like(x))
    assert np.abs(got - want).max() <= 1e-5 * np.abs(x).sum(axis=1).max()


def test_cumsum_validation_codes():
    x = np.zeros((2, 3), np.float32)
    cs = ops.Cumsum
    assert code_of(cs, x, 2, acl("float32"), np.zeros_like(x)) == INVALID                 # dim out of range
    assert code_of(cs, x, 0, acl("float16"), np.zeros_like(x)) == INVALID                 # dtype != out dtype
    assert code_of(cs, x, 0, acl("bool"), np.zeros((2, 3), bool)) == INVALID              # BOOL out
    assert code_of(cs, x, 0, acl("float32"), np.zeros((3, 2), np.float32)) == INVALID     # out shape
    assert code_of(cs, np.zeros((1,) * 9, np.float32), 0, acl("float32"), np.zeros((1,) * 9, np.float32)) == INVALID
    assert code_of(cs, np.zeros(3, np.float32), 0, acl("float32"), None) == NULLPTR


# ---- aclnnTopk ----------------------------------------------------------------------------------

def topk_ref(x, k, dim, largest, sorted_=True):
    """NumPy: a stable sort on the ranking key (NaN largest), ties in input order."""
    x = np.moveaxis(np.asarray(x), dim, -1)
    if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16:
        f = x.astype(np.float64)
        key = np.where(np.isnan(f), np.inf, f)
        nan_rank = np.isnan(f)
        order = np.lexsort(((-key if largest else key), (~nan_rank if largest else nan_rank)), axis=-1)
    else:
        key = x.astype(np.float64) if x.dtype != np.uint64 else x
        order = np.argsort(-key if largest else key, axis=-1, kind="stable") if x.dtype != np.uint64 else \
            (np.argsort(key, axis=-1, kind="stable")[..., ::-1] if largest else np.argsort(key, axis=-1, kind="stable"))
    idx = order[..., :k]
    if not sorted_:
        idx = np.sort(idx, axis=-1)
    vals = np.take_along_axis(x, idx, axis=-1)
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim).astype(np.int64)


def run_topk(x, k, dim, largest=True, sorted_=True):
    shape = list(x.shape)
    shape[dim] = k
    return ops.Topk(x, k, dim, largest, sorted_, np.zeros(shape, x.dtype), np.zeros(shape, np.int64))


@pytest.mark.parametrize("name", FLOATS + INTS + ["uint16", "uint32"])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_every_dtype(name, largest):
    x = sample(name, (3, 17)) if name not in ("uint16", "uint32") else \
        RNG.integers(0, np.iinfo(name).max, (3, 17)).astype(name)
    vals, idx = run_topk(x, 5, 1, largest)
    want_v, want_i = topk_ref(x, 5, 1, largest)
    same_bits(vals, want_v)
    np.testing.assert_array_equal(idx, want_i)


def test_topk_ties_keep_input_order_and_nan_is_largest():
    x = np.array([[1.0, 3.0, np.nan, 3.0, -1.0, 3.0]], np.float32)
    vals, idx = run_topk(x, 4, 1, True)
    np.testing.assert_array_equal(idx, [[2, 1, 3, 5]])
    vals, idx = run_topk(x, 2, 1, False)
    np.testing.assert_array_equal(idx, [[4, 0]])


def test_topk_unsorted_lists_the_selection_in_input_order():
    x = np.array([[5, 1, 9, 7, 3]], np.int32)
    vals, idx = run_topk(x, 3, 1, True, False)
    np.testing.assert_array_equal(idx, [[0, 2, 3]])
    np.testing.assert_array_equal(vals, [[5, 9, 7]])


def test_topk_non_last_dim_and_strided():
    x = sample("float32", (6, 4))
    vals, idx = ops.Topk(strided(x, transpose=True), 2, 0, True, True, np.zeros((2, 4), np.float32),
                         np.zeros((2, 4), np.int64))
    want_v, want_i = topk_ref(x, 2, 0, True)
    same_bits(vals, want_v)
    np.testing.assert_array_equal(idx, want_i)


def test_topk_matches_torch_cpu():
    torch = pytest.importorskip("torch")
    x = RNG.permutation(200).astype(np.float32).reshape(4, 50)     # distinct values: no tie ambiguity
    v, i = torch.topk(torch.from_numpy(x), 7, dim=1)
    vals, idx = run_topk(x, 7, 1)
    np.testing.assert_array_equal(vals, v.numpy())
    np.testing.assert_array_equal(idx, i.numpy())


def test_topk_validation_codes():
    x = np.zeros((2, 5), np.float32)
    tk = ops.Topk
    ok = lambda k=2: (np.zeros((2, k), np.float32), np.zeros((2, k), np.int64))   # noqa: E731
    assert code_of(tk, x, 2, 1, True, True, *ok()) == 0
    assert code_of(tk, x, 6, 1, True, True, *ok(6)) == INVALID                       # k > size
    assert code_of(tk, x, -1, 1, True, True, *ok()) == INVALID                       # k < 0
    assert code_of(tk, x, 2, 2, True, True, *ok()) == INVALID                        # dim
    assert code_of(tk, x, 2, 1, True, True, np.zeros((2, 2), np.float16), ok()[1]) == INVALID    # values dtype
    assert code_of(tk, x, 2, 1, True, True, ok()[0], np.zeros((2, 2), np.int32)) == INVALID      # indices INT64
    assert code_of(tk, x.astype(bool), 2, 1, True, True, np.zeros((2, 2), bool), ok()[1]) == INVALID
    assert code_of(tk, x, 2, 1, True, True, np.zeros((2, 3), np.float32), ok()[1]) == INVALID    # values shape
    assert code_of(tk, x, 2, 1, True, True, None, ok()[1]) == NULLPTR
