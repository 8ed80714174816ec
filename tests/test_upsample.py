"""The upsampling family (native_stubs/src/ops/upsample/nearest.toml, bilinear.toml) against torch CPU and a NumPy
model of the vendor's fp32 steps: nearest upsampling (exact: the fp32 source-index rule, scales from sizes or from
the V2's scales) and its backward (fp32 sums, within 1 ulp of float64), bilinear upsampling (align_corners False /
True, the fp32 interpolation of the arch35 SIMT kernel, bit-exact to the model and within a few ulp of float64)
and its backward; every dtype of the vendor's lists per SoC (Atlas A2 in one child process), NCHW and NHWC,
strided views, empty batches, the validation codes and messages; and torch_npu's F.interpolate forward and
backward on the emulator against torch CPU (one child). Adding a configuration adds a row to a CASES table."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from _cnn_ops import (A2, FWD_BWD_LOOP, INVALID, NULLPTR, assert_npu_matches_cpu, error_of, f64, status_codes,
                      torch_npu_run, zeros)
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(2831)
F32 = np.float32


def host(r):
    return r.numpy() if hasattr(r, "numpy") else np.asarray(r)


def nhwc(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 2, 3, 1))


def nchw(a):
    return np.ascontiguousarray(np.asarray(a).transpose(0, 3, 1, 2))


def dev(a, fmt=None):
    return pyaclnn.from_numpy(np.ascontiguousarray(a), format=fmt)


def ulp_close(got, want64, name, ulps=1):
    """|got - want| <= ulps * ulp(want rounded to the dtype) elementwise."""
    want = R.cast(f64(want64), name).astype(np.float64)
    got = f64(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
    err = np.abs(got - f64(want64))
    assert (err <= ulps * ulp).all(), float((err / ulp).max())
    return float((err / ulp).max(initial=0.0))


# ---- nearest ----------------------------------------------------------------------------------------------

def src_index(n_out, n_in, s):
    """The vendor's fp32 rule: min(floorf(i * s), in - 1)."""
    return np.minimum(np.floor(np.arange(n_out, dtype=F32) * F32(s)).astype(np.int64), n_in - 1)


def axis_scale(scale, n_in, n_out):
    return F32(1) / F32(scale) if scale > 0 else F32(n_in) / F32(n_out)


def nearest_model(x, oh, ow, sh=-1.0, sw=-1.0):
    h, w = x.shape[2:]
    if (h, w) == (oh, ow):
        return x.copy()
    return x[:, :, src_index(oh, h, axis_scale(sh, h, oh))][:, :, :, src_index(ow, w, axis_scale(sw, w, ow))]


def nearest_backward_model(dy, shape, sh=-1.0, sw=-1.0):
    """fp32 sums in gradOut's row-major order (np.add.at adds in order), one rounding to dy's dtype."""
    n, c, h, w = shape
    oh, ow = dy.shape[2:]
    rows, cols = src_index(oh, h, axis_scale(sh, h, oh)), src_index(ow, w, axis_scale(sw, w, ow))
    acc = np.zeros((n * c, h * w), F32)
    idx = (rows[:, None] * w + cols[None, :]).ravel()
    for p in range(n * c):
        np.add.at(acc[p], idx, f64(dy).reshape(n * c, -1)[p].astype(F32))
    return acc.reshape(shape).astype(dy.dtype)


# name: input shape, output size, scales (None: from the sizes)
NEAREST_CASES = {
    "x2": ((2, 3, 5, 7), None, (2.0, 2.0)),
    "x1.5": ((1, 2, 6, 5), None, (1.5, 1.5)),
    "size-up": ((2, 3, 5, 7), (9, 13), None),
    "size-down": ((1, 2, 9, 8), (4, 3), None),
    "x3-x0.5": ((1, 2, 4, 8), None, (3.0, 0.5)),
    "same": ((1, 2, 4, 4), (4, 4), None),
}


def nearest_torch(case, x):
    shape, size, sc = NEAREST_CASES[case]
    xt = torch.from_numpy(f64(x)).requires_grad_()
    y = F.interpolate(xt, size=size, mode="nearest") if size else F.interpolate(xt, scale_factor=sc, mode="nearest")
    return xt, y


@pytest.mark.parametrize("case", list(NEAREST_CASES))
def test_nearest_v2_matches_torch_and_backward(case):
    shape, size, sc = NEAREST_CASES[case]
    x = RNG.standard_normal(shape).astype(F32)
    xt, y = nearest_torch(case, x)
    oh, ow = y.shape[2:]
    sh, sw = sc if sc else (-1.0, -1.0)
    out = ops.UpsampleNearest2dV2(strided(x), [oh, ow], sh, sw, zeros(y.shape, "float32"))
    np.testing.assert_array_equal(out, y.detach().numpy().astype(F32))
    np.testing.assert_array_equal(out, nearest_model(x, oh, ow, sh, sw))
    if not sc:
        np.testing.assert_array_equal(ops.UpsampleNearest2d(x, [oh, ow], zeros(y.shape, "float32")), out)
    dy = RNG.standard_normal(y.shape).astype(F32)
    y.backward(torch.from_numpy(f64(dy)))
    gi = ops.UpsampleNearest2dBackward(strided(dy), [oh, ow], list(shape), sh, sw, zeros(shape, "float32"))
    np.testing.assert_array_equal(gi, nearest_backward_model(dy, shape, sh, sw))
    np.testing.assert_allclose(gi, xt.grad.numpy(), rtol=0, atol=4 * 2.0 ** -24 * np.abs(dy).max() * 9)


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float64", "uint8"])
def test_nearest_dtypes_and_nhwc(name):
    x = R.cast(RNG.standard_normal((2, 4, 3, 5)) * 20 + 40, name)
    want = nearest_model(x, 7, 9)
    np.testing.assert_array_equal(ops.UpsampleNearest2dV2(x, [7, 9], -1.0, -1.0, zeros(want.shape, name)), want)
    got = ops.UpsampleNearest2dV2(dev(nhwc(x), "NHWC"), [7, 9], -1.0, -1.0, dev(nhwc(zeros(want.shape, name)), "NHWC"))
    np.testing.assert_array_equal(nchw(host(got)), want)
    if name in ("float16", "bfloat16"):
        dy = R.cast(RNG.standard_normal(want.shape), name)
        xt = torch.zeros(x.shape, dtype=torch.float64, requires_grad=True)
        F.interpolate(xt, size=(7, 9), mode="nearest").backward(torch.from_numpy(f64(dy)))
        gi = ops.UpsampleNearest2dBackward(dev(nhwc(dy), "NHWC"), [7, 9], [2, 3, 5, 4], -1.0, -1.0,
                                           dev(nhwc(zeros(x.shape, name)), "NHWC"))
        np.testing.assert_array_equal(nchw(host(gi)), nearest_backward_model(dy, x.shape))
        ulp_close(nchw(host(gi)), xt.grad.numpy(), name)


def test_nearest_empty_and_scale_rule():
    out = ops.UpsampleNearest2dV2(np.zeros((0, 2, 3, 3), F32), [6, 6], 2.0, 2.0, np.zeros((0, 2, 6, 6), F32))
    assert out.shape == (0, 2, 6, 6)
    # the V2's scale is 1 / scale in fp32, not the sizes' ratio: 5 -> 7 with scale 1.3 reads floor(i / 1.3)
    x = np.arange(5, dtype=F32).reshape(1, 1, 1, 5)
    got = ops.UpsampleNearest2dV2(x, [1, 7], 1.0, 1.3, np.zeros((1, 1, 1, 7), F32))
    np.testing.assert_array_equal(got[0, 0, 0], src_index(7, 5, F32(1) / F32(1.3)))
    np.testing.assert_array_equal(got[0, 0, 0], [0, 0, 1, 2, 3, 3, 4])
    # scales that do not match the sizes: the index clamps at in - 1 (5 -> 7 with scale 0.5 reads min(2 i, 4))
    got = ops.UpsampleNearest2dV2(x, [1, 7], 1.0, 0.5, np.zeros((1, 1, 1, 7), F32))
    np.testing.assert_array_equal(got[0, 0, 0], [0, 2, 4, 4, 4, 4, 4])


X4 = np.ones((1, 2, 3, 4), F32)
O4 = np.zeros((1, 2, 6, 8), F32)


@pytest.mark.parametrize("args,code,text", [
    ((X4.astype(np.int32), [6, 8], -1.0, -1.0, O4.astype(np.int32)), INVALID, "Tensor self not implemented for INT32"),
    ((X4, [6, 8], -1.0, -1.0, O4.astype(np.float16)), INVALID, "Tensor self expected dtype is FLOAT16 but found FLOAT."),
    ((X4, [6, 8, 1], -1.0, -1.0, O4), INVALID, "It is expected output size equals to 2, but got size 3."),
    ((X4[0], [6, 8], -1.0, -1.0, O4[0]), INVALID, "It is expected input size equals to 4, but got size 3."),
    ((X4, [6, 8], -1.0, -1.0, np.zeros((1, 3, 6, 8), F32)), INVALID,
     "The selfDimN[1]/outDimN[1] or selfDimC[2]/outDimC[3] not equal ."),
    ((X4, [6, 8], -1.0, -1.0, np.zeros((1, 2, 6, 7), F32)), INVALID,
     "Expected output size (H: 6, W: 8), but got output tensor size (H: 6, W: 7)."),
    ((None, [6, 8], -1.0, -1.0, O4), NULLPTR, "self"),
])
def test_nearest_v2_validation(args, code, text):
    got, msg = error_of(ops.UpsampleNearest2dV2, *args)
    assert got == code and text in msg, msg


def test_nearest_old_and_backward_validation():
    code, msg = error_of(ops.UpsampleNearest2d, dev(X4, "NC1HWC0"), [6, 8], dev(O4, "NC1HWC0"))
    assert code == INVALID and "Do not support this format [" in msg, msg
    code, msg = error_of(ops.UpsampleNearest2d, X4, None, O4)
    assert code == NULLPTR and "outputSize" in msg
    f = ops.UpsampleNearest2dBackward
    code, msg = error_of(f, O4, [6, 8], [1, 2, 3], -1.0, -1.0, X4)
    assert code == INVALID and "It is expected input_size equals to 4, but got size 3" in msg, msg
    code, msg = error_of(f, O4, [6, 9], [1, 2, 3, 4], -1.0, -1.0, X4)
    assert code == INVALID and "Expected grad_output to have the same shape as output; output.size(3) = 9 but got " \
                               "grad_output.size(3) = 8" in msg, msg
    code, msg = error_of(f, O4, [6, 8], [1, 2, 3, 4], -1.0, -1.0, np.zeros((1, 2, 3, 5), F32))
    assert code == INVALID and "The out tensor's shape[" in msg and "is not equal with inferOut shape[" in msg, msg
    code, msg = error_of(f, O4.astype(np.float64), [6, 8], [1, 2, 3, 4], -1.0, -1.0, X4.astype(np.float64))
    assert code == INVALID and "Tensor gradOut not implemented for DOUBLE" in msg


# ---- bilinear ---------------------------------------------------------------------------------------------

def bl_scale(align, scale, n_in, n_out, back=False):
    if not align:
        return axis_scale(scale, n_in, n_out)
    if n_out > 1:
        return F32(n_in - 1) / F32(n_out - 1)
    return F32(0) if back else F32(n_in) / F32(n_out)


def bl_taps(align, s, n_out, n_in):
    d = np.arange(n_out, dtype=F32)
    src = d * s if align else (d + F32(0.5)) * s - F32(0.5)
    src = np.maximum(src, F32(0))
    lo = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    hi = np.minimum(np.ceil(src).astype(np.int64), n_in - 1)
    return lo, hi, (src - np.floor(src)).astype(F32)


def bilinear_model(x, oh, ow, align, sh=0.0, sw=0.0):
    """The SIMT kernel's fp32 steps (x [N, C, H, W])."""
    h, w = x.shape[2:]
    if (h, w) == (oh, ow):
        return x.copy()
    if (h, w) == (1, 1) or (oh, ow) == (1, 1):
        return np.broadcast_to(x[:, :, :1, :1], x.shape[:2] + (oh, ow)).copy()
    h0, h1, ly = bl_taps(align, bl_scale(align, sh, h, oh), oh, h)
    w0, w1, lx = bl_taps(align, bl_scale(align, sw, w, ow), ow, w)
    xf = x.astype(F32)
    g = lambda r, q: xf[:, :, r][:, :, :, q]                       # noqa: E731
    lx, ly = lx[None, None, None, :], ly[None, None, :, None]
    one = F32(1)
    top = (one - lx) * g(h0, w0) + lx * g(h0, w1)
    bottom = (one - lx) * g(h1, w0) + lx * g(h1, w1)
    return ((one - ly) * top + ly * bottom).astype(x.dtype)


# name: input shape, output size, align_corners, scales (None: from the sizes)
BILINEAR_CASES = {
    "x2": ((2, 3, 5, 7), None, False, (2.0, 2.0)),
    "x2-align": ((1, 2, 5, 7), None, True, (2.0, 2.0)),
    "size": ((2, 2, 6, 5), (11, 9), False, None),
    "size-align": ((1, 3, 6, 5), (11, 9), True, None),
    "down": ((1, 2, 9, 8), (4, 5), False, None),
    "x1.7": ((1, 2, 4, 6), None, False, (1.7, 1.3)),
}


@pytest.mark.parametrize("case", list(BILINEAR_CASES))
def test_bilinear_matches_torch_and_backward(case):
    shape, size, align, sc = BILINEAR_CASES[case]
    x = RNG.standard_normal(shape).astype(F32)
    xt = torch.from_numpy(f64(x)).requires_grad_()
    y = F.interpolate(xt, size=size, scale_factor=sc, mode="bilinear", align_corners=align)
    oh, ow = y.shape[2:]
    sh, sw = sc if sc else (0.0, 0.0)
    out = ops.UpsampleBilinear2d(strided(x), [oh, ow], align, sh, sw, zeros(y.shape, "float32"))
    np.testing.assert_array_equal(out, bilinear_model(x, oh, ow, align, sh, sw))
    assert np.abs(f64(out) - y.detach().numpy()).max() <= 2.0 ** -20 * np.abs(x).max()     # fp32 coordinates
    dy = RNG.standard_normal(y.shape).astype(F32)
    y.backward(torch.from_numpy(f64(dy)))
    gi = ops.UpsampleBilinear2dBackwardV2(strided(dy), [oh, ow], list(shape), align, sh, sw, zeros(shape, "float32"))
    mass = F.interpolate(torch.ones(1, 1, oh, ow, dtype=torch.float64), size=shape[2:], mode="area").numpy() * \
        (oh * ow) / (shape[2] * shape[3])                           # terms per input element, about
    bound = 2.0 ** -22 * np.abs(dy).max() * np.maximum(mass, 1) * 4
    assert (np.abs(f64(gi) - xt.grad.numpy()) <= bound).all()


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_bilinear_half_dtypes_nhwc(name):
    x = R.cast(RNG.standard_normal((1, 3, 4, 5)), name)
    want = bilinear_model(x, 7, 9, False)
    np.testing.assert_array_equal(ops.UpsampleBilinear2d(x, [7, 9], False, 0.0, 0.0, zeros(want.shape, name)), want)
    got = ops.UpsampleBilinear2d(dev(nhwc(x), "NHWC"), [7, 9], False, 0.0, 0.0, dev(nhwc(zeros(want.shape, name)), "NHWC"))
    np.testing.assert_array_equal(nchw(host(got)), want)
    dy = R.cast(RNG.standard_normal(want.shape), name)
    xt = torch.zeros(x.shape, dtype=torch.float64, requires_grad=True)
    F.interpolate(xt, size=(7, 9), mode="bilinear").backward(torch.from_numpy(f64(dy)))
    gi = ops.UpsampleBilinear2dBackwardV2(dy, [7, 9], list(x.shape), False, 0.0, 0.0, zeros(x.shape, name))
    ulp_close(gi, xt.grad.numpy(), name, ulps=2)


def test_bilinear_double_nhwc_and_one_pixel_scenes():
    x = RNG.standard_normal((1, 2, 3, 4))
    y = F.interpolate(torch.from_numpy(x), size=(5, 7), mode="bilinear").numpy()
    got = ops.UpsampleBilinear2d(dev(nhwc(x), "NHWC"), [5, 7], False, 0.0, 0.0, dev(nhwc(np.zeros(y.shape)), "NHWC"))
    np.testing.assert_allclose(nchw(host(got)), y, rtol=0, atol=2.0 ** -20 * np.abs(x).max())   # fp32 coordinates
    # a 1 x 1 output takes input (0, 0) (the kernel's OUTPUT_ONE scene; torch CPU interpolates the centre)
    x = RNG.standard_normal((1, 2, 4, 4)).astype(F32)
    np.testing.assert_array_equal(ops.UpsampleBilinear2d(x, [1, 1], False, 0.0, 0.0, np.zeros((1, 2, 1, 1), F32)),
                                  x[:, :, :1, :1])
    out = ops.UpsampleBilinear2d(np.zeros((0, 2, 3, 3), F32), [6, 6], False, 0.0, 0.0, np.zeros((0, 2, 6, 6), F32))
    assert out.shape == (0, 2, 6, 6)


def test_bilinear_validation():
    f = ops.UpsampleBilinear2d
    code, msg = error_of(f, X4.astype(np.float64), [6, 8], False, 0.0, 0.0, O4.astype(np.float64))
    assert code == INVALID and "When dtype is DOUBLE, only support NHWC format" in msg, msg
    code, msg = error_of(f, X4, [6, 8], False, -1.0, 0.0, O4)
    assert code == INVALID and "w scales and h scales cannot be negative" in msg, msg
    code, msg = error_of(f, X4, None, False, 0.0, 0.0, O4)
    assert code == INVALID and "outputSize must not be null." in msg, msg
    code, msg = error_of(f, X4, [6, 9], False, 0.0, 0.0, O4)
    assert code == INVALID and "Expected output size (H: 6, W: 9), but got output tensor size (H: 6, W: 8)." in msg
    code, msg = error_of(f, None, [6, 8], False, 0.0, 0.0, O4)
    assert code == 561103, msg                                      # CHECK_RET(CheckNotNull, ACLNN_ERR_INNER_NULLPTR)
    code, msg = error_of(f, X4, [6, 8], False, 0.0, 0.0, dev(O4, "NHWC"))
    assert code == INVALID and "Format of input and output should be equal" in msg, msg
    g = ops.UpsampleBilinear2dBackwardV2
    code, msg = error_of(g, O4, [6, 8], [1, 2, 3], False, 0.0, 0.0, X4)
    assert code == INVALID and "It is expected input_size equals to 4, but got size 3" in msg, msg
    code, msg = error_of(g, O4.astype(np.int32), [6, 8], [1, 2, 3, 4], False, 0.0, 0.0, X4.astype(np.int32))
    assert code == INVALID and "Tensor gradOut not implemented for INT32" in msg, msg
    code, msg = error_of(g, O4, [6, 8], [1, 2, 3, 4], False, 0.0, 0.0, X4.astype(np.float16))
    assert code == INVALID and "Tensor out expected dtype is FLOAT but found FLOAT16." in msg, msg
    code, msg = error_of(g, O4, [6, 7], [1, 2, 3, 4], False, 0.0, 0.0, X4)
    assert code == INVALID and "Expected gradOutput to have the same shape as output" in msg, msg


# ---- 1-D linear, 3-D trilinear and nearest (resize.toml) -------------------------------------------------------

# name: mode, input shape, output size, align_corners, scales (None: from the sizes)
RESIZE_CASES = {
    "linear-up": ("linear", (2, 3, 5), (9,), False, None),
    "linear-down-align": ("linear", (1, 2, 9), (4,), True, None),
    "linear-x1.7": ("linear", (2, 2, 6), None, False, (1.7,)),
    "trilinear-size": ("trilinear", (1, 2, 3, 4, 5), (5, 6, 9), False, None),
    "trilinear-align": ("trilinear", (2, 1, 4, 3, 5), (6, 2, 7), True, None),
    "trilinear-scales": ("trilinear", (1, 2, 3, 4, 5), None, False, (2.0, 1.5, 1.3)),
    "nearest3d-size": ("nearest", (1, 2, 3, 4, 5), (7, 6, 9), None, None),
    "nearest3d-down": ("nearest", (2, 1, 6, 5, 4), (2, 3, 3), None, None),
    "nearest3d-scales": ("nearest", (1, 2, 3, 4, 5), None, None, (2.0, 1.5, 1.3)),
}


def resize_calls(mode, x, size, align, sc, dy_dtype="float32"):
    """(forward, backward) of the case's operators on x (host arrays)."""
    shape, d = list(x.shape), x.ndim - 2
    def fwd(osz):
        o = zeros(tuple(shape[:2]) + tuple(osz), dy_dtype)
        if mode == "linear":
            return ops.UpsampleLinear1d(strided(x), list(osz), align, sc[0] if sc else -1.0, o)
        if mode == "trilinear":
            return ops.UpsampleTrilinear3d(strided(x), list(osz), align, *(sc or (0.0,) * 3), o)
        return ops.UpsampleNearest3d(strided(x), list(osz), *(sc or (0.0,) * 3), o)
    def bwd(dy, osz):
        gi = zeros(tuple(shape), dy_dtype)
        if mode == "linear":
            return ops.UpsampleLinear1dBackward(strided(dy), list(osz), shape, align, sc[0] if sc else 0.0, gi)
        if mode == "trilinear":
            return ops.UpsampleTrilinear3dBackward(strided(dy), list(osz), shape, align, *(sc or (0.0,) * 3), gi)
        return ops.UpsampleNearest3dBackward(strided(dy), list(osz), shape, *(sc or (0.0,) * 3), gi)
    assert d in (1, 3)
    return fwd, bwd


@pytest.mark.parametrize("case", list(RESIZE_CASES))
def test_resize_matches_torch_and_backward(case):
    mode, shape, size, align, sc = RESIZE_CASES[case]
    x = RNG.standard_normal(shape).astype(F32)
    xt = torch.from_numpy(f64(x)).requires_grad_()
    kw = {} if mode == "nearest" else {"align_corners": align}
    y = F.interpolate(xt, size=size, scale_factor=sc, mode=mode, **kw)
    fwd, bwd = resize_calls(mode, x, size, align, sc)
    osz = y.shape[2:]
    out = fwd(osz)
    if mode == "nearest":
        np.testing.assert_array_equal(out, y.detach().numpy().astype(F32))
    else:
        assert np.abs(f64(out) - y.detach().numpy()).max() <= 2.0 ** -18 * np.abs(x).max()   # fp32 coordinates
    dy = RNG.standard_normal(y.shape).astype(F32)
    y.backward(torch.from_numpy(f64(dy)))
    mag = F.interpolate(torch.ones((1, 1) + tuple(osz), dtype=torch.float64), size=shape[2:], mode="area").numpy() * \
        np.prod(osz) / np.prod(shape[2:])                          # terms per input element, about
    bound = 2.0 ** -21 * np.abs(dy).max() * np.maximum(mag, 1) * 8
    assert (np.abs(f64(bwd(dy, osz)) - xt.grad.numpy()) <= bound).all()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float64"])
def test_resize_dtypes(name):
    for mode, shape, osz in (("linear", (1, 2, 4), (7,)), ("trilinear", (1, 2, 2, 3, 2), (3, 5, 4)),
                             ("nearest", (1, 2, 2, 3, 2), (3, 5, 4))):
        if name == "float64" and mode != "nearest":
            continue                                                # FLOAT16 FLOAT BF16 only on Ascend 950
        x = R.cast(RNG.standard_normal(shape), name)
        xt = torch.from_numpy(f64(x)).requires_grad_()
        y = F.interpolate(xt, size=osz, mode=mode)
        fwd, bwd = resize_calls(mode, x, osz, False, None, name)
        dy = R.cast(RNG.standard_normal(y.shape), name)
        y.backward(torch.from_numpy(f64(dy)))
        if mode == "nearest":
            np.testing.assert_array_equal(fwd(osz), R.cast(y.detach().numpy(), name))
        else:
            ulp_close(fwd(osz), y.detach().numpy(), name, ulps=1)
        if mode == "linear" or name != "float64":
            ulp_close(bwd(dy, osz), xt.grad.numpy(), name, ulps=2)


def test_resize_empty_and_validation():
    assert ops.UpsampleNearest3d(np.zeros((0, 2, 2, 2, 2), F32), [4, 4, 4], 0.0, 0.0, 0.0,
                                 np.zeros((0, 2, 4, 4, 4), F32)).shape == (0, 2, 4, 4, 4)
    x3, x5 = np.ones((1, 2, 4), F32), np.ones((1, 2, 3, 4, 5), F32)
    cases = [
        (ops.UpsampleLinear1d, (x3, [8, 1], False, -1.0, np.zeros((1, 2, 8), F32)),
         "It is expected outputSize equals to 1, but got size 2"),
        (ops.UpsampleLinear1d, (x3[0], [8], False, -1.0, np.zeros((2, 8), F32)),
         "Expected 3 dimension input, but got self with sizes [2, 4]."),
        (ops.UpsampleLinear1d, (x3, [8], False, -1.0, np.zeros((1, 2, 7), F32)),
         "Expected out to have shapesize(2) = 8 but got out.size(2) = 7"),
        (ops.UpsampleLinear1d, (x3.astype(np.float64), [8], False, -1.0, np.zeros((1, 2, 8))),
         "Tensor self not implemented for DOUBLE"),
        (ops.UpsampleLinear1dBackward, (np.zeros((1, 2, 8), F32), [8], [1, 2], False, 0.0, x3),
         "It is expected input_size equals to 3, but got size 2"),
        (ops.UpsampleLinear1dBackward, (np.zeros((1, 2, 7), F32), [8], [1, 2, 4], False, 0.0, x3),
         "Expected grad_output to have the same shape as output; output.size(2) = 8 but got grad_output.size(2) = 7"),
        (ops.UpsampleTrilinear3d, (x5, [6, 8], False, 0.0, 0.0, 0.0, np.zeros((1, 2, 6, 8, 10), F32)),
         "It is expected output_size equals to 3, but got size 2"),
        (ops.UpsampleTrilinear3d, (x5, [6, 8, 0], False, 0.0, 0.0, 0.0, np.zeros((1, 2, 6, 8, 0), F32)),
         "Input and output sizes should greater than 0, but got input (D: 3, H: 4, W: 5) output (D: 6, H: 8, W: 0)"),
        (ops.UpsampleTrilinear3d, (x5, [6, 8, 10], False, 0.0, 0.0, 0.0, np.zeros((1, 2, 6, 8, 9), F32)),
         "Expected tensor for out to have same size as [1, 2, 6, 8, 10], but got [1, 2, 6, 8, 9]."),
        (ops.UpsampleNearest3d, (x5.astype(np.int32), [6, 8, 10], 0.0, 0.0, 0.0, np.zeros((1, 2, 6, 8, 10), np.int32)),
         "Tensor self not implemented for INT32"),
        (ops.UpsampleNearest3dBackward, (np.zeros((1, 2, 6, 8, 10), F32), [6, 8, 10], [1, 2, 3, 4, 5], 0.0, 0.0, 0.0,
                                         np.zeros((1, 2, 3, 4, 5), np.float16)),
         "Tensor gradOut expected dtype is FLOAT16 but found FLOAT."),
        (ops.UpsampleTrilinear3dBackward, (np.zeros((1, 2, 6, 8, 10), F32), [6, 8, 10], [1, 2, 3, 4, 5], False, 0.0,
                                           0.0, 0.0, np.zeros((1, 2, 3, 4, 6), F32)),
         "Expected tensor for gradInput to have same size as [1, 2, 3, 4, 5], but got [1, 2, 3, 4, 6]."),
    ]
    for fn, args, text in cases:
        code, msg = error_of(fn, *args)
        assert code == INVALID and text in msg, (fn, msg)
    code, msg = error_of(ops.UpsampleNearest3d, x5, None, 0.0, 0.0, 0.0, np.zeros((1, 2, 6, 8, 10), F32))
    assert code == NULLPTR and "outputSize" in msg, msg


# ---- dtype lists per SoC (Atlas A2 in one child) ------------------------------------------------------------

CANDS = ["float32", "float16", "bfloat16", "float64", "uint8", "int32"]


def _calls(d):
    x, o = ["t", d, [1, 2, 3, 4]], ["t", d, [1, 2, 6, 8]]
    return [("UpsampleNearest2d", [x, [6, 8], o]),
            ("UpsampleNearest2dV2", [x, [6, 8], 2.0, 2.0, o]),
            ("UpsampleNearest2dBackward", [o, [6, 8], [1, 2, 3, 4], 2.0, 2.0, x]),
            ("UpsampleBilinear2d", [x, [6, 8], False, 2.0, 2.0, o]),
            ("UpsampleBilinear2dBackwardV2", [o, [6, 8], [1, 2, 3, 4], False, 2.0, 2.0, x])]


def _resize_calls(d):
    x3, o3 = ["t", d, [1, 2, 3]], ["t", d, [1, 2, 6]]
    x5, o5 = ["t", d, [1, 2, 2, 2, 3]], ["t", d, [1, 2, 4, 4, 6]]
    return [("UpsampleLinear1d", [x3, [6], False, -1.0, o3]),
            ("UpsampleLinear1dBackward", [o3, [6], [1, 2, 3], False, 0.0, x3]),
            ("UpsampleTrilinear3d", [x5, [4, 4, 6], False, 0.0, 0.0, 0.0, o5]),
            ("UpsampleTrilinear3dBackward", [o5, [4, 4, 6], [1, 2, 2, 2, 3], False, 0.0, 0.0, 0.0, x5]),
            ("UpsampleNearest3d", [x5, [4, 4, 6], 0.0, 0.0, 0.0, o5]),
            ("UpsampleNearest3dBackward", [o5, [4, 4, 6], [1, 2, 2, 2, 3], 0.0, 0.0, 0.0, x5])]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    nearest, back = ["float32", "float16", "bfloat16", "float64", "uint8"], ["float32", "float16", "bfloat16"]
    # DOUBLE bilinear: NHWC only (ND / NCHW refused by the format check)
    three = ["float32", "float16", "bfloat16", "float64"]
    ok = {"UpsampleNearest2d": nearest, "UpsampleNearest2dV2": nearest, "UpsampleNearest2dBackward": back,
          "UpsampleBilinear2d": back, "UpsampleBilinear2dBackwardV2": back, "UpsampleLinear1d": back,
          "UpsampleLinear1dBackward": back, "UpsampleTrilinear3d": three if soc == A2 else back,
          "UpsampleTrilinear3dBackward": three, "UpsampleNearest3d": three if soc == A2 else nearest,
          "UpsampleNearest3dBackward": three}
    every = lambda d: _calls(d) + _resize_calls(d)                  # noqa: E731
    calls = [c for d in CANDS for c in every(d)]
    want = [0 if d in ok[c[0]] else INVALID for d in CANDS for c in every(d)]
    if soc == A2:
        got, extra = status_codes(calls, soc, extra=_A2_SCALES)
        assert extra["x2"] and extra["x1.5"], extra
    else:
        got = status_codes(calls, soc)
    assert [(c[0], c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w] == []


# Atlas A2's V2 scale rule (computeScale): a doubled axis of a small plane reads floor(i * 0.5); others 1 / scale
_A2_SCALES = """
x = np.arange(20, dtype=np.float32).reshape(1, 1, 4, 5)
y = ops.UpsampleNearest2dV2(x, [8, 10], 2.0, 2.0, np.zeros((1, 1, 8, 10), np.float32))
EXTRA["x2"] = bool((y == x.repeat(2, 2).repeat(2, 3)).all())
y = ops.UpsampleNearest2dV2(x, [6, 7], 1.5, 1.5, np.zeros((1, 1, 6, 7), np.float32))
r = np.minimum(np.floor(np.arange(6, dtype=np.float32) * np.float32(1 / 1.5)).astype(int), 3)
c = np.minimum(np.floor(np.arange(7, dtype=np.float32) * np.float32(1 / 1.5)).astype(int), 4)
EXTRA["x1.5"] = bool((y == x[:, :, r][:, :, :, c]).all())
"""


# ---- torch_npu ----------------------------------------------------------------------------------------------

_BODY = """
import torch.nn.functional as F
calls = {
    "nearest-x2": lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
    "nearest-size": lambda x: F.interpolate(x, size=(11, 6), mode="nearest"),
    "upsample-module": lambda x: torch.nn.Upsample(scale_factor=(1.5, 2))(x),
    "bilinear-x2": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "bilinear-size-align": lambda x: F.interpolate(x, size=(11, 6), mode="bilinear", align_corners=True),
    "bilinear-down": lambda x: F.interpolate(x, size=(3, 5), mode="bilinear"),
}
x = torch.linspace(-2, 3, 2 * 3 * 5 * 7).reshape(2, 3, 5, 7).sin()
"""
_BODY += FWD_BWD_LOOP

TORCH_CALLS = ["nearest-x2", "nearest-size", "upsample-module", "bilinear-x2", "bilinear-size-align", "bilinear-down"]

# torch.grid_sampler_2d (tests/test_grid_sampler.py's operators) in the same child
_BODY += """
cases = {
    "grid-bilinear-zeros": (0, 0, False), "grid-bilinear-border-align": (0, 1, True),
    "grid-nearest-reflection": (1, 2, False), "grid-bicubic-border": (2, 1, False),
}
x = torch.linspace(-2, 3, 2 * 3 * 5 * 6).reshape(2, 3, 5, 6).sin()
g = torch.linspace(-1.2, 1.2, 2 * 4 * 3 * 2).reshape(2, 4, 3, 2).cos() * 1.1
for name, (im, pm, al) in cases.items():
    res = {}
    try:
        for dev in ("cpu", "npu"):
            xd, gd = x.detach().to(dev).requires_grad_(), g.detach().to(dev).requires_grad_()
            y = torch.grid_sampler_2d(xd, gd, im, pm, al)
            y.backward(torch.linspace(-1, 1, y.numel()).reshape(y.shape).to(dev))
            res[dev] = [enc(to_np(y)), enc(to_np(xd.grad)), enc(to_np(gd.grad))]
        OUT[name] = res
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""
# F.interpolate on 3-D and 5-D inputs (resize.toml's operators) in the same child
_BODY += """
calls = {
    "linear-x2": lambda x: F.interpolate(x, scale_factor=2, mode="linear"),
    "linear-size-align": lambda x: F.interpolate(x, size=11, mode="linear", align_corners=True),
}
x = torch.linspace(-2, 3, 2 * 3 * 7).reshape(2, 3, 7).sin()
""" + FWD_BWD_LOOP + """
calls = {
    "trilinear-size": lambda x: F.interpolate(x, size=(4, 5, 7), mode="trilinear"),
    "trilinear-x2-align": lambda x: F.interpolate(x, scale_factor=2, mode="trilinear", align_corners=True),
    "nearest3d-size": lambda x: F.interpolate(x, size=(4, 5, 7), mode="nearest"),
}
x = torch.linspace(-2, 3, 2 * 2 * 3 * 4 * 5).reshape(2, 2, 3, 4, 5).sin()
""" + FWD_BWD_LOOP
TORCH_CALLS += ["linear-x2", "linear-size-align", "trilinear-size", "trilinear-x2-align", "nearest3d-size"]
TORCH_CALLS += ["grid-bilinear-zeros", "grid-bilinear-border-align", "grid-nearest-reflection", "grid-bicubic-border"]


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", TORCH_CALLS)
def test_torch_npu_interpolate_matches_cpu(on_npu, call):
    assert_npu_matches_cpu(on_npu[call], 1e-5)
