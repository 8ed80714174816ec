"""searchsorted (native_stubs/src/ops/sort/searchsorted.toml): aclnnSearchSorted and aclnnSearchSorteds against
torch CPU's searchsorted (exact): 1-D and batched rows, right / left, a sorter, NaN keys and rows, mixed dtypes
(promotion), int32 / int64 outputs, every dtype of the vendor's list (950 in process, A2 in test_spatial2_dtype_lists.py's
child), empty
operands (zeros), the validation codes and messages; and torch_npu's searchsorted / bucketize against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, error_of, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5011)
LIST = ["float16", "float32", "int16", "int8", "uint8", "int32", "int64", "float64"]


def sample(shape, name, sort=False):
    a = RNG.integers(0, 20, shape) if name.startswith(("int", "uint")) else RNG.integers(-40, 40, shape) / 4
    a = R.cast(a, name) if name in ("float16", "float32") else a.astype(R.np_dtype(name))
    return np.sort(a, axis=-1) if sort else a


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("name,seq_shape,x_shape,right,int32", [(n, (9,), (3, 4), n == "int8", n == "uint8")
                                                               for n in LIST] +
                         [("float32", (2, 3, 7), (2, 3, 5), True, False), ("int64", (2, 6), (2, 1), False, True)])
def test_searchsorted_matches_torch(name, seq_shape, x_shape, right, int32):
    seq, x = sample(seq_shape, name, sort=True), sample(x_shape, name)
    want = torch.searchsorted(t(seq), t(x), out_int32=int32, right=right).numpy()
    got = ops.SearchSorted(seq, x, int32, right, None, zeros(x_shape, "int32" if int32 else "int64"))
    np.testing.assert_array_equal(got, want)


def test_sorter_nan_promotion_strided_and_scalar():
    seq = np.array([[3.0, 1.0, np.nan, 2.0], [0.5, -1.0, 4.0, 2.0]], np.float32)
    sorter = np.argsort(seq, axis=-1).astype(np.int64)                 # NaN sorts last
    x = np.array([[2.0, np.nan, 0.0], [2.0, 5.0, -2.0]], np.float32)
    for right in (False, True):
        want = torch.searchsorted(t(seq), t(x), right=right, sorter=t(sorter)).numpy()
        got = ops.SearchSorted(strided(seq), strided(x), False, right, sorter, zeros(x.shape, "int64"))
        np.testing.assert_array_equal(got, want)
    seq16, xi = np.array([1, 2, 2, 5], np.int16), np.array([2.5, 2.0, -1.0], np.float64)     # promoted to DOUBLE
    np.testing.assert_array_equal(ops.SearchSorted(seq16, xi, False, True, None, zeros(3, "int64")),
                                  torch.searchsorted(t(seq16), t(xi), right=True).numpy())
    code, msg = error_of(ops.SearchSorted, seq, x, False, False, np.full_like(sorter, 4), zeros(x.shape, "int64"))
    assert code != 0 and "sorter index out of range" in msg                          # an AI CPU fault
    # the scalar form: ToFloat, then sortedSequence's dtype (2.7 -> 2 for INT32); out taken as [1]
    got = ops.SearchSorteds(np.array([1, 2, 3, 5], np.int32), 2.7, True, False, None, zeros((), "int32"))
    assert int(np.asarray(got).reshape(-1)[0]) == 1
    got = ops.SearchSorteds(np.array([1.0, 2.0, 3.0], np.float32), 2.0, False, True, None, zeros((1,), "int64"))
    assert int(got[0]) == 2
    # empty operands: zeros
    np.testing.assert_array_equal(ops.SearchSorted(np.zeros(0, np.float32), x, False, False, None,
                                                   np.full(x.shape, 9, np.int64)), np.zeros(x.shape))


S, X, O = np.zeros((2, 4), np.float32), np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int64)


@pytest.mark.parametrize("op,args,code,text", [
    ("SearchSorted", (None, X, False, False, None, O), NULLPTR, ""),
    ("SearchSorted", (S.astype(np.bool_), X, False, False, None, O), INVALID, "BOOL"),
    ("SearchSorted", (S, X, True, False, None, O), INVALID, "Tensor out expected dtype is INT32 but found INT64."),
    ("SearchSorted", (S, X, False, False, S.astype(np.int32), O), INVALID, "Tensor sorter expected dtype is INT64 but "
     "found INT32."),
    ("SearchSorted", (S, X, False, False, None, O[:, :2]), INVALID, "Expected tensor for self to have same size as "
     "tensor for out"),
    ("SearchSorted", (S, X, False, False, S[:, :2].astype(np.int64), O), INVALID, "Expected tensor for sortedSequence "
     "to have same size as tensor for sorter"),
    ("SearchSorted", (S, X[:1, :1].reshape(1), False, False, None, O[:1, :1].reshape(1)), INVALID, "self value can be "
     "a scalar only when sortedSequence tensor dimension is 1, but we got sortedSequence tensor dim([2, 4]) and self "
     "value's dim([1])."),
    ("SearchSorted", (S, np.zeros((3, 3), np.float32), False, False, None, np.zeros((3, 3), np.int64)), INVALID,
     "the first N-1 dimension of sortedSequence tensor and self value tensor must match"),
    ("SearchSorted", (S.astype(np.uint8), X.astype(np.int8), False, False, None, O), 0, ""),
    ("SearchSorteds", (S[0], 1.0, False, False, None, np.zeros(0, np.int64)), INVALID, "The shape of out tensor should "
     "be {1}."),
    ("SearchSorteds", (S, 1.0, False, False, None, O[:1, :1]), INVALID, "self value can be a scalar only when"),
])
def test_searchsorted_validation(op, args, code, text):
    got, msg = error_of(getattr(ops, op), *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = LIST + ["bfloat16", "bool"]
    calls = [("SearchSorted", [["t", d, [4]], ["t", d, [3]], False, False, None, ["t", "int64", [3]]]) for d in cands]
    return calls, [0 if d in LIST else INVALID for d in cands]


_BODY = """
torch.manual_seed(0)
b = torch.sort(torch.randn(2, 9), dim=-1).values
v = torch.randn(2, 5)
OUT["searchsorted"] = [torch.searchsorted(b, v, right=True).tolist(), torch.searchsorted(b.npu(), v.npu(), right=True).cpu().tolist()]
OUT["bucketize"] = [torch.bucketize(v, b[0], out_int32=True).tolist(), torch.bucketize(v.npu(), b[0].npu(), out_int32=True).cpu().tolist()]
OUT["scalar"] = [torch.searchsorted(b[0], 0.25).item(), torch.searchsorted(b[0].npu(), 0.25).item()]
"""


def test_torch_npu_searchsorted_bucketize_match_cpu():
    r = torch_npu_run(_BODY, {})
    for k in ("searchsorted", "bucketize", "scalar"):
        assert r[k][0] == r[k][1], (k, r[k])
