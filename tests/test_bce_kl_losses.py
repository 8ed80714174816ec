"""Binary cross entropy, with logits, and KL divergence losses (native_stubs/src/ops/loss/bce_loss.toml,
kl_div.toml): aclnnBinaryCrossEntropy(+Backward), aclnnBinaryCrossEntropyWithLogits(+Backward), aclnnKlDiv(+Backward)
(hicann/ops-nn loss/binary_cross_entropy*, loss/sigmoid_cross_entropy_with_logits*_v2, loss/kl_div_loss_grad;
hicann/ops-math math/kl_div_v2). Data-driven: an operator is a row of FORWARDS / BACKWARDS (its float32 model
of the vendor's steps, its float64 definition, its argument builder).
Element results bit-exact against the float32 models where the vendor's steps are public (Ln / Exp: libm in
double rounded to fp32, as the emulator's vecmath.h), reductions against float64 (fp32: within 2e-6 of the sum of
|terms|; fp16/bf16: 1 ulp of the float64 value rounded to the dtype); every dtype of the vendor's lists (950
in-process, A2 in one subprocess), broadcasting, strided views, empty tensors, the vendor's validation codes and
messages; one torch_npu child for the torch calls."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INNER_NULLPTR, INVALID, NULLPTR, raw_null_status, strided
import helpers

RNG = np.random.default_rng(2029)
DTYPES = ["float32", "float16", "bfloat16"]
REDUCTIONS = ["none", "mean", "sum"]
F32 = np.float32


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


def _f64(a):
    return np.asarray(a).astype(np.float64)


def _f32(a, shape=None):
    a = np.asarray(a).astype(np.float32)
    return a if shape is None else np.broadcast_to(a, shape)


def _ln32(v):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(_f64(v)).astype(np.float32)


def _exp32(v):
    with np.errstate(over="ignore"):
        return np.exp(_f64(v)).astype(np.float32)


# ---- float32 models of the vendor's element steps, float64 definitions ---------------------------------------

def _bce32(x, y, w):
    def cl(v):
        lv = _ln32(v)
        return np.where(lv < F32(-100), F32(-100), lv)
    with np.errstate(invalid="ignore"):
        v = ((y * cl(x)) + ((F32(1) - y) * cl(F32(1) - x))) * F32(-1)
    return v if w is None else v * w


def _bce64(x, y, w):
    with np.errstate(divide="ignore", invalid="ignore"):
        v = -(y * np.maximum(np.log(x), -100) + (1 - y) * np.maximum(np.log(1 - x), -100))
    return v if w is None else v * w


def _bce_grad32(x, y, g, w, reduction, n):
    q = (F32(1) - x) * x
    r = ((g * (x - y)) / np.where(q > F32(1e-12), q, F32(1e-12))) * (F32(1) if w is None else w)
    return r * F32(1.0 / n) if reduction == 1 else r


def _bce_args(name, shape):   # probabilities in (0, 1), targets in [0, 1], a weight
    x = R.cast(RNG.uniform(0.02, 0.98, shape), name)
    return x, R.cast(RNG.uniform(0, 1, shape), name), R.cast(RNG.uniform(0.5, 2, shape), name)


def _bcel32(x, y, w, pw=None):
    with np.errstate(invalid="ignore"):
        m = np.maximum(x * F32(-1), F32(0))
        nm = m * F32(-1)
        lt = _ln32(_exp32(nm) + _exp32(nm - x)) + m
        ny = (y * F32(-1)) + F32(1)
        v = ny * x + (lt if pw is None else ((pw * y) + ny) * lt)
    return v if w is None else v * w


def _bcel64(x, y, w, pw=None):
    lw = 1 if pw is None else 1 + (pw - 1) * y
    v = (1 - y) * x + lw * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    return v if w is None else v * w


def _bcel_grad32(x, y, g, w, pw, reduction, n):
    lw = (F32(1) if pw is None else pw) * y
    with np.errstate(over="ignore"):
        sg = F32(1) / (_exp32(x * F32(-1)) + F32(1))
    r = (((((lw + F32(1)) - y) * sg) - lw) * g) * (F32(1) if w is None else w)
    return r * (F32(1) / F32(n)) if reduction == 1 else r


def _bcel_args(name, shape):   # logits, targets in [0, 1], a weight
    return R.cast(RNG.standard_normal(shape) * 3, name), R.cast(RNG.uniform(0, 1, shape), name), \
        R.cast(RNG.uniform(0.5, 2, shape), name)


FORWARDS = {  # name: operator, argument builder, float32 element model (None: no public kernel), float64 loss
    "bce": dict(op="BinaryCrossEntropy", args=_bce_args, m32=_bce32, f64=_bce64,
                call=lambda x, y, w, pw, red, out: ops.BinaryCrossEntropy(x, y, w, red, out)),
    "bcel": dict(op="BinaryCrossEntropyWithLogits", args=_bcel_args, m32=_bcel32, f64=_bcel64,
                 call=lambda x, y, w, pw, red, out: ops.BinaryCrossEntropyWithLogits(x, y, w, pw, red, out)),
}


def _terms(loss, x, y, w, pw=None):
    f = FORWARDS[loss]
    shape = np.shape(x)
    if f["m32"] is not None:
        w32 = None if w is None else _f32(w, shape)
        return f["m32"](_f32(x), _f32(y, shape), w32, *(() if pw is None else (_f32(pw, shape),)))
    return None


def _same_bits(got, want):
    got, want = np.ascontiguousarray(np.atleast_1d(got)), np.ascontiguousarray(np.atleast_1d(want))
    return got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))


def _check_close(got, want, name, scale):
    if name == "float32":
        assert np.all(np.abs(_f64(got) - want) <= 2e-6 * np.maximum(scale, 1e-30)), (got, want)
    else:
        assert R.ulp_distance(R.cast(_f64(got), name), R.cast(want, name), name).max() <= 1, (got, want)


@pytest.mark.parametrize("loss", list(FORWARDS))
@pytest.mark.parametrize("name", DTYPES)
def test_forward_elements_and_reductions(loss, name):
    f = FORWARDS[loss]
    for shape, weighted in [((5, 7), True), ((33,), False), ((), True)]:
        x, y, w = f["args"](name, shape)
        w = w if weighted else None
        pw = R.cast(RNG.uniform(0.5, 3, shape[-1:]), name) if weighted and loss == "bcel" else None
        for red in (0, 1, 2):
            got = f["call"](x, y, w, pw, red, zeros(shape if red == 0 else (), name))
            l64 = f["f64"](_f64(x), _f64(y), None if w is None else _f64(w), *(() if pw is None else (_f64(pw),)))
            if red == 0:   # the vendor's steps in fp32, one rounding to the dtype
                want = R.cast(_terms(loss, x, y, w, pw), name)
                assert _same_bits(got, want), (got, want)
            else:
                _check_close(got, l64.mean() if red == 1 else l64.sum(), name, np.abs(l64).sum())


def test_bce_clamp_nan_mixed_dtypes_and_empty():
    x, y = F32([0.0, 1.0, 0.5, np.nan, 1.5]), F32([1.0, 0.0, 0.5, 0.5, 0.5])
    got = ops.BinaryCrossEntropy(x, y, None, 0, zeros(5, "float32"))
    assert got[:2].tolist() == [100.0, 100.0] and np.isnan(got[3]) and np.isnan(got[4])   # ln clamped at -100
    assert got[2] == _bce32(x[2:3], y[2:3], None)[0]
    h = x[:3].astype(np.float16)   # no weight: dtypes may differ; the result in self's dtype, then out's
    got = ops.BinaryCrossEntropy(h, y[:3], None, 0, zeros(3, "float32"))
    assert np.array_equal(got, R.cast(_bce32(_f32(h), y[:3], None), "float16").astype(F32))
    e = zeros((0, 3), "float32")
    assert np.isnan(ops.BinaryCrossEntropy(e, e, None, 1, np.full((), 7, F32)))
    assert ops.BinaryCrossEntropy(e, e, e, 2, np.full((2,), 7, F32)).tolist() == [0.0, 0.0]   # out filled
    assert ops.BinaryCrossEntropy(e, e, None, 0, np.full((2,), 7, F32)).tolist() == [0.0, 0.0]
    one = ops.BinaryCrossEntropy(F32([[0.25]]), F32([[1.0]]), None, 2, np.full((1, 1), 7, F32))   # 1 element
    assert one.shape == (1, 1) and one[0, 0] == _bce32(F32(0.25), F32(1), None)


BACKWARDS = {  # name: operator, float32 model, argument order
    "bce": dict(op="BinaryCrossEntropyBackward", m32=_bce_grad32,
                call=lambda g, x, y, w, pw, red, out: ops.BinaryCrossEntropyBackward(g, x, y, w, red, out)),
    "bcel": dict(op="BinaryCrossEntropyWithLogitsBackward", m32=_bcel_grad32,
                 call=lambda g, x, y, w, pw, red, out: ops.BinaryCrossEntropyWithLogitsBackward(g, x, y, w, pw, red, out)),
}


@pytest.mark.parametrize("loss", list(BACKWARDS))
@pytest.mark.parametrize("name", DTYPES)
def test_backward_is_the_vendor_steps_in_fp32(loss, name):
    b, f = BACKWARDS[loss], FORWARDS[loss]
    for shape, wshape, red in [((4, 6), (6,), 0), ((3, 1, 5), (1, 5), 1), ((7,), None, 2), ((2, 3), (2, 3), 1)]:
        x, y, w = f["args"](name, shape)
        w = None if wshape is None else R.cast(RNG.uniform(0.5, 2, wshape), name)
        pw = R.cast(RNG.uniform(0.5, 3, shape[-1:]), name) if loss != "bce" else None
        g = R.cast(RNG.uniform(0.5, 2, shape if red == 0 else ()), name)
        got = b["call"](g, x, y, w, pw, red, zeros(shape, name))
        w32 = None if w is None else _f32(w, shape)
        args = (_f32(x), _f32(y), _f32(g, shape), w32) + ((_f32(pw, shape),) if loss == "bcel" else ())
        want = R.cast(b["m32"](*args, red, x.size), name)
        assert _same_bits(got, want), (got, want)


def test_bcel_extremes_empty_and_any_reduced_out():
    x, y = F32([-100.0, 100.0, 0.0, np.inf, -np.inf]), F32([0.0, 1.0, 0.5, 1.0, 0.0])
    got = ops.BinaryCrossEntropyWithLogits(x, y, None, None, 0, zeros(5, "float32"))
    assert np.array_equal(got, _bcel32(x, y, None), equal_nan=True) and got[:2].tolist() == [0.0, 0.0]
    assert np.isnan(got[3:]).all()   # (1 - y) * x: 0 * inf, as in torch
    g = ops.BinaryCrossEntropyWithLogitsBackward(np.ones(5, F32), x, y, None, None, 0, zeros(5, "float32"))
    assert np.array_equal(g, _bcel_grad32(x, y, F32(1), None, None, 0, 5), equal_nan=True)
    e = zeros((0, 3), "float32")
    assert np.isnan(ops.BinaryCrossEntropyWithLogits(e, e, None, None, 1, np.full((), 7, F32)))
    assert ops.BinaryCrossEntropyWithLogits(e, e, None, None, 2, np.full((2,), 7, F32)).tolist() == [0.0, 0.0]
    assert ops.BinaryCrossEntropyWithLogits(e, e, None, None, 0, np.full((2,), 7, F32)).tolist() == [7.0, 7.0]
    assert ops.BinaryCrossEntropyWithLogitsBackward(e, e, e, None, None, 1, zeros((0, 3), "float32")).shape == (0, 3)
    xs, ys = F32([[0.5, -1.0, 2.0]]), F32([[1.0, 0.0, 0.25]])   # reduced: out's shape is not checked
    total = ops.BinaryCrossEntropyWithLogits(xs, ys, None, None, 2, zeros((2,), "float32"))
    assert total.tolist() == [float(_bcel32(xs, ys, None).sum(dtype=F32))] * 2


def test_strided_views():
    x, y, _ = _bce_args("float32", (6, 5))
    got = ops.BinaryCrossEntropy(strided(x, transpose=True), strided(y), None, 0, zeros((6, 5), "float32"))
    assert np.array_equal(got, _bce32(x, y, None))
    g = ops.BinaryCrossEntropyBackward(strided(np.ones((6, 5), F32)), strided(x), strided(y), strided(np.full((6, 5), 2, F32)),
                                       2, zeros((6, 5), "float32"))
    assert np.array_equal(g, _bce_grad32(x, y, F32(1), F32(2), 2, 30))
    got = ops.BinaryCrossEntropyWithLogits(strided(x, transpose=True), strided(y), strided(np.full(5, 3, F32)), None, 0,
                                           zeros((6, 5), "float32"))
    assert np.array_equal(got, _bcel32(x, y, F32(3)))
    g = ops.BinaryCrossEntropyWithLogitsBackward(strided(np.ones((6, 5), F32)), strided(x), strided(y, transpose=True),
                                                 None, strided(np.full(5, 2, F32)), 0, zeros((6, 5), "float32"))
    assert np.array_equal(g, _bcel_grad32(x, y, F32(1), None, F32(2), 0, 30))


def _kl32(x, t, lt):
    with np.errstate(invalid="ignore"):
        return _exp32(t) * (t - x) if lt else t * (_ln32(np.where(t != 0, t, F32(1))) - x)


def _kl64(x, t, lt):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.exp(t) * (t - x) if lt else np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1.0, t))) - t * x


def _kl_args(name, xs, ts, lt):
    x = R.cast(np.log(RNG.uniform(0.05, 1, xs)), name)
    t = RNG.uniform(0, 1, ts)
    t = np.log(t + 0.05) if lt else np.where(t < 0.1, 0.0, t)   # some zero targets
    return x, R.cast(t, name)


KL_REDUCE = {0: None, 1: lambda l: l.mean(), 2: lambda l: l.sum(), 3: lambda l: l.sum() / (l.shape[0] if l.ndim else 1)}


@pytest.mark.parametrize("name", DTYPES)
def test_kl_div_forward(name):
    for xs, ts in [((4, 5), (5,)), ((3, 1, 4), (2, 1)), ((), ())]:
        shape = np.broadcast_shapes(xs, ts)
        for lt in (False, True):
            x, t = _kl_args(name, xs, ts, lt)
            l64 = _kl64(*np.broadcast_arrays(_f64(x), _f64(t)), lt)
            for red in (0, 1, 2, 3):
                got = ops.KlDiv(x, t, red, lt, zeros(shape if red == 0 else (), name))
                if red == 0:
                    want = R.cast(_kl32(*np.broadcast_arrays(_f32(x), _f32(t)), lt), name)
                    assert _same_bits(got, want), (got, want)
                else:
                    _check_close(got, KL_REDUCE[red](l64), name, np.abs(l64).sum())


@pytest.mark.parametrize("name", DTYPES)
def test_kl_div_backward_is_the_vendor_steps_in_fp32(name):
    for xs, ts, gs, red in [((4, 5), (4, 5), (4, 5), 0), ((4, 5), (5,), (), 1), ((5,), (3, 5), (), 2),
                            ((2, 3, 4), (2, 3, 4), (), 3), ((3, 1), (3, 4), (4,), 3)]:
        shape = np.broadcast_shapes(xs, ts)
        for lt in (False, True):
            x, t = _kl_args(name, xs, ts, lt)
            g = R.cast(RNG.uniform(0.5, 2, gs), name)
            got = ops.KlDivBackward(g, x, t, red, lt, zeros(xs, name))
            cof = F32({0: 1.0, 1: 1.0 / np.prod(shape), 2: 1.0, 3: 1.0 / shape[0]}[red])
            v = (((_exp32(_f32(t, shape)) if lt else _f32(t, shape)) * _f32(g, shape)) * F32(-1)) * cof
            v = R.cast(v, "float16" if name == "float16" else "float32").astype(F32)   # the kernel's output dtype
            while v.ndim > len(xs):   # the op_api's ReduceSum to self's shape
                v = R.cast(np.add.reduce(v, axis=0, dtype=F32), "float16" if name == "float16" else "float32")
            for d, n in enumerate(xs):
                if n == 1 and v.shape[d] != 1:
                    v = np.add.reduce(_f32(v), axis=d, keepdims=True, dtype=F32)
            assert _same_bits(got, R.cast(_f32(v), name)), (xs, red, lt, got, v)


def test_kl_div_empty_zero_dim_and_other_reductions():
    e, f = zeros((0, 3), "float32"), zeros((2, 0), "float32")
    assert np.isnan(ops.KlDiv(e, e, 1, False, np.full((), 7, F32)))
    assert np.isnan(ops.KlDiv(e, e, 3, False, np.full((), 7, F32)))   # batchmean over an empty batch
    assert float(ops.KlDiv(f, f, 3, False, np.full((), 7, F32))) == 0.0
    assert float(ops.KlDiv(F32([0.5]), f[0], 2, False, np.full((), 7, F32))) == 0.0   # an empty target
    assert ops.KlDiv(e, e, 0, False, zeros((0, 3), "float32")).shape == (0, 3)
    assert ops.KlDivBackward(e, e, e, 1, False, zeros((0, 3), "float32")).shape == (0, 3)
    x, t = F32(-0.5), F32(0.25)
    assert _same_bits(ops.KlDiv(x, t, 0, False, zeros((), "float32")), _kl32(x, t, False))
    x, t = _kl_args("float32", (3, 4), (3, 4), False)
    g = np.ones((3, 4), F32)
    assert _same_bits(ops.KlDivBackward(g, x, t, 7, False, zeros((3, 4), "float32")), -t)   # other values: none
    got = ops.KlDiv(strided(x, transpose=True), strided(t), 0, False, zeros((3, 4), "float32"))
    assert _same_bits(got, _kl32(x, t, False))
    got = ops.KlDivBackward(strided(g), strided(x), strided(t, transpose=True), 2, True, zeros((3, 4), "float32"))
    assert _same_bits(got, (_exp32(t) * g) * F32(-1))


F2, H2 = np.zeros((2, 3), F32), np.zeros((2, 3), np.float16)
SCALAR = zeros((), "float32")
INVALID_CALLS = [  # (operator, arguments, message)
    ("BinaryCrossEntropy", (F2.astype(np.float64), F2, None, 1, SCALAR),
     "Tensor self not implemented for DOUBLE, should be in dtype support list [FLOAT, FLOAT16, BFLOAT16]."),
    ("BinaryCrossEntropy", (F2, F2, None, 1, zeros((), "int32")), "Tensor out not implemented for INT32"),
    ("BinaryCrossEntropy", (F2, F2, F2.astype(np.int32), 1, SCALAR),
     "weight dtype INT32 should be in dtype support list [FLOAT, FLOAT16, BFLOAT16]."),
    ("BinaryCrossEntropy", (F2, H2, F2, 1, SCALAR), "Tensor self expected dtype is FLOAT16 but found FLOAT."),
    ("BinaryCrossEntropy", (F2, F2, H2, 1, SCALAR), "Tensor self expected dtype is FLOAT16 but found FLOAT."),
    ("BinaryCrossEntropy", (F2, F2, F2, 1, zeros((), "float16")), "Tensor self expected dtype is FLOAT16 but found FLOAT."),
    ("BinaryCrossEntropy", (F2, np.zeros(3, F32), None, 1, SCALAR),
     "Expected tensor for self to have same size as tensor for target, but [2, 3] does not equal [3]."),
    ("BinaryCrossEntropy", (F2, F2, None, 3, SCALAR), "Reduction only support 0, 1, 2."),
    ("BinaryCrossEntropy", (F2, F2, None, 0, zeros((3, 2), "float32")),
     "The out tensor's shape[3, 2] is not equal with inferOut shape[2, 3]."),
    ("BinaryCrossEntropy", (F2, F2, None, 1, zeros((2,), "float32")),
     "The out tensor's shape[2] is not equal with inferOut shape[]."),
    ("BinaryCrossEntropyBackward", (F2, np.zeros((1,) * 9, F32), F2, None, 1, F2),
     "The self tensor cannot be larger than 8 dimensions."),
    ("BinaryCrossEntropyBackward", (F2, F2, F2, None, 1, F2.astype(np.float64)), "Tensor out not implemented for DOUBLE"),
    ("BinaryCrossEntropyBackward", (F2, F2, F2, F2.astype(np.int64), 1, F2), "Tensor weightOptional not implemented for INT64"),
    ("BinaryCrossEntropyBackward", (F2, F2, F2, None, 1, np.zeros(6, F32)),
     "Expected tensor for out to have same size as tensor for self, but [6] does not equal [2, 3]."),
    ("BinaryCrossEntropyBackward", (F2, F2, np.zeros(2, F32), None, 1, F2),
     "The size of tensor self [2, 3] must match the size of tensor target [2]."),
    ("BinaryCrossEntropyBackward", (np.zeros((4, 3), F32), F2, F2, None, 1, F2),
     "The size of tensor self [2, 3] must match the size of tensor gradOutput [4, 3]."),
    ("BinaryCrossEntropyBackward", (F2, F2, F2, None, 3, F2), "Reduction should be between 0 and 2, but current is 3"),
    ("BinaryCrossEntropyWithLogits", (F2, F2.astype(np.int32), None, None, 1, SCALAR), "Tensor target not implemented for INT32"),
    ("BinaryCrossEntropyWithLogits", (F2, H2, None, None, 1, SCALAR),
     "Tensor target expected dtype is FLOAT but found FLOAT16."),
    ("BinaryCrossEntropyWithLogits", (F2, F2, None, None, -1, SCALAR), "Reduction only support [0, 1, 2]."),
    ("BinaryCrossEntropyWithLogits", (F2, F2, None, np.zeros((1,) * 9, F32), 1, SCALAR),
     "The posWeight tensor cannot be larger than 8 dimensions."),
    ("BinaryCrossEntropyWithLogits", (F2, np.zeros(3, F32), None, None, 1, SCALAR),
     "Expected tensor for self to have same size as tensor for target, but [2, 3] does not equal [3]."),
    ("BinaryCrossEntropyWithLogits", (F2, F2, np.zeros(2, F32), None, 1, SCALAR),
     "The size of tensor weight [2] must match the size of tensor target [2, 3]."),
    ("BinaryCrossEntropyWithLogits", (F2, F2, None, np.zeros(4, F32), 1, SCALAR),
     "The size of tensor posWeight [4] must match the size of tensor target [2, 3]."),
    ("BinaryCrossEntropyWithLogits", (F2, F2, None, None, 0, zeros((3, 2), "float32")),
     "Expected tensor for out to have same size as [2, 3], but got [3, 2]."),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, F2, None, None, 1, F2.astype(np.float64)),
     "Tensor out not implemented for DOUBLE"),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, F2, None, F2.astype(np.int32), 1, F2),
     "Tensor posWeightOptional not implemented for INT32"),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, H2, None, None, 1, F2),
     "Tensor out expected dtype is FLOAT16 but found FLOAT."),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, np.zeros(3, F32), None, None, 1, F2),
     "Expected tensor for self to have same size as tensor for target, but [2, 3] does not equal [3]."),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, F2, None, None, 1, np.zeros((3, 2), F32)),
     "Expected tensor for self to have same size as tensor for out, but [2, 3] does not equal [3, 2]."),
    ("BinaryCrossEntropyWithLogitsBackward", (np.zeros(2, F32), F2, F2, None, None, 1, F2),
     "The size of tensor gradOutput [2] must match the size of tensor self [2, 3]."),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, F2, np.zeros((3, 1), F32), None, 1, F2),
     "The size of tensor weightOptional [3, 1] must match the size of tensor self [2, 3]."),
    ("BinaryCrossEntropyWithLogitsBackward", (F2, F2, F2, None, None, 5, F2),
     "Reduction should be between 0 and 2, but current is 5"),
    ("KlDiv", (F2.astype(np.float64), F2, 1, False, SCALAR), "Tensor self not implemented for DOUBLE"),
    ("KlDiv", (F2, F2, 1, False, zeros((), "int32")), "Tensor out not implemented for INT32"),
    ("KlDiv", (np.zeros((1,) * 9, F32), F2, 1, False, SCALAR), "The self tensor cannot be larger than 8 dimensions."),
    ("KlDiv", (F2, F2, 4, False, SCALAR),
     "Invalid reduction value: 4. Allowed values are 0 (None), 1 (Mean), 2 (Sum), 3 (Batchmean)."),
    ("KlDiv", (F2, np.zeros(2, F32), 1, False, SCALAR),
     "The size of tensor selfUnsqueeze [2, 3] must match the size of tensor targetUnsqueeze [2]."),
    ("KlDiv", (F2, np.zeros(3, F32), 0, False, zeros((3, 2), "float32")),
     "Expected tensor for out to have same size as [2, 3], but got [3, 2]."),
    ("KlDiv", (F32(1), F32(1), 0, False, zeros((1,), "float32")), "Expected tensor for out to have same size as [], but got [1]."),
    ("KlDiv", (F2, F2, 3, False, zeros((2,), "float32")), "The out tensor's shape[2] is not equal with inferOut shape[]."),
    ("KlDivBackward", (F2, F2, F2, 1, False, F2.astype(np.int32)),
     "Result type FLOAT can't be cast to the desired output type INT32."),
    ("KlDivBackward", (F2, F2, F2.astype(np.int64), 1, False, F2), "Tensor target not implemented for INT64"),
    ("KlDivBackward", (F2, F2, F2, 1, False, np.zeros((1,) * 9, F32)), "The out tensor cannot be larger than 8 dimensions."),
    ("KlDivBackward", (F2, F2, np.zeros(4, F32), 1, False, F2),
     "The size of tensor self [2, 3] must match the size of tensor target [4]."),
    ("KlDivBackward", (np.zeros((4, 3), F32), F2, F2, 1, False, F2),
     "Except shape of gradOutput must broadcast to [2, 3], but current is [4, 3]."),
    ("KlDivBackward", (F2, F2, F2, 1, False, np.zeros((3, 2), F32)),
     "Expected tensor for self to have same size as tensor for out, but [2, 3] does not equal [3, 2]."),
]


@pytest.mark.parametrize("op,args,text", INVALID_CALLS)
def test_invalid_arguments_return_161002(op, args, text):
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (INVALID, True), str(err)


def test_bce_weight_of_another_shape_fails_in_the_tiling():
    for w in (np.ones(3, F32), np.ones((1, 3), F32)):   # torch expands weight to target's shape first
        err = pytest.raises(AclError, ops.BinaryCrossEntropy, F2, F2, w, 1, SCALAR).value
        assert err.code == INNER_NULLPTR and "x and weight should have the same shape" in str(err), str(err)
    assert float(ops.BinaryCrossEntropy(F32(0.5), F32(1), F32([2]), 2, SCALAR)) == float(_bce32(F32(0.5), F32(1), F32(2)))


def test_broadcast_beyond_self_fails_without_a_message():
    with pytest.raises(AclError) as e:   # gradOutput [2, 2, 3] broadcasts with self [2, 3] but not to it
        ops.BinaryCrossEntropyBackward(np.zeros((2, 2, 3), F32), F2, F2, None, 0, F2)
    assert e.value.code == INVALID


# operator: (parameters before workspaceSize, the status of all-NULL arguments); BinaryCrossEntropy's op_api
# returns ACLNN_ERR_INNER_NULLPTR for them
NULL_STATUS = {"BinaryCrossEntropy": (5, INNER_NULLPTR), "BinaryCrossEntropyBackward": (6, NULLPTR),
               "BinaryCrossEntropyWithLogits": (6, NULLPTR), "BinaryCrossEntropyWithLogitsBackward": (7, NULLPTR),
               "KlDiv": (5, NULLPTR), "KlDivBackward": (6, NULLPTR)}


@pytest.mark.parametrize("op", list(NULL_STATUS))
def test_null_arguments(op):
    n, code = NULL_STATUS[op]
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", n) == code
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


A2_BODY = """
import numpy as np
from pyaclnn import ops
import ml_dtypes
res = {}
for name, dt in [("float32", np.float32), ("float16", np.float16), ("bfloat16", ml_dtypes.bfloat16)]:
    x = np.linspace(0.1, 0.9, 6).reshape(2, 3).astype(dt); t = np.full((2, 3), 0.25, dt)
    res["bce " + name] = float(ops.BinaryCrossEntropy(x, t, None, 2, np.zeros((), dt)))
    ops.BinaryCrossEntropyBackward(np.ones((), dt), x, t, None, 1, np.zeros((2, 3), dt))
    res["bcel " + name] = float(ops.BinaryCrossEntropyWithLogits(x, t, None, None, 2, np.zeros((), dt)))
    ops.BinaryCrossEntropyWithLogitsBackward(np.ones((), dt), x, t, None, None, 1, np.zeros((2, 3), dt))
    lx = np.log(x)
    res["kl " + name] = float(ops.KlDiv(lx, t, 3, False, np.zeros((), dt)))
    ops.KlDivBackward(np.ones((), dt), lx, t, 1, True, np.zeros((2, 3), dt))
# A2: a NULL posWeight is OnesLike(self): lw = 1 * y + (1 - y) in fp32
y = np.float32([0.1, 0.3, 0.7, 3.3]); x = np.float32([0.5, -2.0, 1.5, 4.0])
res["pw"] = ops.BinaryCrossEntropyWithLogits(x, y, None, None, 0, np.zeros(4, np.float32)).tolist()
print(res)
"""


def test_a2_dtype_lists():
    rc, out, err = helpers.run_python(A2_BODY, {"PYACLNN_STUB_SOC": "Ascend910B4"})
    assert rc == 0, err
    res = eval(out.strip().splitlines()[-1])
    x = np.linspace(0.1, 0.9, 6)
    bce = float(np.sum(_bce64(x, 0.25, None)))
    for name in DTYPES:
        assert abs(res["bce " + name] - bce) < (1e-5 if name == "float32" else 0.05 * bce), (name, res)
        kl = float(np.sum(_kl64(np.log(_f64(R.cast(x, name))), 0.25, False)) / 2)
        assert abs(res["kl " + name] - kl) < (1e-5 if name == "float32" else 0.02), (name, res)
        bcel = float(np.sum(_bcel64(x, 0.25, None)))
        assert abs(res["bcel " + name] - bcel) < (1e-5 if name == "float32" else 0.05 * bcel), (name, res)
    y, x = F32([0.1, 0.3, 0.7, 3.3]), F32([0.5, -2.0, 1.5, 4.0])
    assert res["pw"] == _bcel32(x, y, None, F32(1)).tolist()


TORCH_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
for red in ["none", "mean", "sum"]:
    for dt in [torch.float32, torch.float16]:
        p = (torch.rand(4, 5) * 0.9 + 0.05).to(dt); t = torch.rand(4, 5).to(dt); w = torch.rand(5).to(dt)
        z = torch.randn(4, 5).to(dt); pw = (torch.rand(5) * 2).to(dt)
        cases = [("bce", lambda a, b, w_: F.binary_cross_entropy(a, b, w_, reduction=red), p, t, w),
                 ("bcel", lambda a, b, w_: F.binary_cross_entropy_with_logits(a, b, w_, reduction=red,
                                                                              pos_weight=pw.to(a.device, a.dtype)), z, t, w)]
        for key, fn, a, b, w_ in cases:
            an = a.npu().requires_grad_(True); ac = a.float().clone().requires_grad_(True)
            ln = fn(an, b.npu(), w_.npu()); lc = fn(ac, b.float(), w_.float())
            (ln.float().sum() if red == "none" else ln).backward(); (lc.sum() if red == "none" else lc).backward()
            OUT[f"{key} {red} {dt}"] = [float((ln.float().cpu() - lc).abs().max()),
                                        float((an.grad.float().cpu() - ac.grad).abs().max())]
for red in ["none", "mean", "sum", "batchmean"]:
    for lt in [False, True]:
        a = torch.randn(4, 5).log_softmax(-1); b = torch.rand(4, 5).softmax(-1)
        b = b.log() if lt else b
        an = a.npu().requires_grad_(True); ac = a.clone().requires_grad_(True)
        ln = F.kl_div(an, b.npu(), reduction=red, log_target=lt); lc = F.kl_div(ac, b, reduction=red, log_target=lt)
        (ln.sum() if red == "none" else ln).backward(); (lc.sum() if red == "none" else lc).backward()
        OUT[f"kl {red} {lt} torch.float32"] = [float((ln.cpu() - lc).abs().max()),
                                              float((an.grad.cpu() - ac.grad).abs().max())]
"""


def test_torch_npu_reaches_the_operators():
    from _math_ops import torch_npu_run
    out = torch_npu_run(TORCH_BODY, {})
    assert len(out) == 20
    for key, (fwd, bwd) in out.items():
        tol = 2e-5 if "float32" in key else 2e-2
        assert fwd <= tol * 5 and bwd <= tol, (key, fwd, bwd)
