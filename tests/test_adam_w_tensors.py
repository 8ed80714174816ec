"""aclnnApplyAdamW (native_stubs/src/ops/optim/adam_w_tensors.toml) against a NumPy fp32 reference of the vendor's
arch35 DAG (bit-exact for FLOAT, the dtype's RINT of it for FLOAT16 / BF16) and torch's AdamW arithmetic (within
fp32 rounding): maximize, amsgrad, strided views, empty varRef, the dtype list (950 and the A2 child), validation
codes and messages; torch_npu.npu_apply_adam_w on the emulator (one call in the shared child)."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, error_of, status_codes, torch_npu_run  # noqa: F401
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

F32 = np.float32
RNG = np.random.default_rng(5150)
HP = dict(b1p=0.9 ** 3, b2p=0.999 ** 3, lr=0.01, wd=0.05, b1=0.9, b2=0.999, eps=1e-8)


def ref(var, m, v, g, mx, hp, amsgrad, maximize):
    """The DAG's fp32 steps (operands widened from their dtype)."""
    f = lambda a: np.asarray(a, np.float64).astype(F32)   # noqa: E731
    var, m, v, g = f(var), f(m), f(v), f(g)
    b1p, b2p, lr, wd, b1, b2, eps = (F32(hp[k]) for k in ("b1p", "b2p", "lr", "wd", "b1", "b2", "eps"))
    gt = g * F32(-1 if maximize else 1)
    mo = m * b1 - (b1 + F32(-1)) * gt
    vo = b2 * v - ((b2 + F32(-1)) * gt) * gt
    u = np.maximum(vo, f(mx)) if amsgrad else vo
    decay = (wd * lr) * F32(-1) + F32(1)
    denom = np.sqrt((u * F32(-1)) / (b2p * b2 + F32(-1))) + eps
    return var * decay + ((lr / (b1p * b1 + F32(-1))) * mo) / denom, mo, vo


def run(name, amsgrad=False, maximize=False, shape=(3, 5), view=False):
    var, m, g = (R.cast(RNG.standard_normal(shape), name) for _ in range(3))
    v = R.cast(RNG.uniform(0, 1, shape), name)
    mx = R.cast(RNG.uniform(0, 1, shape), name) if amsgrad else None
    hp = {k: R.cast(np.array([x]), name) for k, x in HP.items()}
    got = ops.ApplyAdamW(strided(var) if view else var.copy(), m.copy(), v.copy(), hp["b1p"], hp["b2p"], hp["lr"],
                         hp["wd"], hp["b1"], hp["b2"], hp["eps"], g, mx, amsgrad, maximize)
    got = [a.numpy() if hasattr(a, "numpy") else a for a in got]
    want = ref(var, m, v, g, mx, {k: np.asarray(x, np.float64)[0] for k, x in hp.items()}, amsgrad, maximize)
    return got, [R.cast(w, name) for w in want], (var, m, v, g)


@pytest.mark.parametrize("name,amsgrad,maximize,view", [("float32", False, False, True), ("float32", True, True, False),
                                                        ("float16", False, True, False), ("bfloat16", True, False, True)])
def test_apply_adam_w_is_the_dags_fp32_steps(name, amsgrad, maximize, view):
    got, want, _ = run(name, amsgrad, maximize, view=view)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g, np.float64), np.asarray(w, np.float64))


def test_matches_torch_adamw_arithmetic():
    got, _, (var, m, v, g) = run("float32")
    var, m, v, g = (a.astype(np.float64) for a in (var, m, v, g))
    b1, b2, lr, wd, eps = HP["b1"], HP["b2"], HP["lr"], HP["wd"], HP["eps"]
    m2, v2 = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
    t1, t2 = 1 - HP["b1p"] * b1, 1 - HP["b2p"] * b2
    want = var * (1 - lr * wd) - lr / t1 * m2 / (np.sqrt(v2 / t2) + eps)
    assert np.abs(got[0] - want).max() <= 1e-5 and np.abs(got[1] - m2).max() <= 1e-6


def test_empty_var():
    e = np.zeros((0, 2), F32)
    one = np.ones(1, F32)
    r = ops.ApplyAdamW(e, e, e, one, one, one, one, one, one, one, e, None, False, False)
    assert r[0].shape == (0, 2)


X = np.ones((2, 2), F32)
O = np.ones(1, F32)


def call(var=X, grad=X, lr=O, mx=None, amsgrad=False, b1=O):
    return lambda: ops.ApplyAdamW(var.copy(), X.copy(), X.copy(), O, O, lr, O, b1, O, O, grad, mx, amsgrad, False)


@pytest.mark.parametrize("fn,code,text", [
    (call(lr=None), NULLPTR, "lr is NULL"),
    (call(amsgrad=True), NULLPTR, "maxGradNormOptional is NULL"),
    (call(var=X.astype(np.float64)), INVALID, "Tensor varRef not implemented for DOUBLE"),
    (call(grad=X.astype(np.float16)), INVALID, "Expected both tensors to have same dtype, but found varRef FLOAT and "
     "grad FLOAT16."),
    (call(grad=np.ones((2, 3), F32)), INVALID, "Expected tensor for grad to have same size as tensor for varRef"),
    (call(b1=np.ones(2, F32)), INVALID, "beta1 must hold one element"),
])
def test_validation(fn, code, text):
    got, msg = error_of(fn)
    assert got == code and text in msg, msg


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_list(soc):
    cands = ["float32", "float16", "bfloat16", "float64", "int32"]
    calls = [("ApplyAdamW", [["t", d, [2]]] * 3 + [["t", d, [1]]] * 7 + [["t", d, [2]], ["n"], False, False])
             for d in cands]
    assert status_codes(calls, soc) == [0, 0, 0, INVALID, INVALID]


_BODY = """
torch.manual_seed(3)
var, m, v, g = (torch.randn(4, 3) for _ in range(4))
v = v.abs()
args = (0.9 ** 2, 0.999 ** 2, 0.01, 0.05, 0.9, 0.999, 1e-8)
out = torch_npu.npu_apply_adam_w(*args, g.npu(), None, False, False, out=(var.npu(), m.npu(), v.npu()))
m2, v2 = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
want = var * (1 - 0.01 * 0.05) - 0.01 / (1 - 0.9 ** 3) * m2 / ((v2 / (1 - 0.999 ** 3)).sqrt() + 1e-8)
OUT["adamw"] = float((out[0].cpu() - want).abs().max())
"""


def test_torch_npu_apply_adam_w():
    assert torch_npu_run(_BODY, {})["adamw"] <= 1e-5
