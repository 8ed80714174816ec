"""aclnnNLLLoss and aclnnNLLLossBackward (hicann/ops-nn loss/nll_loss, loss/nll_loss_grad) against torch
CPU's nll_loss computed in float64 on the same (rounded) inputs: every self dtype, every target dtype,
the three reductions, ignoreIndex, 1-D self, strided views; the tolerance of pyaclnn/ops/_fidelity.py
(fp32 sums: within 1e-6 of the float64 value relative to the sum of |terms|; fp16/bf16: 1 ulp of the
float64 value rounded to the dtype); the vendor's validation codes and messages."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(1516)
SELF_DTYPES = ["float32", "float16", "bfloat16"]
IGNORE = -100


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


def _inputs(name, n=37, c=11, target_dtype="int64"):
    x = R.cast(RNG.standard_normal((n, c)) * 3, name)
    w = R.cast(RNG.uniform(0.2, 2.0, c), name)
    t = RNG.integers(0, c, n)
    t[::7] = IGNORE if target_dtype != "uint8" else t[::7]
    return x, t.astype(R.np_dtype(target_dtype)), w


def _t64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def _close(got, want, name, scale):
    got = np.asarray(got, dtype=np.float64) if name != "bfloat16" else np.asarray(got).astype(np.float64)
    if name == "float32":
        assert np.all(np.abs(got - want) <= 1e-6 * np.maximum(scale, 1e-30)), (got, want)
    else:
        assert R.ulp_distance(R.cast(got, name), R.cast(want, name), name).max() <= 1


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", SELF_DTYPES)
def test_forward_matches_torch(name, reduction):
    x, t, w = _inputs(name)
    out_shape = (len(t),) if reduction == 0 else ()
    out, tw = ops.NLLLoss(x, t, w, reduction, IGNORE, zeros(out_shape, name), zeros((1,), name))
    want = F.nll_loss(_t64(x.astype(np.float64)), torch.from_numpy(t.astype(np.int64)), _t64(w.astype(np.float64)),
                      reduction=["none", "mean", "sum"][reduction], ignore_index=IGNORE).numpy()
    terms = np.where(t != IGNORE, w.astype(np.float64)[np.where(t != IGNORE, t, 0)], 0)
    scale = np.sum(np.abs(terms * x.astype(np.float64)[np.arange(len(t)), np.where(t != IGNORE, t, 0)]))
    _close(out, want, name, scale if reduction else np.abs(want))
    if reduction:
        _close(tw.reshape(()), terms.sum(), name, terms.sum())


@pytest.mark.parametrize("target_dtype", ["int64", "int32", "uint8"])
def test_every_target_dtype(target_dtype):
    x, t, w = _inputs("float32", target_dtype=target_dtype)
    out, _ = ops.NLLLoss(x, t, w, 2, IGNORE, zeros((), "float32"), zeros((1,), "float32"))
    want = F.nll_loss(_t64(x), torch.from_numpy(t.astype(np.int64)), _t64(w), reduction="sum",
                      ignore_index=IGNORE).item()
    assert abs(float(out) - want) <= 1e-6 * np.abs(x).sum() * 2


def test_one_d_self_and_strided_views():
    x, t, w = _inputs("float32", n=6, c=5)
    got, _ = ops.NLLLoss(strided(x, transpose=True), strided(t), strided(w), 1, IGNORE, zeros((), "float32"),
                         zeros((1,), "float32"))
    want = F.nll_loss(_t64(x), torch.from_numpy(t.astype(np.int64)), _t64(w), ignore_index=IGNORE).item()
    assert abs(float(got) - want) <= 1e-6 * abs(want)
    one, tw = ops.NLLLoss(x[0], np.int64(3).reshape(()), w, 0, IGNORE, zeros((), "float32"), zeros((1,), "float32"))
    assert float(one) == float(-(w[3] * x[0, 3]))


def test_empty_batch_gives_nan_mean_and_zero_sum():
    x, t, w = zeros((0, 4), "float32"), np.zeros(0, np.int64), np.ones(4, np.float32)
    mean, tw = ops.NLLLoss(x, t, w, 1, IGNORE, zeros((), "float32"), np.full(1, 7, np.float32))
    assert np.isnan(mean) and tw.tolist() == [0.0]
    total, _ = ops.NLLLoss(x, t, w, 2, IGNORE, zeros((), "float32"), zeros((1,), "float32"))
    assert float(total) == 0.0


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", SELF_DTYPES)
def test_backward_matches_torch(name, reduction):
    x, t, w = _inputs(name, n=9, c=6)
    xt = _t64(x.astype(np.float64)).requires_grad_(True)
    loss = F.nll_loss(xt, torch.from_numpy(t.astype(np.int64)), _t64(w.astype(np.float64)),
                      reduction=["none", "mean", "sum"][reduction], ignore_index=IGNORE)
    g = R.cast(RNG.uniform(0.5, 2.0, loss.shape), name)
    loss.backward(_t64(g.astype(np.float64)))
    total = R.cast(np.sum(np.where(t != IGNORE, w.astype(np.float64)[np.where(t != IGNORE, t, 0)], 0)), name)
    got = ops.NLLLossBackward(g, x, t, w, reduction, IGNORE, np.asarray(total).reshape(1), zeros(x.shape, name))
    want = xt.grad.numpy()
    if reduction == 1:   # the kernel divides by the totalWeight it is given (rounded to the dtype)
        want = want * (np.sum(np.where(t != IGNORE, w.astype(np.float64)[np.where(t != IGNORE, t, 0)], 0))
                       / total.astype(np.float64))
    _close(got, want, name, np.abs(want) + 1e-30)
    assert np.all(np.asarray(got, np.float64)[want == 0] == 0)


def test_target_out_of_range_is_a_device_fault():
    with pytest.raises(AclError) as e:
        ops.NLLLoss(np.zeros((2, 3), np.float32), np.int64([0, 3]), np.ones(3, np.float32), 1, IGNORE,
                    zeros((), "float32"), zeros((1,), "float32"))
    assert "target 3 is out of bounds [0, 3)" in str(e.value)


F32 = np.zeros((2, 3), np.float32)
T = np.int64([0, 1])
W = np.ones(3, np.float32)


@pytest.mark.parametrize("call,text", [
    (lambda: ops.NLLLoss(F32, T, np.ones(3, np.float16), 1, IGNORE, zeros((), "float32"), zeros(1, "float32")),
     "weight dtype FLOAT16 should be the same as self dtype FLOAT"),
    (lambda: ops.NLLLoss(F32, T, W, 1, IGNORE, zeros((), "int32"), zeros(1, "float32")), "can't be cast"),
    (lambda: ops.NLLLoss(F32.astype(np.float64), T, W.astype(np.float64), 1, IGNORE, zeros((), "float64"),
                         zeros(1, "float64")), "self dtype DOUBLE is not supported"),
    (lambda: ops.NLLLoss(F32, T.astype(np.int16), W, 1, IGNORE, zeros((), "float32"), zeros(1, "float32")),
     "target dtype INT16 is not supported"),
    (lambda: ops.NLLLoss(F32, T, W, 3, IGNORE, zeros((), "float32"), zeros(1, "float32")),
     "Reduction should be between 0 and 2, but current is 3."),
    (lambda: ops.NLLLoss(np.zeros((2, 3, 1), np.float32), T, W, 1, IGNORE, zeros((), "float32"), zeros(1, "float32")),
     "Input tensor should be 1D or 2D."),
    (lambda: ops.NLLLoss(F32, np.int64([0, 1, 2]), W, 1, IGNORE, zeros((), "float32"), zeros(1, "float32")),
     "but (got self: [2, 3], target: [3])"),
    (lambda: ops.NLLLoss(F32, T, np.ones(4, np.float32), 1, IGNORE, zeros((), "float32"), zeros(1, "float32")),
     "Weight tensor should be defined for all 3 classes"),
    (lambda: ops.NLLLoss(F32, T, W, 0, IGNORE, zeros((3,), "float32"), zeros(1, "float32")),
     "Expect out shape [2], but got: [3]."),
    (lambda: ops.NLLLoss(F32, T, W, 1, IGNORE, zeros((2,), "float32"), zeros(1, "float32")),
     "Expected a single element out tensor"),
    (lambda: ops.NLLLoss(F32, T, W, 1, IGNORE, zeros((), "float32"), zeros(2, "float32")),
     "Shape of totalWeightOut tensor should be [1]"),
    (lambda: ops.NLLLossBackward(np.float16([1]), F32, T, W, 1, IGNORE, np.ones(1, np.float32), zeros((2, 3), "float32")),
     "gradOutput dtype FLOAT16 should be the same as self dtype FLOAT"),
    (lambda: ops.NLLLossBackward(np.float32([1]), F32, T, W, 0, IGNORE, np.ones(1, np.float32), zeros((2, 3), "float32")),
     "Expect gradOutput shape [2], but got: [1]."),
    (lambda: ops.NLLLossBackward(np.float32([1]), F32, T, W, 1, IGNORE, np.ones(2, np.float32), zeros((2, 3), "float32")),
     "Expected totalWeight to be a single element tensor"),
    (lambda: ops.NLLLossBackward(np.float32([1]), F32, T, W, 1, IGNORE, np.ones(1, np.float32), zeros((3, 2), "float32")),
     "Shape of out should be [2, 3]"),
])
def test_invalid_arguments_return_161002(call, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == INVALID and text in str(e.value), str(e.value)


@pytest.mark.parametrize("func,n", [("aclnnNLLLossGetWorkspaceSize", 7), ("aclnnNLLLossBackwardGetWorkspaceSize", 8)])
def test_null_arguments_return_161001(func, n):
    assert raw_null_status(func, n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")
