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
from _cnn_ops import A2, INVALID, NULLPTR, dec, error_of, f64, status_codes, torch_npu_run, zeros
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
