"""Channel shuffle (native_stubs/src/ops/conversion/channel_shuffle.toml): aclnnChannelShuffle against torch CPU's
channel_shuffle (exact: elements moved), every dtype of the vendor's list (950 in process, A2 in test_spatial2_dtype_lists.py's
child; no
complex), 3-D to 7-D inputs, strided views, empty tensors, the validation codes and messages; and torch_npu's
nn.ChannelShuffle against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, error_of, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5407)
LIST = ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool", "bfloat16"]


@pytest.mark.parametrize("name,shape,groups", [(n, (2, 6, 3), 3) for n in LIST] + [("float32", (1, 8, 2, 3), 2),
                                                                                  ("int32", (2, 4, 1, 2, 1, 1, 2), 4)])
def test_channel_shuffle_matches_torch(name, shape, groups):
    x = R.cast(RNG.integers(-50, 50, shape), name) if name not in ("uint8", "bool") else \
        RNG.integers(0, 2 if name == "bool" else 200, shape).astype(R.np_dtype(name))
    want = torch.nn.functional.channel_shuffle(torch.from_numpy(x.astype(np.float64)), groups).numpy()
    got = ops.ChannelShuffle(strided(x), groups, zeros(shape, name))
    np.testing.assert_array_equal(got.astype(np.float64), want)


X = np.zeros((2, 6, 3), np.float32)


@pytest.mark.parametrize("args,code,text", [
    ((None, 2, X), NULLPTR, ""),
    ((X, 2, X.astype(np.float16)), INVALID, "FLOAT"),
    ((X, 0, X), INVALID, "Number of groups to divide channels in must be positive. Value of groups: 0."),
    ((X, 4, X), INVALID, "Number of channels must be divisible by groups.Got 6 channels and 4 groups."),
    ((X, 2, X[..., :2]), INVALID, "Expected tensor for self to have same size as tensor for out"),
    ((X[0], 1, X[0]), INVALID, "must have at least 3 dimensions"),
    ((np.zeros((1, 2, 1, 1, 1, 1, 1, 1), np.float32), 2, np.zeros((1, 2, 1, 1, 1, 1, 1, 1), np.float32)), INVALID,
     "cannot be larger than 7 dimensions"),
    ((np.zeros((0, 6, 3), np.float32), 2, np.zeros((0, 6, 3), np.float32)), 0, ""),
])
def test_channel_shuffle_validation(args, code, text):
    got, msg = error_of(ops.ChannelShuffle, *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = LIST + ["uint32"]
    calls = [("ChannelShuffle", [["t", d, [1, 4, 2]], 2, ["t", d, [1, 4, 2]]]) for d in cands]
    return calls, [0 if d in LIST else INVALID for d in cands]


_BODY = """
x = torch.arange(2 * 6 * 2 * 2, dtype=torch.float32).reshape(2, 6, 2, 2)
m = torch.nn.ChannelShuffle(3)
OUT["cs"] = [m(x).tolist(), m(x.npu()).cpu().tolist()]
"""


def test_torch_npu_channel_shuffle_matches_cpu():
    r = torch_npu_run(_BODY, {})
    assert r["cs"][0] == r["cs"][1]
