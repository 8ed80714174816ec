"""Pointwise losses (native_stubs/src/ops/loss/pointwise_loss.toml): aclnnMseLoss, aclnnMseLossBackward,
aclnnSmoothL1Loss, aclnnSmoothL1LossBackward (hicann/ops-nn loss/mse_loss, mse_loss_grad_v2, smooth_l1_loss_v2,
smooth_l1_loss_grad_v2). Data-driven: an operator family is a row of LOSSES
(its float64 element loss, its float32 model of the vendor's backward steps, the torch function).
Forward against float64 (fp32: within 2e-6 of the sum of |terms|; fp16/bf16: 1 ulp of the float64 value
rounded to the dtype); backward bit-exact against the float32 model, and near torch CPU; every dtype of
the vendor's list (950 in-process, A2 in one subprocess), broadcasting, strided views, empty tensors, the
vendor's validation codes and messages; one torch_npu child for the torch calls."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided
import helpers

RNG = np.random.default_rng(2028)
DTYPES = ["float32", "float16", "bfloat16"]
REDUCTIONS = ["none", "mean", "sum"]


def _mse(x, t):
    return (x - t) ** 2


def _mse_grad32(x, t, g, reduction, n_self):
    coef = np.float32(2.0 / n_self) if reduction == 1 else np.float32(2.0)
    return ((x - t) * coef) * g


BETA = 0.7


def _sl1(x, t, beta=BETA):
    a = np.abs(x - t)
    return np.where(a < beta, 0.5 * (x - t) ** 2 / max(beta, 1e-300), a - 0.5 * beta)


def _sl1_grad32(x, t, g, reduction, n_self, beta=BETA):
    b = np.float32(beta)
    inv = np.float32(np.nan) if abs(b) < np.float32(1e-6) else np.float32(1) / b
    d = x - t
    sel = np.where(d > b, np.float32(1), np.float32(0)) + np.where(d < -b, np.float32(-1), np.float32(0))
    with np.errstate(invalid="ignore"):
        v = ((sel + np.where(np.abs(d) > b, np.float32(0), d * inv)) * g)
    return v * (np.float32(1.0 / n_self) if reduction == 1 else np.float32(1))


LOSSES = {  # name: forward, backward, extra attributes, float64 loss, float32 backward model, torch function
    "mse": dict(fwd="MseLoss", bwd="MseLossBackward", attrs=(), loss=_mse, grad32=_mse_grad32, torch="mse_loss",
                kw={}),
    "sl1": dict(fwd="SmoothL1Loss", bwd="SmoothL1LossBackward", attrs=(BETA,), loss=_sl1, grad32=_sl1_grad32,
                torch="smooth_l1_loss", kw={"beta": BETA}),
}


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


def _f64(a):
    return np.asarray(a).astype(np.float64)


def _reduce(l, reduction):
    return l if reduction == 0 else (l.mean() if reduction == 1 else l.sum())


def _check_close(got, want, name, scale):
    if name == "float32":
        assert np.all(np.abs(_f64(got) - want) <= 2e-6 * np.maximum(scale, 1e-30)), (got, want)
    else:
        assert R.ulp_distance(R.cast(_f64(got), name), R.cast(want, name), name).max() <= 1


def _call(loss, x, t, reduction, out):
    return getattr(ops, LOSSES[loss]["fwd"])(x, t, reduction, *LOSSES[loss]["attrs"], out)


def _bwd(loss, g, x, t, reduction, out):
    return getattr(ops, LOSSES[loss]["bwd"])(g, x, t, reduction, *LOSSES[loss]["attrs"], out)


CASES = [  # (self shape, target shape)
    ((5, 7), (5, 7)), ((4, 1, 6), (3, 1)), ((), ()), ((33,), (1,)),
]


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", DTYPES)
def test_forward_matches_float64(loss, name, reduction):
    for xs, ts in CASES[:3] if name != "float32" else CASES:
        x, t = R.cast(RNG.standard_normal(xs) * 2, name), R.cast(RNG.standard_normal(ts) * 2, name)
        shape = np.broadcast_shapes(xs, ts)
        l = LOSSES[loss]["loss"](_f64(x), _f64(t))
        got = _call(loss, x, t, reduction, zeros(shape if reduction == 0 else (), name))
        _check_close(got, _reduce(l, reduction), name, np.abs(l) if reduction == 0 else np.abs(l).sum())


@pytest.mark.parametrize("loss", list(LOSSES))
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", DTYPES)
def test_backward_is_the_vendor_steps_in_fp32(loss, name, reduction):
    torch = pytest.importorskip("torch")
    for xs, ts in [((4, 1, 6), (3, 1)), ((3, 6), (6,)), ((1, 6), (3, 6))]:   # self broadcast: mean counts self
        shape = np.broadcast_shapes(xs, ts)
        x, t = R.cast(RNG.standard_normal(xs), name), R.cast(RNG.standard_normal(ts), name)
        g = R.cast(RNG.uniform(0.5, 2.0, shape if reduction == 0 else ()), name)
        got = _bwd(loss, g, x, t, reduction, zeros(shape, name))
        f32 = lambda a: np.broadcast_to(np.asarray(a).astype(np.float32), shape)
        want = R.cast(LOSSES[loss]["grad32"](f32(x), f32(t), f32(g), reduction, x.size), name)
        assert np.array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8)), (got, want)
        if reduction != 0 and x.shape == shape:   # torch's gradient (same element count): near it
            xt = torch.from_numpy(_f64(x)).requires_grad_(True)
            getattr(torch.nn.functional, LOSSES[loss]["torch"])(xt, torch.from_numpy(_f64(t)).expand(shape),
                                                                reduction=REDUCTIONS[reduction],
                                                                **LOSSES[loss]["kw"]).backward(
                torch.tensor(float(_f64(g))))
            assert np.allclose(_f64(got), xt.grad.numpy(), rtol=1e-2 if name != "float32" else 1e-6, atol=1e-6)


@pytest.mark.parametrize("loss", list(LOSSES))
def test_strided_views_mixed_dtypes_and_empty(loss):
    x, t = R.cast(RNG.standard_normal((6, 5)), "float32"), R.cast(RNG.standard_normal((6, 5)), "float16")
    l = LOSSES[loss]["loss"](_f64(x), _f64(t))
    got = _call(loss, strided(x, transpose=True), strided(t), 2, zeros((), "float32"))
    _check_close(got, l.sum(), "float32", np.abs(l).sum())
    x16 = x.astype(np.float16)
    half = _call(loss, x16, t, 0, zeros((6, 5), "float32"))   # the fp16 result widened
    assert np.array_equal(half, R.cast(LOSSES[loss]["loss"](_f64(x16), _f64(t)), "float16").astype(np.float32))
    g = _bwd(loss, strided(np.ones((6, 5), np.float32)), strided(x), strided(x, transpose=True), 0,
             zeros((6, 5), "float32"))
    assert np.array_equal(g, LOSSES[loss]["grad32"](x, x, np.float32(1), 0, 30))
    e = zeros((0, 3), "float32")
    assert np.isnan(_call(loss, e, e, 1, np.full((), 7, np.float32)))
    assert float(_call(loss, e, e, 2, np.full((), 7, np.float32))) == 0.0
    assert _call(loss, e, e, 0, zeros((0, 3), "float32")).shape == (0, 3)
    assert _bwd(loss, e, e, e, 1, zeros((0, 3), "float32")).shape == (0, 3)


def test_smooth_l1_beta_zero_and_any_result_shape():
    x, t = np.float32([[0.25, -3.0, 1.0]]), np.float32([0.25, 0.5, 0.0])
    assert np.array_equal(ops.SmoothL1Loss(x, t, 0, 0.0, zeros((1, 3), "float32")), np.abs(x - t))   # L1
    g = ops.SmoothL1LossBackward(np.ones((1, 3), np.float32), x, t, 0, 0.0, zeros((1, 3), "float32"))
    assert np.isnan(g[0, 0]) and g[0, 1:].tolist() == [-1.0, 1.0]   # 1/beta is NaN in the grad tiling
    total = ops.SmoothL1Loss(x, t, 2, 0.0, zeros((2,), "float32"))   # reduction != 0: result's shape unchecked
    assert total.tolist() == [4.5, 4.5]


F32, F16 = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.float16)
SCALAR = zeros((), "float32")
INVALID_CALLS = [  # (operator, arguments, message)
    ("MseLoss", (F32.astype(np.float64), F32, 1, SCALAR),
     "Expected self dtype [DOUBLE] and target dtype [FLOAT] to be promotable but check failed."),
    ("MseLoss", (F32, F32.astype(np.int32), 1, SCALAR), "target dtype INT32 is not supported"),
    ("MseLoss", (F32, F32, 1, zeros((), "int32")), "out dtype INT32 is not supported"),
    ("MseLoss", (F32, F32, 3, SCALAR), "Expected reduction to be between 0 and 2, but got 3."),
    ("MseLoss", (F32, F32, -1, SCALAR), "Expected reduction to be between 0 and 2, but got -1."),
    ("MseLoss", (np.zeros((1,) * 9, np.float32), np.zeros(1, np.float32), 1, SCALAR), "self"),
    ("MseLoss", (F32, np.zeros((3, 3), np.float32), 1, SCALAR), "can not broadcast"),
    ("MseLoss", (F32, F32, 0, zeros((3, 2), "float32")),
     "Expected tensor for out to have same size as [2, 3], but got [3, 2]."),
    ("MseLoss", (F32, F32, 1, zeros((1,), "float32")), "Expected a 0-dimensional tensor, but Shape of out is [1]."),
    ("MseLossBackward", (F16, F32, F32, 1, F32), "gradOutput dtype FLOAT16 should be the same as self dtype FLOAT"),
    ("MseLossBackward", (F32, F32, F16, 1, F32), "target dtype FLOAT16 should be the same as self dtype FLOAT"),
    ("MseLossBackward", (F32.astype(np.float64),) * 3 + (1, F32), "self dtype DOUBLE is not supported"),
    ("MseLossBackward", (F32.astype(np.int32),) * 3 + (1, F32), "self dtype INT32 is not supported"),
    ("MseLossBackward", (F32, F32, F32, 1, F32.astype(np.int32)), "out dtype INT32 is not supported"),
    ("MseLossBackward", (F32, F32, F32, 5, F32), "Expected reduction to be between 0 and 2, but got 5."),
    ("MseLossBackward", (F32, F32, np.zeros((4, 3), np.float32), 0, F32), "can not broadcast"),
    ("MseLossBackward", (np.zeros(2, np.float32), F32, F32, 0, F32), "can not broadcast"),
    ("MseLossBackward", (F32, F32, F32, 0, np.zeros(6, np.float32)), "Expected tensor for out to have same size"),
    ("SmoothL1Loss", (F32.astype(np.float64), F32, 1, 1.0, SCALAR), "self dtype DOUBLE is not supported"),
    ("SmoothL1Loss", (F32, F32.astype(np.int64), 1, 1.0, SCALAR), "target dtype INT64 is not supported"),
    ("SmoothL1Loss", (F32, F16, 1, 1.0, zeros((), "int32")),
     "Result type FLOAT can't be cast to the desired output type INT32."),
    ("SmoothL1Loss", (F32, F32, 3, 1.0, SCALAR), "Reduction should be between 0 and 2, but current is 3."),
    ("SmoothL1Loss", (np.zeros((1,) * 9, np.float32), F32, 1, 1.0, SCALAR), "self"),
    ("SmoothL1Loss", (F32, np.zeros((3, 3), np.float32), 1, 1.0, SCALAR), "can not broadcast"),
    ("SmoothL1Loss", (F32, F32, 0, 1.0, zeros((3, 2), "float32")),
     "Shape of result should be [2, 3], but current is [3, 2]."),
    ("SmoothL1Loss", (F32, F32, 0, -0.5, F32), "beta should be greater than or equal to 0"),
    ("SmoothL1LossBackward", (F32, F32, F32.astype(np.float64), 1, 1.0, F32), "target dtype DOUBLE is not supported"),
    ("SmoothL1LossBackward", (F32, F32, F32, 1, 1.0, F32.astype(np.int32)), "gradInput dtype INT32 is not supported"),
    ("SmoothL1LossBackward", (np.zeros((1,) * 9, np.float32), F32, F32, 1, 1.0, F32),
     "expected tensor must have at most 8 dimensions, but got 9."),
    ("SmoothL1LossBackward", (F32, F32, F32, -1, 1.0, F32), "Reduction should be between 0 and 2, but got -1"),
    ("SmoothL1LossBackward", (F32, F32, F32, 1, float("nan"), F32), "beta should be greater than or equal to 0"),
    ("SmoothL1LossBackward", (np.zeros(2, np.float32), F32, F32, 0, 1.0, F32), "Broadcast [2] and [2, 3] failed."),
    ("SmoothL1LossBackward", (F32, F32, np.zeros(4, np.float32), 0, 1.0, F32), "Broadcast [2, 3] and [4] failed."),
    ("SmoothL1LossBackward", (F32, F16, F32, 0, 1.0, np.zeros((1, 3), np.float32)),
     "Exepected tensor for result to have same size as tensor for gradInput, but [2, 3] does not equal [1, 3]."),
]


@pytest.mark.parametrize("op,args,text", INVALID_CALLS)
def test_invalid_arguments_return_161002(op, args, text):
    with pytest.raises(AclError) as e:
        getattr(ops, op)(*args)
    assert e.value.code == INVALID and text in str(e.value), str(e.value)


@pytest.mark.parametrize("func,n", [("aclnnMseLossGetWorkspaceSize", 6), ("aclnnMseLossBackwardGetWorkspaceSize", 7),
                                    ("aclnnSmoothL1LossGetWorkspaceSize", 7),
                                    ("aclnnSmoothL1LossBackwardGetWorkspaceSize", 8)])
def test_null_arguments_return_161001(func, n):
    assert raw_null_status(func, n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


A2_BODY = """
import numpy as np
from pyaclnn import ops
from pyaclnn.errors import AclError
import ml_dtypes
res = {}
for name, dt in [("float32", np.float32), ("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)]:
    x = np.linspace(-2, 2, 6).reshape(2, 3).astype(dt); t = np.ones(3, dt)
    res[name] = float(ops.MseLoss(x, t, 2, np.zeros((), dt)))
    ops.MseLossBackward(np.ones((), dt), x, t, 1, np.zeros((2, 3), dt))
    res["sl1 " + name] = float(ops.SmoothL1Loss(x, t, 2, 1.0, np.zeros((), dt)))
    ops.SmoothL1LossBackward(np.ones((), dt), x, t, 1, 1.0, np.zeros((2, 3), dt))
try:
    ops.MseLoss(np.zeros(2), np.zeros(2), 1, np.zeros(()))
except AclError as e:
    res["double"] = e.code
print(res)
"""


def test_a2_dtype_lists():
    rc, out, err = helpers.run_python(A2_BODY, {"PYACLNN_STUB_SOC": "Ascend910B4"})
    assert rc == 0, err
    res = eval(out.strip().splitlines()[-1])
    want = float(np.sum((np.linspace(-2, 2, 6).reshape(2, 3) - 1) ** 2))
    assert abs(res["float32"] - want) < 1e-5 and abs(res["bfloat16"] - want) < 0.1 and res["double"] == INVALID
    sl1 = float(np.sum(_sl1(np.linspace(-2, 2, 6).reshape(2, 3), 1.0, 1.0)))
    assert abs(res["sl1 float32"] - sl1) < 1e-5 and abs(res["sl1 bfloat16"] - sl1) < 0.1


TORCH_BODY = """
import torch.nn.functional as F
for fn, kw in SPEC["fns"]:
    for red in ["none", "mean", "sum"]:
        for dt in [torch.float32, torch.float16]:
            x = torch.randn(4, 5).to(dt); t = torch.randn(5).to(dt)
            xn = x.npu().requires_grad_(True); xc = x.float().clone().requires_grad_(True)
            ln = getattr(F, fn)(xn, t.npu(), reduction=red, **kw)
            lc = getattr(F, fn)(xc, t.float(), reduction=red, **kw)
            (ln.float().sum() if red == "none" else ln).backward()
            (lc.sum() if red == "none" else lc).backward()
            OUT[f"{fn} {red} {dt}"] = [float((ln.float().cpu() - lc).abs().max()),
                                       float((xn.grad.float().cpu() - xc.grad).abs().max())]
"""


def test_torch_npu_reaches_the_operators():
    from _math_ops import torch_npu_run
    out = torch_npu_run(TORCH_BODY, {"fns": [(v["torch"], v["kw"]) for v in LOSSES.values()]})
    for key, (fwd, bwd) in out.items():
        tol = 1e-5 if "float32" in key else 2e-2
        assert fwd <= tol * 20 and bwd <= tol, (key, fwd, bwd)
