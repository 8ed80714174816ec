"""Histograms (native_stubs/src/ops/math/histc.toml): aclnnHistc against torch CPU's histc (exact counts, away
from bin edges where fp32 and float64 could place an element differently), every dtype of the vendor's list
(950 in process, A2 in test_spatial2_dtype_lists.py's
child), min == max (self's own range), an out dtype other than self's, empty self,
the validation codes and messages; and torch_npu's torch.histc on the emulator against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, error_of, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5107)
LIST = ["float32", "float16", "int64", "int32", "int16", "int8", "uint8"]


@pytest.mark.parametrize("name,bins,lo,hi", [(n, 7, 1.0, 50.0) for n in LIST] + [("float32", 5, -2.0, 2.0),
                                             ("float32", 4, 3.0, 3.0), ("int32", 6, 9, 9)])
def test_histc_matches_torch(name, bins, lo, hi):
    if name.startswith(("int", "uint")):
        x = RNG.integers(0, 60, (3, 17)).astype(R.np_dtype(name))
    else:
        x = R.cast(RNG.integers(-400, 400, (3, 17)) / 8 + 1 / 64, name)     # off the bin edges
    xt = torch.from_numpy(x.astype(np.float64))
    want = torch.histc(xt, bins, lo, hi).numpy()
    got = ops.Histc(strided(x), bins, lo, hi, zeros((bins,), name))
    np.testing.assert_array_equal(got.astype(np.float64), want)


def test_nan_out_dtype_and_empty():
    x = np.array([0.5, np.nan, 1.5, 2.0, -3.0, 2.0], np.float32)
    np.testing.assert_array_equal(ops.Histc(x, 4, 0.0, 2.0, zeros((4,), "int32")), [0, 1, 0, 3])   # the Cast
    np.testing.assert_array_equal(ops.Histc(np.zeros(0, np.float32), 3, 0.0, 1.0, np.ones(3, np.float32)), [0, 0, 0])


X, O = np.zeros(4, np.float32), np.zeros(3, np.float32)


@pytest.mark.parametrize("args,code,text", [
    ((None, 3, 0.0, 1.0, O), NULLPTR, ""),
    ((X.astype(np.float64), 3, 0.0, 1.0, O), INVALID, "DOUBLE"),
    ((X, 3, 0.0, float("inf"), O), INVALID, "range of [0.000000, inf] is not finite"),
    ((X, 0, 0.0, 1.0, O), INVALID, "The value of bins can not less or equal 0."),
    ((X, 3, 2.0, 1.0, O), INVALID, "The value of max should greater than or equal to min."),
    ((X.astype(np.int32), 3, 0, 1, O), INVALID, "Result type FLOAT can't be cast to the desired output type INT32."),
    ((X, 3, 0.0, 1.0, O.reshape(3, 1)), INVALID, "Expected 1 dimension input, but got out with sizes [3, 1]."),
    ((X, 4, 0.0, 1.0, O), INVALID, "The size of out tensor should be same as bins."),
])
def test_histc_validation(args, code, text):
    got, msg = error_of(ops.Histc, *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = LIST + ["bfloat16", "float64", "bool"]
    calls = [("Histc", [["t", d, [4]], 3, 0, 2, ["t", d, [3]]]) for d in cands]
    return calls, [0 if d in LIST else INVALID for d in cands]


_BODY = """
torch.manual_seed(0)
x = torch.randn(4, 5, 6)
OUT["histc"] = [torch.histc(x, 9, -2, 2).tolist(), torch.histc(x.npu(), 9, -2, 2).cpu().tolist()]
OUT["own"] = [torch.histc(x, 5).tolist(), torch.histc(x.npu(), 5).cpu().tolist()]
"""


def test_torch_npu_histc_matches_cpu():
    r = torch_npu_run(_BODY, {})
    for k in ("histc", "own"):
        assert r[k][0] == r[k][1], (k, r[k])
