"""Renorm (native_stubs/src/ops/norm/renorm.toml): aclnnRenorm and aclnnInplaceRenorm against float64 torch CPU's
renorm (within 2^-21 relative: fp32 norms and products), p in {0, 1, 2, 3, inf, 1.5}, negative dims, every dtype of
the vendor's list (950 in process, A2 in test_spatial2_dtype_lists.py's
child), strided views, the validation codes and messages; and
torch_npu's torch.renorm (forward and backward) against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, dec, error_of, f64, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(5303)


def ref(x, p, dim, mn):
    """torch's renorm in float64 without its 1e-7 (the NPU's factor is maxNorm / max(norm, 1e-12))."""
    xt = torch.from_numpy(f64(x))
    d = dim % x.ndim
    other = [i for i in range(x.ndim) if i != d]
    norm = torch.linalg.vector_norm(xt, p, dim=other, keepdim=True) if p != 0 else \
        (xt != 0).sum(dim=other, keepdim=True).double()
    return (xt * torch.where(norm > mn, mn / norm.clamp_min(1e-12), torch.ones_like(norm))).numpy()


@pytest.mark.parametrize("p,dim,mn,name", [(2.0, 0, 1.5, "float32"), (1.0, -1, 2.0, "float32"), (0.0, 1, 3.0, "float32"),
                                           (3.0, 1, 1.0, "float32"), (float("inf"), 0, 0.5, "float32"),
                                           (1.5, 2, 1.0, "float32"), (2.0, 1, 1.0, "float16"), (2.0, 0, 2.0, "bfloat16")])
def test_renorm_matches_torch(p, dim, mn, name):
    x = R.cast(RNG.standard_normal((3, 4, 5)), name)
    want = ref(x, p, dim, mn)
    got = ops.Renorm(strided(x), p, dim, mn, zeros(x.shape, name))
    tol = {"float32": 2.0 ** -21, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[name]
    assert (np.abs(f64(got) - want) <= tol * np.abs(want) + 1e-30).all()
    if name == "float32":
        y = x.copy()
        np.testing.assert_array_equal(ops.InplaceRenorm(y, p, dim, mn), got)


X = np.ones((2, 3), np.float32)


@pytest.mark.parametrize("args,code,text", [
    ((None, 2.0, 0, 1.0, X), NULLPTR, ""),
    ((X.astype(np.float64), 2.0, 0, 1.0, X.astype(np.float64)), INVALID, "DOUBLE"),
    ((X, 2.0, 0, 1.0, X.astype(np.float16)), INVALID, "FLOAT16"),
    ((X[0, 0].reshape(()), 2.0, 0, 1.0, X[0, 0].reshape(())), INVALID, "must have at least 1 dimensions"),
    ((X, 2.0, 0, 1.0, X[:, :2]), INVALID, "Expected tensor for self to have same size as tensor for out"),
    ((X, -1.0, 0, 1.0, X), INVALID, "p only support non-negative values, but now p is [-1.000000]."),
    ((X, 2.0, 2, 1.0, X), INVALID, "dim range only support [-dimNum, dimNum - 1], but now dim is [2]."),
    ((X, 2.0, 0, -1.0, X), INVALID, "maxNorm should be greater than 0, but now maxNorm is [-1.000000]."),
])
def test_renorm_validation(args, code, text):
    got, msg = error_of(ops.Renorm, *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = ["float32", "float16", "bfloat16", "float64", "int32"]
    calls = [("Renorm", [["t", d, [2, 3]], 2.0, 0, 1.0, ["t", d, [2, 3]]]) for d in cands]
    return calls, [0, 0, 0, INVALID, INVALID]


_BODY = """
torch.manual_seed(0)
x = torch.randn(3, 4, 5)
xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
yc, yn = torch.renorm(xc, 2, 1, 1.0), torch.renorm(xn, 2, 1, 1.0)
yc.sum().backward()
yn.sum().backward()
OUT["renorm"] = {"cpu": [enc(to_np(yc)), enc(to_np(xc.grad))], "npu": [enc(to_np(yn)), enc(to_np(xn.grad))]}
"""


def test_torch_npu_renorm_matches_cpu():
    r = torch_npu_run(_BODY, {})["renorm"]
    for c, n in zip(r["cpu"], r["npu"]):
        np.testing.assert_allclose(f64(dec(n)), f64(dec(c)), rtol=1e-5, atol=1e-6)
