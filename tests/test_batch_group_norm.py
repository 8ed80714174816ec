"""aclnnBatchNorm, aclnnBatchNormBackward (native_stubs/src/ops/norm/batch_norm.toml) and aclnnGroupNorm,
aclnnGroupNormBackward (group_norm.toml) against float64 NumPy references written from the formulas (checked
against torch CPU too): training and inference, the running-statistics update, absent weight / bias / running
statistics, 2-D to 5-D inputs, every outputMask, every dtype of the vendor's lists per SoC, strided views, empty
inputs, the validation codes and messages; torch_npu's BatchNorm / GroupNorm layers (forward, backward, running
statistics) and a small conv-bn-relu-pool block on the emulator against torch CPU.

Class (c): float64 arithmetic, each result rounded once to fp32 then its dtype: within one ulp of the float64
reference rounded so. Adding a configuration adds a row."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, dec, enc, error_of, f64, status_codes, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(2829)
FLOATS = ["float32", "float16", "bfloat16"]


def close(got, want64, name):
    """Within one ulp of the float64 value rounded through fp32 to the dtype."""
    want = R.cast(f64(want64).astype(np.float32), name).astype(np.float64)
    got = f64(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all() and (np.abs(got - want)[~nan] <= ulp[~nan]).all(), np.abs(got - want).max()


# ---- references ---------------------------------------------------------------------------------------

def _axes(x):
    return (0,) + tuple(range(2, x.ndim))


def _ch(v, x):
    return f64(v).reshape((1, -1) + (1,) * (x.ndim - 2))


def bn_ref(x, w, b, rm, rv, training, momentum, eps):
    x = f64(x)
    c = x.shape[1]
    w = np.ones(c) if w is None else f64(w)
    b = np.zeros(c) if b is None else f64(b)
    if training:
        m = x.mean(axis=_axes(x))
        var = ((x - _ch(m, x)) ** 2).mean(axis=_axes(x))
        inv = 1 / np.sqrt(var + eps)
        n = x.size // c
        new_rm = None if rm is None else (1 - momentum) * f64(rm) + momentum * m
        new_rv = None if rv is None else (1 - momentum) * f64(rv) + momentum * var * n / (n - 1)
    else:
        m = np.zeros(c) if rm is None else f64(rm)
        inv = 1 / np.sqrt((np.ones(c) if rv is None else f64(rv)) + eps)
        new_rm = new_rv = None
    y = (x - _ch(m, x)) * _ch(inv, x) * _ch(w, x) + _ch(b, x)
    return y, m, inv, new_rm, new_rv


def bn_backward_ref(dy, x, w, mean, inv, training):
    dy, x = f64(dy), f64(x)
    w = np.ones(x.shape[1]) if w is None else f64(w)
    xhat = (x - _ch(mean, x)) * _ch(inv, x)
    dw, db = (dy * xhat).sum(axis=_axes(x)), dy.sum(axis=_axes(x))
    if training:
        n = x.size // x.shape[1]
        dx = _ch(w, x) * _ch(inv, x) * (dy - _ch(db, x) / n - xhat * _ch(dw, x) / n)
    else:
        dx = dy * _ch(w, x) * _ch(inv, x)
    return dx, dw, db


def gn_ref(x, g, w, b, eps):
    x = f64(x)
    n, c = x.shape[:2]
    xr = x.reshape(n, g, -1)
    m = xr.mean(axis=2)
    rstd = 1 / np.sqrt(((xr - m[..., None]) ** 2).mean(axis=2) + eps)
    y = ((xr - m[..., None]) * rstd[..., None]).reshape(x.shape)
    if w is not None:
        y = y * _ch(w, x)
    if b is not None:
        y = y + _ch(b, x)
    return y, m, rstd


def gn_backward_ref(dy, x, mean, rstd, g, w):
    dy, x = f64(dy), f64(x)
    n, c = x.shape[:2]
    w = np.ones(c) if w is None else f64(w)
    xhat = ((x.reshape(n, g, -1) - f64(mean).reshape(n, g, 1)) * f64(rstd).reshape(n, g, 1)).reshape(x.shape)
    gg = (dy * _ch(w, x)).reshape(n, g, -1)
    xh = xhat.reshape(n, g, -1)
    d = gg.shape[2]
    dx = f64(rstd).reshape(n, g, 1) * (gg - gg.sum(2, keepdims=True) / d - xh * (gg * xh).sum(2, keepdims=True) / d)
    return dx.reshape(x.shape), (dy * xhat).sum(axis=_axes(x)), dy.sum(axis=_axes(x))


# ---- batch norm -----------------------------------------------------------------------------------------

# name: input shape, training, weight/bias, running statistics
BN_CASES = {
    "4d-train": ((3, 4, 5, 2), True, True, True),
    "2d-train-bare": ((6, 3), True, False, False),
    "3d-eval": ((2, 5, 7), False, True, True),
    "5d-train": ((2, 3, 2, 3, 2), True, True, True),
    "4d-eval-bare": ((2, 3, 4, 4), False, False, False),
}


def bn_inputs(case, name):
    shape, training, affine, running = BN_CASES[case]
    c = shape[1]
    x = R.cast(RNG.standard_normal(shape) * 2 + 0.5, name)
    w = R.cast(RNG.uniform(0.5, 1.5, c), name) if affine else None
    b = R.cast(RNG.uniform(-1, 1, c), name) if affine else None
    rm = RNG.standard_normal(c).astype(np.float32) if running else None
    rv = RNG.uniform(0.5, 2, c).astype(np.float32) if running else None
    return x, w, b, rm, rv


def run_bn(x, w, b, rm, rv, training, name, momentum=0.1, eps=1e-5, stat="float32"):
    c = x.shape[1]
    r = ops.BatchNorm(x, w, b, rm, rv, training, momentum, eps, zeros(x.shape, name), zeros((c,), stat),
                      zeros((c,), stat))
    outs = [o for o in r if o is not None]
    return (outs[-5], outs[-4]) if rm is not None else (None, None), outs[-3], outs[-2], outs[-1]


@pytest.mark.parametrize("case,name", [(c, "float32") for c in BN_CASES] +
                         [(c, n) for c in ("4d-train", "3d-eval") for n in ("float16", "bfloat16")])
def test_batch_norm(case, name):
    x, w, b, rm, rv = bn_inputs(case, name)
    training = BN_CASES[case][1]
    y, m, inv, want_rm, want_rv = bn_ref(x, w, b, rm, rv, training, 0.1, 1e-5)
    (new_rm, new_rv), out, sm, si = run_bn(x, w, b, rm, rv, training, name)   # rm, rv updated in place
    close(out, y, name)
    if training:
        close(sm, m, "float32")
        close(si, inv, "float32")
    if training and rm is not None:
        close(new_rm, want_rm, "float32")
        close(new_rv, want_rv, "float32")


@pytest.mark.parametrize("case", ["4d-train", "3d-eval", "2d-train-bare", "5d-train"])
def test_batch_norm_backward(case):
    x, w, b, rm, rv = bn_inputs(case, "float32")
    training = BN_CASES[case][1]
    _, _, sm, si = run_bn(x, w, b, None if rm is None else rm.copy(), None if rv is None else rv.copy(), training,
                          "float32")
    if not training:
        sm, si = (np.zeros(x.shape[1], np.float32) if rm is None else rm), None
        rm = np.zeros(x.shape[1], np.float32) if rm is None else rm
        rv = np.ones(x.shape[1], np.float32) if rv is None else rv
    dy = RNG.standard_normal(x.shape).astype(np.float32)
    c = x.shape[1]
    got = ops.BatchNormBackward(dy, x, w, rm, rv, sm if training else None, si, training, 1e-5, [True, True, True],
                                zeros(x.shape, "float32"), zeros((c,), "float32"), zeros((c,), "float32"))
    mean, inv = (f64(sm), f64(si)) if training else (f64(rm), 1 / np.sqrt(f64(rv) + 1e-5))
    for g, want in zip(got, bn_backward_ref(dy, x, w, mean, inv, training)):
        close(g, want, "float32")


def test_batch_norm_matches_torch_and_masks():
    F = torch.nn.functional
    x, w, b, rm, rv = bn_inputs("4d-train", "float32")
    xt, wt, bt = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
    rmt, rvt = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    y = F.batch_norm(xt, rmt, rvt, wt, bt, training=True, momentum=0.1)
    (new_rm, new_rv), out, sm, si = run_bn(x, w, b, rm.copy(), rv.copy(), True, "float32")
    for g, want in ((out, y), (new_rm, rmt), (new_rv, rvt)):
        assert np.abs(g - want.detach().numpy()).max() <= 4e-6
    dy = torch.randn_like(y)
    y.backward(dy)
    c = x.shape[1]
    full = ops.BatchNormBackward(dy.numpy(), x, w, rm, rv, sm, si, True, 1e-5, [True, True, True],
                                 zeros(x.shape, "float32"), zeros((c,), "float32"), zeros((c,), "float32"))
    for g, want in zip(full, (xt.grad, wt.grad, bt.grad)):
        assert np.abs(g - want.numpy()).max() <= 1e-5
    only_dw = ops.BatchNormBackward(strided(dy.numpy()), strided(x), w, rm, rv, sm, si, True, 1e-5,
                                    [False, True, False], None, zeros((c,), "float32"), None)
    np.testing.assert_array_equal([o for o in only_dw if o is not None][0], full[1])


def test_batch_norm_empty_input_fills_statistics():
    x = np.zeros((0, 3, 4), np.float32)
    r = ops.BatchNorm(x, None, None, None, None, True, 0.1, 1e-5, np.zeros_like(x), np.full(3, 7, np.float32),
                      np.full(3, 7, np.float32))
    sm, si = [o for o in r if o is not None][-2:]
    assert (sm == 0).all() and np.isnan(si).all()
    # the vendor returns before its checks: an unsupported dtype passes too
    assert error_of(ops.BatchNorm, x.astype(np.float64), None, None, None, None, True, 0.1, 1e-5,
                    np.zeros((0, 3, 4)), np.zeros(3), np.zeros(3))[0] == 0
    assert error_of(ops.BatchNormBackward, x, x, None, None, None, None, None, True, 1e-5, [True, True, True],
                    np.zeros_like(x), None, None)[0] == 0


X4 = np.ones((2, 3, 4, 4), np.float32)
C3 = np.ones(3, np.float32)


def bn(x=X4, w=None, training=True, out=None, sm=C3, si=C3, rm=None):
    return ops.BatchNorm(x, w, None, rm, None, training, 0.1, 1e-5, np.zeros_like(x) if out is None else out, sm, si)


@pytest.mark.parametrize("kw,code,text", [
    (dict(sm=None), NULLPTR, "saveMean is NULL"),
    (dict(x=X4.astype(np.float64), out=X4.astype(np.float64)), INVALID,
     "Tensor input not implemented for DOUBLE, should be in dtype support list [FLOAT, FLOAT16, BFLOAT16]."),
    (dict(w=np.ones(3, np.int32)), INVALID, "Tensor weight not implemented for INT32"),
    (dict(x=np.ones((4,), np.float32), out=np.zeros(4, np.float32)), INVALID,
     "The input tensor must have at least 2 dimensions."),
    (dict(out=np.zeros((2, 3, 4, 3), np.float32)), INVALID, "Expected tensor for out to have same size as tensor for "
     "input, but [2, 3, 4, 3] does not equal [2, 3, 4, 4]."),
    (dict(w=np.ones(4, np.float32)), INVALID, "Dim of weight should be one and shape is channel num of input."),
    (dict(sm=np.ones(4, np.float32)), INVALID, "Expected tensor for saveMean to have same size as [3], but got [4]."),
])
def test_batch_norm_validation(kw, code, text):
    got, msg = error_of(lambda: bn(**kw))
    assert got == code and text in msg, msg


def bnb(dy=X4, mask=(True, True, True), gi=None, training=True, sm=C3, rm=C3, gw=C3):
    return ops.BatchNormBackward(dy, X4, None, rm, C3, sm, C3, training, 1e-5, list(mask),
                                 np.zeros_like(X4) if gi is None else gi, gw, np.zeros(3, np.float32))


@pytest.mark.parametrize("kw,code,text", [
    (dict(mask=(True, True, True), gi=None, dy=X4.astype(np.float16)), INVALID,
     "Expected both tensors to have same dtype, but found input FLOAT and gradOut FLOAT16."),
    (dict(dy=np.ones((2, 3, 4, 3), np.float32)), INVALID, "Expected tensor for gradOut to have same size as tensor "
     "for input"),
    (dict(rm=np.ones(4, np.float32)), INVALID, "Dim of runningMean should be one and shape is channel num of "
     "input[3], but got [[4]]."),
    (dict(gw=np.ones(2, np.float32)), INVALID, "Dim of gradWeight should be one"),
    (dict(sm=None), INVALID, "saveMean must be given with 3 elements (one per channel) in training"),
])
def test_batch_norm_backward_validation(kw, code, text):
    got, msg = error_of(lambda: bnb(**kw))
    assert got == code and text in msg, msg


def test_batch_norm_backward_mask_rules():
    f = ops.BatchNormBackward
    assert error_of(f, X4, X4, None, C3, C3, C3, C3, True, 1e-5, [True, False, False], None, None, None)[0] == NULLPTR
    code, msg = error_of(f, X4, X4, None, C3, C3, C3, C3, True, 1e-5, [True], np.zeros_like(X4), None, None)
    assert code == NULLPTR and "outputMask size should be 3, but got 1." in msg          # Ascend 950


# ---- group norm -----------------------------------------------------------------------------------------

# name: input shape, groups, gamma/beta
GN_CASES = {"4d": ((2, 6, 3, 4), 3, True), "3d-one-group": ((3, 4, 5), 1, True), "2d-bare": ((4, 6), 6, False),
            "5d": ((1, 4, 2, 3, 2), 2, True)}


def gn_inputs(case, name):
    shape, g, affine = GN_CASES[case]
    x = R.cast(RNG.standard_normal(shape) * 3 - 1, name)
    w = R.cast(RNG.uniform(0.5, 1.5, shape[1]), name) if affine else None
    b = R.cast(RNG.uniform(-1, 1, shape[1]), name) if affine else None
    return x, w, b, g


def run_gn(x, w, b, g, name, eps=1e-5):
    n, c = x.shape[:2]
    hw = int(np.prod(x.shape[2:]))
    return ops.GroupNorm(x, w, b, n, c, hw, g, eps, zeros(x.shape, name), zeros((n, g), name), zeros((n, g), name))


@pytest.mark.parametrize("case,name", [(c, "float32") for c in GN_CASES] + [("4d", "float16"), ("4d", "bfloat16")])
def test_group_norm(case, name):
    x, w, b, g = gn_inputs(case, name)
    out, m, r = run_gn(x, w, b, g, name)
    y, mw, rw = gn_ref(x, g, w, b, 1e-5)
    close(out, y, name)
    close(m, mw, name)
    close(r, rw, name)
    n, c = x.shape[:2]
    dy = R.cast(RNG.standard_normal(x.shape), name)
    got = ops.GroupNormBackward(dy, x, m, r, w, n, c, x.size // (n * c), g, [True, True, True], zeros(x.shape, name),
                                zeros((c,), name), zeros((c,), name))
    for gg, want in zip(got, gn_backward_ref(dy, x, m, r, g, w)):
        close(gg, want, name)


def test_group_norm_matches_torch():
    F = torch.nn.functional
    x, w, b, g = gn_inputs("4d", "float32")
    xt, wt, bt = (torch.from_numpy(v).requires_grad_() for v in (x, w, b))
    y = F.group_norm(xt, g, wt, bt)
    out, m, r = run_gn(strided(x), w, b, g, "float32")
    assert np.abs(out - y.detach().numpy()).max() <= 4e-6
    dy = torch.randn_like(y)
    y.backward(dy)
    got = ops.GroupNormBackward(dy.numpy(), x, m, r, w, 2, 6, 12, g, [True, True, True], np.zeros_like(x),
                                np.zeros(6, np.float32), np.zeros(6, np.float32))
    for gg, want in zip(got, (xt.grad, wt.grad, bt.grad)):
        assert np.abs(gg - want.numpy()).max() <= 1e-5


def test_group_norm_empty_spatial_fills_statistics():
    x = np.zeros((2, 4, 0), np.float32)
    out, m, r = ops.GroupNorm(x, None, None, 2, 4, 0, 2, 1e-5, np.zeros_like(x), np.ones((2, 2), np.float32),
                              np.ones((2, 2), np.float32))
    assert (m == 0).all() and np.isnan(r).all()


XG = np.ones((2, 4, 3), np.float32)
S22 = np.ones((2, 2), np.float32)


@pytest.mark.parametrize("args,text", [
    ((XG, None, None, 2, 4, 3, 0, 1e-5), "Expected group to be greater than 0, got 0."),
    ((XG, None, None, 2, 4, 3, 3, 1e-5), "Expected number of channels in input to be divisible by group, but got "
     "input of shape [2, 4, 3] and group=3."),
    ((XG, None, None, 2, 4, 3, 2, 0.0), "Expected eps to be greater than 0"),
    ((XG, None, None, 2, 4, 4, 2, 1e-5), "Expected the size of self outside the N and C dimensions == HxW"),
    ((XG, np.ones(4, np.float16), None, 2, 4, 3, 2, 1e-5), "Tensor gamma expected dtype is FLOAT but found FLOAT16."),
    ((XG, np.ones(3, np.float32), None, 2, 4, 3, 2, 1e-5), "Expected gamma to be a vector of size equal to the number "
     "of channels in input, but got gamma of shape [3] and input of shape [2, 4, 3]."),
    ((XG.astype(np.int32), None, None, 2, 4, 3, 2, 1e-5), "Tensor self not implemented for INT32"),
])
def test_group_norm_validation(args, text):
    x = args[0]
    code, msg = error_of(ops.GroupNorm, *args, np.zeros_like(x), S22.astype(x.dtype), S22.astype(x.dtype))
    assert code == INVALID and text in msg, msg


def test_group_norm_backward_validation():
    f = ops.GroupNormBackward
    z = np.zeros_like(XG)
    code, msg = error_of(f, XG, XG, S22, S22, None, 2, 4, 3, 2, [True, True], z, None, None)
    assert code == INVALID and "Expected aclnnGroupNormBackward outputMask len to be 3, but got 2." in msg
    code, msg = error_of(f, XG, XG, S22, S22, None, 2, 4, 3, 2, [True, False, False], None, None, None)
    assert code == INVALID and "Expected a proper Tensor but got null for argument gradInput." in msg
    code, msg = error_of(f, XG, XG, S22.astype(np.float16), S22, None, 2, 4, 3, 2, [True, False, False], z, None, None)
    assert code == INVALID and "Tensor mean expected dtype is FLOAT but found FLOAT16." in msg   # 950: FLOAT gradients
    code, msg = error_of(f, XG, XG, np.ones((2, 3), np.float32), S22, None, 2, 4, 3, 2, [True, False, False], z, None,
                         None)
    assert code == INVALID and "Expected mean.numel() == N * group to be true, but got false." in msg
    assert error_of(f, None, XG, S22, S22, None, 2, 4, 3, 2, [True, False, False], z, None, None)[0] == NULLPTR


def test_group_norm_backward_counts_beyond_int64_are_refused():
    """N * C * HxW and N * group are products of the caller's int64 attributes: one past INT64_MAX is a mismatch
    (161002 with the vendor's message), never a wrapped product (UBSan found the overflow in the op corpus)."""
    f, z = ops.GroupNormBackward, np.zeros_like(XG)
    # (-2**63 + 2) * 4 * 3 wraps to exactly 24, XG's element count: a wrapped product would pass this check
    for n, c, hw in ((-2 ** 63 + 2, 4, 3), (2 ** 62, 4, 4), (2, 2 ** 62, 2 ** 3)):
        code, msg = error_of(f, XG, XG, S22, S22, None, n, c, hw, 2, [True, False, False], z, None, None)
        assert code == INVALID and "Expected gradOut.numel() == N * C * HxW to be true, but got false." in msg, msg
    code, msg = error_of(f, XG, XG, S22, S22, None, 2, 4, 3, 2 ** 62 + 1, [True, False, False], z, None, None)
    assert code == INVALID, msg


# ---- dtype lists per SoC (the A2 one in a child process) ------------------------------------------------

CANDS = ["float32", "float16", "bfloat16", "float64", "int32"]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls = []
    for d in CANDS:
        t = ["t", d, [2, 4, 3]]
        c4 = ["t", d, [4]]
        calls.append(("BatchNorm", [t, c4, c4, ["n"], ["n"], True, 0.1, 1e-5, t, c4, c4]))
        calls.append(("BatchNormBackward", [t, t, c4, ["n"], ["n"], c4, c4, True, 1e-5, [True, True, True], t, c4, c4]))
        calls.append(("GroupNorm", [t, c4, c4, 2, 4, 3, 2, 1e-5, t, ["t", d, [2, 2]], ["t", d, [2, 2]]]))
        calls.append(("GroupNormBackward", [t, t, ["t", d, [2, 2]], ["t", d, [2, 2]], c4, 2, 4, 3, 2,
                                            [True, True, True], t, c4, c4]))
    want = [0 if d in FLOATS else INVALID for d in CANDS for _ in range(4)]
    got = status_codes(calls, soc)
    assert [(c[0], c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w] == []


def test_ascend950_mixed_precision_group_norm_backward():
    x = np.ones((2, 4, 3), np.float16)
    out = ops.GroupNormBackward(x, x, S22, S22, np.ones(4, np.float32), 2, 4, 3, 2, [True, True, True],
                                np.zeros_like(x), np.zeros(4, np.float32), np.zeros(4, np.float32))
    assert out[0].dtype == np.float16 and out[1].dtype == np.float32


# ---- torch_npu ----------------------------------------------------------------------------------------

_BODY = """
import torch.nn as nn
torch.manual_seed(0)

def step(m, x):
    x = x.clone().requires_grad_()
    y = m(x)
    y.backward(torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(y.device))
    out = [y, x.grad] + [p.grad for p in m.parameters()] + [b for b in m.buffers() if b.dtype.is_floating_point]
    return out

def block():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 4, 3, padding=1), nn.GroupNorm(2, 4), nn.ReLU(), nn.AdaptiveAvgPool2d(1))

cases = {
    "bn2d-train": (lambda: nn.BatchNorm2d(4), (3, 4, 5, 5), True),
    "bn1d-train": (lambda: nn.BatchNorm1d(6), (8, 6), True),
    "bn3d-eval": (lambda: nn.BatchNorm3d(3), (2, 3, 2, 3, 3), False),
    "gn": (lambda: nn.GroupNorm(2, 6), (2, 6, 4, 3), True),
    "block": (block, (2, 3, 8, 8), True),
}
for name, (make, shape, train) in cases.items():
    torch.manual_seed(2)
    m = make()
    for mod in m.modules():
        if isinstance(mod, nn.modules.batchnorm._BatchNorm):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 1.5)
    m.train(train)
    x = torch.randn(shape)
    mn = __import__("copy").deepcopy(m)
    cpu = step(m, x)
    try:
        npu = step(mn.npu(), x.npu())
        OUT[name] = {"cpu": [enc(to_np(t)) for t in cpu], "npu": [enc(to_np(t)) for t in npu]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("case", ["bn2d-train", "bn1d-train", "bn3d-eval", "gn", "block"])
def test_torch_npu_norm_layers_match_cpu(on_npu, case):
    r = on_npu[case]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = dec(c), dec(n)
        assert c.shape == n.shape
        assert np.abs(f64(c) - f64(n)).max() <= 2e-5 * max(1.0, np.abs(f64(c)).max()), np.abs(f64(c) - f64(n)).max()
