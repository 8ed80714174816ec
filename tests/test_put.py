"""aclnnInplacePut (native_stubs/src/ops/index/put.toml) against torch CPU's put_: with and without accumulate
(repeated indices), the vendor's dtype lists per SoC and per accumulate (A2 in one child), strided views, empty
index, out-of-range index (a device fault), validation codes and messages; torch_npu's put_ on the emulator (one
call in the shared child)."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, error_of, status_codes, torch_npu_run  # noqa: F401
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(77)


@pytest.mark.parametrize("name,acc", [("float32", False), ("float32", True), ("float16", True), ("int32", True),
                                      ("bfloat16", False), ("int8", True), ("bool", True), ("float64", False)])
def test_put_matches_torch(name, acc):
    self = R.cast(RNG.uniform(-4, 4, (3, 5)), name)
    ix = np.array([[14, 2, 2], [0, 7, 14]], np.int64 if acc else np.int32)
    src = R.cast(RNG.uniform(-4, 4, (6,)), name)
    got = ops.InplacePut(strided(self), ix, src, acc).numpy()
    t = torch.from_numpy(np.asarray(self, np.float64)).to(getattr(torch, name))
    want = t.put_(torch.from_numpy(ix).long(), torch.from_numpy(np.asarray(src, np.float64)).to(t.dtype), acc)
    g, w = np.asarray(got, np.float64), want.double().numpy()
    if acc and name in ("float16", "bfloat16"):
        assert np.abs(g - w).max() <= 2 * np.spacing(np.abs(w).astype(np.float16)).max()
    elif acc or name == "bool":
        np.testing.assert_array_equal(g, w)
    else:                                 # the last of the repeated indices wins
        np.testing.assert_array_equal(g, w)


def test_empty_index_and_out_of_range():
    self = np.ones(4, np.float32)
    np.testing.assert_array_equal(ops.InplacePut(self, np.zeros(0, np.int64), np.zeros(0, np.float32), False), self)
    code, msg = error_of(lambda: ops.InplacePut(np.ones(4, np.float32), np.array([4]), np.ones(1, np.float32), False))
    assert code != 0 and "index 4 is out of bounds for 4 elements" in msg, msg


S = np.zeros((2, 3), np.float32)


@pytest.mark.parametrize("call,code,text", [
    (lambda: ops.InplacePut(S, None, S, False), NULLPTR, "index is NULL"),
    (lambda: ops.InplacePut(S, np.array([0.0]), S[0, :1], False), INVALID, "Tensor index not implemented for DOUBLE"),
    (lambda: ops.InplacePut(S, np.array([0]), S[0, :1].astype(np.float16), False), INVALID,
     "source dtype FLOAT16 should be in same with self dtype FLOAT."),
    (lambda: ops.InplacePut(S, np.array([0, 1]), S[0, :1], False), INVALID,
     "Expect source and index to have the same number of elements,but the source has 1,the index has 2."),
    (lambda: ops.InplacePut(np.zeros((0, 3), np.float32), np.array([0]), S[0, :1], False), INVALID,
     "Can not put elements into an empty tensor"),
    (lambda: ops.InplacePut(S.astype(R.np_dtype("bfloat16")), np.array([0]), S[0, :1].astype(R.np_dtype("bfloat16")),
                            True), INVALID, "Tensor self not implemented for BFLOAT16"),
])
def test_validation(call, code, text):
    got, msg = error_of(call)
    assert got == code and text in msg, msg


CANDS = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "uint16"]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls = [("InplacePut", [["t", d, [2, 2]], ["t", "int64", [1], 0], ["t", d, [1]], acc]) for d in CANDS
             for acc in (False, True)]
    want = [0 if c[1][0][1] in CANDS[:-1] and not (c[1][3] and c[1][0][1] == "bfloat16") else INVALID for c in calls]
    got = status_codes(calls, soc)
    assert [(c[1][0][1], c[1][3], g) for c, g, w in zip(calls, got, want) if g != w] == []


_BODY = """
x = torch.arange(12.).reshape(3, 4)
ix = torch.tensor([11, 0, 5, 5])
src = torch.tensor([1., 2., 3., 4.])
ok = True
for acc in (False, True):
    want = x.clone().put_(ix, src, acc)
    y = x.npu()
    y.put_(ix.npu(), src.npu(), acc)
    ok = ok and bool(torch.equal(want, y.cpu()))
OUT["put"] = ok
"""


def test_torch_npu_put():
    assert torch_npu_run(_BODY, {})["put"]
