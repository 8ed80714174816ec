"""The pooling family (native_stubs/src/ops/pool/max_pool.toml, avg_pool.toml) against torch CPU in float64 on
the same inputs: max pooling with indices (values and indices exact, NaN as torch) and its backward, the mask
forms of Atlas A2/A3 (in a child process on that SoC), average pooling (ceilMode, countIncludePad,
divisorOverride), adaptive average and adaptive max pooling, 3-D average and max pooling with their backwards; every dtype of the vendor's lists per SoC,
3-D inputs, strided views, empty batches, the validation codes and messages; and torch_npu's pooling layers on
the emulator against torch CPU.

Max pooling is exact (class a); the backwards and the averages are float64 sums rounded once (class c: within one
ulp of the float64 reference). Adding a configuration adds a row to MAX_CASES / AVG_CASES."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, FWD_BWD_LOOP, INVALID, NULLPTR, dec, error_of, f64, status_codes, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(2830)


def close(got, want64, name):
    want = R.cast(f64(want64).astype(np.float32), name).astype(np.float64)
    got = f64(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
    assert (np.abs(got - want) <= ulp).all(), np.abs(got - want).max()


def t64(a):
    return torch.from_numpy(f64(a))


# ---- max pooling ----------------------------------------------------------------------------------------

# name: shape, kernel, stride, padding, dilation, ceilMode
MAX_CASES = {
    "3x3-s2-p1": ((2, 3, 7, 6), [3, 3], [2, 2], [1, 1], [1, 1], False),
    "2x2-ceil": ((1, 2, 5, 7), [2], [], [0], [1], True),
    "dilated": ((1, 2, 9, 8), [3, 2], [1, 2], [1, 1], [2, 1], False),
    "3d-input": ((3, 6, 6), [2, 3], [2, 1], [1, 1], [1, 1], True),
}


def max_ref(case, x):
    shape, k, st, pad, dil, ceil = MAX_CASES[case]
    xt = t64(x).requires_grad_()
    y, idx = F.max_pool2d(xt, k, st or None, pad, dil, ceil_mode=ceil, return_indices=True)
    return xt, y, idx


def run_max(case, x, name, idx_dtype="int32", xin=None):
    shape, k, st, pad, dil, ceil = MAX_CASES[case]
    _, y, _ = max_ref(case, np.zeros(shape))
    return ops.MaxPool2dWithIndices(x if xin is None else xin, k, st, pad, dil, ceil, zeros(y.shape, name),
                                    zeros(y.shape, idx_dtype))


@pytest.mark.parametrize("case,name", [(c, "float32") for c in MAX_CASES] + [("3x3-s2-p1", "float16"),
                                                                              ("dilated", "bfloat16")])
def test_max_pool_and_backward(case, name):
    shape = MAX_CASES[case][0]
    x = R.cast(RNG.standard_normal(shape), name)
    xt, y, idx = max_ref(case, x)
    out, ind = run_max(case, x, name)
    np.testing.assert_array_equal(f64(out), y.detach().numpy())
    np.testing.assert_array_equal(ind, idx.numpy())
    dy = R.cast(RNG.standard_normal(y.shape), name)
    y.backward(t64(dy))
    shape_, k, st, pad, dil, ceil = MAX_CASES[case]
    gi = ops.MaxPool2dWithIndicesBackward(dy, x, ind, k, st, pad, dil, ceil, zeros(shape, name))
    close(gi, xt.grad.numpy(), name)


def test_max_pool_nan_int64_indices_and_strided():
    x = RNG.standard_normal((1, 1, 4, 4)).astype(np.float32)
    x[0, 0, 0, 1] = x[0, 0, 1, 0] = np.nan
    out, ind = ops.MaxPool2dWithIndices(strided(x, transpose=True), [2, 2], [2, 2], [0, 0], [1, 1], False,
                                        np.zeros((1, 1, 2, 2), np.float32), np.zeros((1, 1, 2, 2), np.int64))
    want, widx = F.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    assert np.isnan(out[0, 0, 0, 0]) and ind[0, 0, 0, 0] == widx[0, 0, 0, 0] == 4    # the last NaN, as torch CPU
    np.testing.assert_array_equal(ind, widx.numpy())
    out, ind = ops.MaxPool2dWithIndices(np.zeros((0, 2, 4, 4), np.float32), [2], [], [0], [1], False,
                                        np.zeros((0, 2, 2, 2), np.float32), np.zeros((0, 2, 2, 2), np.int32))
    assert out.shape == (0, 2, 2, 2)


X4 = np.ones((1, 2, 6, 6), np.float32)
O3 = np.zeros((1, 2, 3, 3), np.float32)
I3 = np.zeros((1, 2, 3, 3), np.int32)


@pytest.mark.parametrize("args,code,text", [
    ((X4.astype(np.float64), [2], [2], [0], [1], False, O3.astype(np.float64), I3), INVALID,
     "Tensor self not implemented for DOUBLE"),
    ((X4, [2], [2], [0], [1], False, O3.astype(np.float16), I3), INVALID,
     "Expected both tensors to have same dtype, but found self FLOAT and out FLOAT16."),
    ((X4, [2], [2], [0], [1], False, O3, I3.astype(np.int16)), INVALID, "Tensor indices not implemented for INT16"),
    ((X4, [2, 2, 2], [2], [0], [1], False, O3, I3), INVALID, "The size of kernelSize must be one or two, but got 3."),
    ((X4, [2], [0], [0], [1], False, O3, I3), INVALID, "The size of stride should be greater than 0, but got dh:0, dw:0"),
    ((X4, [2], [2], [2], [1], False, O3, I3), INVALID, "pad should be >= 0 and <= half of kernel size, but got kh:2, "
     "kw:2, padH:2, padW:2"),
    ((X4, [2], [2], [0], [0], False, O3, I3), INVALID, "dilation should be greater than 0, but got dilationH:0, "
     "dilationW:0"),
    ((X4, [2], [2], [0], [1], False, np.zeros((1, 2, 3, 2), np.float32), I3), INVALID,
     "Expected tensor for out to have same size as [1, 2, 3, 3], but got [1, 2, 3, 2]."),
    ((X4, [2], [2], [0], [1], False, O3, I3[..., :2]), INVALID, "Expected tensor for indices to have same size as tensor "
     "for out"),
    ((np.ones((1, 0, 6, 6), np.float32), [2], [2], [0], [1], False, O3, I3), INVALID,
     "Expected tensor with optional 0 dim batch size, but got nInputPlane:0, height:6, width:6"),
])
def test_max_pool_validation(args, code, text):
    got, msg = error_of(ops.MaxPool2dWithIndices, *args)
    assert got == code and text in msg, msg


def test_max_pool_backward_validation_and_nulls():
    f = ops.MaxPool2dWithIndicesBackward
    code, msg = error_of(f, O3, X4, I3, [2], [2], [0], [1], False, np.zeros((1, 2, 6, 5), np.float32))
    assert code == INVALID and "Expected tensor for gradInput to have same size as tensor for self" in msg
    code, msg = error_of(f, O3, X4, np.full_like(I3, 99), [2], [2], [0], [1], False, np.zeros_like(X4))
    assert code != 0 and "index 99 is out of bounds [0, 36)" in msg                   # a device fault
    assert error_of(f, None, X4, I3, [2], [2], [0], [1], False, np.zeros_like(X4))[0] == NULLPTR
    code, msg = error_of(ops.MaxPool2dWithMask, X4, [2], [2], [0], [1], False, O3, np.zeros((1, 2, 4, 64), np.int8))
    assert code == INVALID and "On the 950 chip, the aclnnMaxPool2dWithMaskGetWorkspaceSize interface has been " \
                               "deprecated" in msg


# ---- average pooling ------------------------------------------------------------------------------------

# name: shape, kernel, stride, padding, ceilMode, countIncludePad, divisorOverride
AVG_CASES = {
    "3x3-s2-p1": ((2, 3, 7, 6), [3, 3], [2, 2], [1, 1], False, True, 0),
    "exclude-pad-ceil": ((1, 2, 7, 7), [3, 2], [2, 2], [1, 1], True, False, 0),
    "divisor": ((1, 2, 5, 6), [2], [], [0], False, True, 3),
    "3d-input": ((3, 5, 6), [2, 3], [1], [1, 1], True, True, 0),
}


def avg_ref(case, x):
    shape, k, st, pad, ceil, cip, div = AVG_CASES[case]
    xt = t64(x).requires_grad_()
    y = F.avg_pool2d(xt, k, st or None, pad, ceil, cip, div or None)
    return xt, y


@pytest.mark.parametrize("case,name", [(c, "float32") for c in AVG_CASES] + [("3x3-s2-p1", "float16"),
                                                                              ("exclude-pad-ceil", "bfloat16")])
def test_avg_pool_and_backward(case, name):
    shape, k, st, pad, ceil, cip, div = AVG_CASES[case]
    x = R.cast(RNG.standard_normal(shape), name)
    xt, y = avg_ref(case, x)
    out = ops.AvgPool2d(x, k, st, pad, ceil, cip, div, 0, zeros(y.shape, name))
    close(out, y.detach().numpy(), name)
    dy = R.cast(RNG.standard_normal(y.shape), name)
    y.backward(t64(dy))
    gi = ops.AvgPool2dBackward(dy, x, k, st, pad, ceil, cip, div, 0, zeros(shape, name))
    close(gi, xt.grad.numpy(), name)


@pytest.mark.parametrize("shape,out", [((2, 3, 7, 6), (3, 4)), ((2, 5, 9), (1, 1)), ((1, 2, 4, 4), (4, 4)),
                                       ((1, 1, 5, 7), (2, 3))])
def test_adaptive_avg_pool_and_backward(shape, out):
    x = RNG.standard_normal(shape).astype(np.float32)
    xt = t64(x).requires_grad_()
    y = F.adaptive_avg_pool2d(xt, out)
    got = ops.AdaptiveAvgPool2d(strided(x), list(out), zeros(y.shape, "float32"))
    close(got, y.detach().numpy(), "float32")
    dy = RNG.standard_normal(y.shape).astype(np.float32)
    y.backward(t64(dy))
    close(ops.AdaptiveAvgPool2dBackward(dy, x, zeros(shape, "float32")), xt.grad.numpy(), "float32")


@pytest.mark.parametrize("args,text", [
    ((X4, [2], [2], [-1], False, True, 0, 0, O3), "Dim value of padding is negtive."),
    ((X4, [2], [2], [0, 0, 0], False, True, 0, 0, O3), "Expected length of padding is 1 or 2, but got 3."),
    ((X4, [2], [2], [2], False, True, 0, 0, O3), "value of paddingH should be at most half of kernelH. Actual: "
     "paddingH is [2],kernelH is [2]."),
    ((X4, [2], [2], [0], False, True, 0, 0, np.zeros((1, 2, 3, 4), np.float32)),
     "Expected tensor for out to have same size as [1, 2, 3, 3], but got [1, 2, 3, 4]."),
    ((X4, [2], [2], [0], False, True, 0, 7, O3), "The value of cubeMathType only support"),
    ((np.ones((2, 6, 6), np.float32), [2], [2], [0], False, True, 0, 0, O3),
     "self and out must maintain same format, support 3D or 4D."),
])
def test_avg_pool_validation(args, text):
    code, msg = error_of(ops.AvgPool2d, *args)
    assert code == INVALID and text in msg, msg


def test_avg_and_adaptive_backward_validation():
    code, msg = error_of(ops.AvgPool2dBackward, O3, X4, [2], [2], [0], False, True, 0, 0, X4.astype(np.float16))
    assert code == INVALID and "Dtype of gradOutput and gradInput should be equal, gradOutput [FLOAT], gradInput " \
                               "[FLOAT16]." in msg
    code, msg = error_of(ops.AvgPool2dBackward, O3, X4, [2], [2], [0], False, True, 0, 5, np.zeros_like(X4))
    assert code == INVALID and "value of cubeMathType" in msg
    code, msg = error_of(ops.AdaptiveAvgPool2d, X4, [3], O3)
    assert code == INVALID and "OutputSize length should be 2." in msg
    code, msg = error_of(ops.AdaptiveAvgPool2d, X4, [3, 2], O3)
    assert code == INVALID and "outputSize value should match the outputShape value and greater than 0." in msg
    code, msg = error_of(ops.AdaptiveAvgPool2dBackward, O3[0], X4, np.zeros_like(X4))
    assert code == INVALID and "DimNum of inputs should be equal, gradOutput [3], self [4]" in msg


# ---- dtype lists per SoC; the mask forms on Atlas A2 (one child) ------------------------------------------

_A2_MASK = """
rng = np.random.default_rng(5)
x = rng.standard_normal((2, 3, 7, 6)).astype(np.float32)
mw = ((4 * 3 + 15) // 16 + 1) * 32
out, mask = ops.MaxPool2dWithMask(x, [3, 3], [2, 2], [1, 1], [1, 1], False, np.zeros((2, 3, 4, 3), np.float32),
                                  np.zeros((2, 3, 9, mw), np.int8))
ref, idx = ops.MaxPool2dWithIndices(x, [3, 3], [2, 2], [1, 1], [1, 1], False, np.zeros((2, 3, 4, 3), np.float32),
                                    np.zeros((2, 3, 4, 3), np.int64))
dy = rng.standard_normal((2, 3, 4, 3)).astype(np.float32)
g1 = ops.MaxPool2dWithMaskBackward(dy, x, mask, [3, 3], [2, 2], [1, 1], [1, 1], False, np.zeros_like(x))
g2 = ops.MaxPool2dWithIndicesBackward(dy, x, idx.astype(np.int32), [3, 3], [2, 2], [1, 1], [1, 1], False,
                                      np.zeros_like(x))
EXTRA["same"] = bool((out == ref).all() and (g1 == g2).all() and int(mask.sum()) == 2 * 3 * 4 * 3)
"""

# ---- adaptive max pooling (adaptive_max.toml) -------------------------------------------------------------

@pytest.mark.parametrize("shape,out,name", [((2, 3, 7, 6), (3, 4), "float32"), ((2, 5, 9), (4, 2), "float32"),
                                            ((1, 2, 5, 5), (5, 5), "float16"), ((1, 2, 6, 7), (1, 1), "bfloat16"),
                                            ((1, 2, 6, 4), (4, 3), "float64")])
def test_adaptive_max_pool_and_backward(shape, out, name):
    x = R.cast(RNG.standard_normal(shape), name)
    x.reshape(-1)[3] = np.nan                                       # a NaN wins its windows (torch CPU)
    xt = torch.from_numpy(f64(x)).requires_grad_()
    y, idx = F.adaptive_max_pool2d(xt, out, return_indices=True)
    got, gidx = ops.AdaptiveMaxPool2d(strided(x), list(out), zeros(y.shape, name), np.zeros(y.shape, np.int64))
    np.testing.assert_array_equal(f64(got), y.detach().numpy())
    np.testing.assert_array_equal(gidx, idx.numpy())
    if name == "float64":
        return                                                      # the backward's list: FLOAT16 FLOAT BF16
    dy = R.cast(RNG.standard_normal(y.shape), name)
    y.backward(torch.from_numpy(f64(dy)))
    gi = ops.AdaptiveMaxPool2dBackward(strided(dy), x, gidx.astype(np.int32), zeros(x.shape, name))
    close(gi, xt.grad.numpy(), name)


def test_adaptive_max_pool_validation():
    x, o, i = np.ones((1, 2, 6, 6), np.float32), np.zeros((1, 2, 3, 3), np.float32), np.zeros((1, 2, 3, 3), np.int64)
    f, g = ops.AdaptiveMaxPool2d, ops.AdaptiveMaxPool2dBackward
    for args, text in [((x, [3, 3], o, i.astype(np.int32)), "Tensor indicesOut expected dtype is INT64 but found INT32."),
                       ((x[0, 0], [3, 3], o[0, 0], i[0, 0]), "Self dims 2 should be in 3 or 4."),
                       ((x, [3, 3], o, i[..., :2]), "Expected tensor for outputOut to have same size as tensor for indicesOut"),
                       ((x[:, :, :0], [3, 3], o, i), "expected input to have non-empty spatiak dimensions"),
                       ((x, [3, 3, 1], o, i), "outputSize length should be 2, but now is 3."),
                       ((x, [3, 0], o, i), "outputSize value should greater than 0, but the sizes of 1 is 0."),
                       ((x, [3, 2], o, i), "Expected tensor for outputOut to have same size as [1, 2, 3, 2]"),
                       ((x.astype(np.int32), [3, 3], o.astype(np.int32), i), "Tensor self not implemented for INT32")]:
        code, msg = error_of(f, *args)
        assert code == INVALID and text in msg, msg
    for args, text in [((o, x, i, x.astype(np.float16)), "Expected both tensors to have same dtype"),
                       ((o.astype(np.float64), x.astype(np.float64), i, x.astype(np.float64)),
                        "Tensor self not implemented for DOUBLE"),
                       ((o, x, i.astype(np.int8), x), "Tensor indices not implemented for INT8"),
                       ((o, x, i[..., :2], x), "gradOutput dims No.[3] must match indices dims."),
                       ((o, x, i, x[..., :5]), "self dims No.[3] must match gradInput dims.")]:
        code, msg = error_of(g, *args)
        assert code == INVALID and text in msg, msg
    code, msg = error_of(g, None, x, i, x)
    assert code == NULLPTR and "gradOutput" in msg
    assert ops.AdaptiveMaxPool2d(x[:0], [3, 3], o[:0], i[:0])[0].shape == (0, 2, 3, 3)


# ---- 3-D average pooling (avg_pool3d.toml) ---------------------------------------------------------------

# name: self shape, kernel, stride, padding, ceilMode, countIncludePad, divisorOverride
AVG3_CASES = {
    "k2-p1": ((2, 3, 5, 6, 7), [2], [], [1], False, True, 0),
    "k322-s212-ceil-excl": ((3, 6, 5, 7), [3, 2, 2], [2, 1, 2], [1, 1, 0], True, False, 0),
    "k2-s2-div3": ((1, 2, 4, 4, 4), [2, 2, 2], [2, 2, 2], [0], False, True, 3),
}


@pytest.mark.parametrize("case,name", [(c, "float32") for c in AVG3_CASES] + [("k2-p1", "float16"),
                                                                            ("k322-s212-ceil-excl", "bfloat16")])
def test_avg_pool3d_and_backward(case, name):
    shape, k, st, pd, ceil, cip, div = AVG3_CASES[case]
    x = R.cast(RNG.standard_normal(shape), name)
    xt = torch.from_numpy(f64(x)).requires_grad_()
    y = F.avg_pool3d(xt, k if len(k) > 1 else k[0], st or None, pd if len(pd) > 1 else pd[0], ceil, cip, div or None)
    close(ops.AvgPool3d(strided(x), k, st, pd, ceil, cip, div, zeros(y.shape, name)), y.detach().numpy(), name)
    dy = R.cast(RNG.standard_normal(y.shape), name)
    y.backward(torch.from_numpy(f64(dy)))
    close(ops.AvgPool3dBackward(strided(dy), x, k, st, pd, ceil, cip, div, zeros(x.shape, name)), xt.grad.numpy(), name)


def test_avg_pool3d_validation():
    x, o = np.ones((1, 2, 4, 4, 4), np.float32), np.zeros((1, 2, 2, 2, 2), np.float32)
    f, g = ops.AvgPool3d, ops.AvgPool3dBackward
    for args, text in [((x, [2, 2], [], [0], False, True, 0, o), "Expected length of kernel is 1 or 3, but got 2."),
                       ((x, [2], [1, 1], [0], False, True, 0, o), "Expected length of stride is 0 or 1 or 3, but got: 2."),
                       ((x, [5], [], [0], False, True, 0, o), "kernel value(5) is invaild, must be (0, 4]."),
                       ((x, [2], [], [2], False, True, 0, o), "padding value(2) is invaild, must be [0, kernel/2]."),
                       ((x, [2], [], [0], False, True, 0, o[..., :1]),
                        "Expected tensor for out to have same size as [1, 2, 2, 2, 2], but got [1, 2, 2, 2, 1]."),
                       ((x[0, 0, 0], [2], [], [0], False, True, 0, o[0, 0, 0]),
                        "self and out must maintain same format, support 4D or 5D."),
                       ((x, [2], [], [0], False, True, 0, o.astype(np.float16)), "Expected both tensors to have same dtype"),
                       ((x.astype(np.float64), [2], [], [0], False, True, 0, o.astype(np.float64)),
                        "Tensor self not implemented for DOUBLE")]:
        code, msg = error_of(f, *args)
        assert code == INVALID and text in msg, msg
    for args, text in [((o, x, [2], [], [0], False, True, 0, x[..., :3]), "self dim [4] is [4] should be equal to out dim [3]"),
                       ((o, x, [2], [], [3], False, True, 0, x), "padding [0] data [3] should less than kernelSize / 2 [1]."),
                       ((o[..., :1], x, [2], [], [0], False, True, 0, x),
                        "Expected tensor for gradOutput to have same size as [1, 2, 2, 2, 2], but got [1, 2, 2, 2, 1]."),
                       ((o, x, [2, 2], [], [0], False, True, 0, x), "kernel size [2] must be 1 or 3")]:
        code, msg = error_of(g, *args)
        assert code == INVALID and text in msg, msg
    code, msg = error_of(g, o, x, [2], [], [0], False, True, 0, None)
    assert code == NULLPTR and "out" in msg, msg


# ---- 3-D max pooling with argmax (max_pool3d.toml) -----------------------------------------------------------

# name: self shape, kernel, stride, padding, dilation, ceilMode
MAX3_CASES = {
    "k2-p1": ((2, 3, 5, 6, 7), [2], [], [1], [1], False),
    "k322-s212-ceil": ((3, 6, 5, 7), [3, 2, 2], [2, 1, 2], [1, 1, 0], [1], True),
    "k3-s2-dil2": ((1, 2, 7, 7, 7), [3], [2], [1], [2], False),
}


@pytest.mark.parametrize("case,name", [(c, "float32") for c in MAX3_CASES] + [("k2-p1", "float16"),
                                                                            ("k322-s212-ceil", "bfloat16")])
def test_max_pool3d_and_backward(case, name):
    shape, k, st, pd, dl, ceil = MAX3_CASES[case]
    x = R.cast(RNG.standard_normal(shape), name)
    x.reshape(-1)[5] = np.nan
    xt = torch.from_numpy(f64(x)).requires_grad_()
    y, idx = F.max_pool3d(xt, k if len(k) > 1 else k[0], st or None, pd if len(pd) > 1 else pd[0], dl[0], ceil,
                          return_indices=True)
    out, gi = ops.MaxPool3dWithArgmax(strided(x), k, st, pd, dl, ceil, zeros(y.shape, name), np.zeros(y.shape, np.int32))
    np.testing.assert_array_equal(f64(out), y.detach().numpy())
    np.testing.assert_array_equal(gi, idx.numpy())
    dy = R.cast(RNG.standard_normal(y.shape), name)
    y.backward(torch.from_numpy(f64(dy)))
    gx = ops.MaxPool3dWithArgmaxBackward(strided(dy), x, np.asarray(gi), k, st, pd, dl, ceil, zeros(x.shape, name))
    close(gx, xt.grad.numpy(), name)


def test_max_pool3d_validation():
    x, o, i = np.ones((1, 2, 4, 4, 4), np.float32), np.zeros((1, 2, 2, 2, 2), np.float32), np.zeros((1, 2, 2, 2, 2), np.int32)
    f, g = ops.MaxPool3dWithArgmax, ops.MaxPool3dWithArgmaxBackward
    for args, text in [((x, [2, 2], [], [0], [1], False, o, i), "The length of kernelSize can be only 1 or 3"),
                       ((x, [0], [], [0], [1], False, o, i), "The value of kernel should be greater than 0"),
                       ((x, [2], [], [2], [1], False, o, i), "Padding should be smaller than or equal to half of kernel size"),
                       ((x, [2], [], [0], [1], False, o, i.astype(np.int8)), "Tensor indices not implemented for INT8"),
                       ((x, [2], [], [0], [1], False, o.astype(np.float16), i), "Expected both tensors to have same dtype"),
                       ((x[0, 0, 0], [2], [], [0], [1], False, o[0, 0, 0], i[0, 0, 0]), "4D or 5D tensor expected for inputs"),
                       ((x, [2], [], [0], [1], False, o[..., :1], i), "Expected tensor for out to have same size as")]:
        code, msg = error_of(f, *args)
        assert code == INVALID and text in msg, msg
    for args, text in [((o, x, i, [2], [], [0], [0], False, x), "The size of dilation should be greater than 0"),
                       ((o, x, i[..., :1], [2], [], [0], [1], False, x),
                        "Expected tensor for indices to have same size as tensor for gradOutput"),
                       ((o, x, i, [2], [], [0], [1], False, x.astype(np.float16)), "Expected both tensors to have same dtype"),
                       ((o[..., :1], x, i[..., :1], [2], [], [0], [1], False, x),
                        "Expected tensor for gradOutput to have same size as [1, 2, 2, 2, 2], but got [1, 2, 2, 2, 1].")]:
        code, msg = error_of(g, *args)
        assert code == INVALID and text in msg, msg


CANDS = ["float32", "float16", "bfloat16", "float64", "int32", "hifloat8"]


def _calls(d):
    x, o, i = ["t", d, [1, 2, 6, 6]], ["t", d, [1, 2, 3, 3]], ["t", "int32", [1, 2, 3, 3]]
    return [("MaxPool2dWithIndices", [x, [2], [2], [0], [1], False, o, i]),
            ("MaxPool2dWithIndicesBackward", [o, x, i, [2], [2], [0], [1], False, x]),
            ("AvgPool2d", [x, [2], [2], [0], False, True, 0, 0, o]),
            ("AvgPool2dBackward", [o, x, [2], [2], [0], False, True, 0, 0, x]),
            ("AdaptiveAvgPool2d", [x, [3, 3], o]),
            ("AdaptiveAvgPool2dBackward", [o, x, x]),
            ("AdaptiveMaxPool2d", [x, [3, 3], o, ["t", "int64", [1, 2, 3, 3]]]),
            ("AdaptiveMaxPool2dBackward", [o, x, i, x]),
            ("AvgPool3d", [["t", d, [1, 2, 2, 6, 6]], [2], [], [0], False, True, 0, ["t", d, [1, 2, 1, 3, 3]]]),
            ("AvgPool3dBackward", [["t", d, [1, 2, 1, 3, 3]], ["t", d, [1, 2, 2, 6, 6]], [2], [], [0], False, True, 0,
                                   ["t", d, [1, 2, 2, 6, 6]]]),
            ("MaxPool3dWithArgmax", [["t", d, [1, 2, 2, 6, 6]], [2], [], [0], [1], False, ["t", d, [1, 2, 1, 3, 3]],
                                     ["t", "int32", [1, 2, 1, 3, 3]]]),
            ("MaxPool3dWithArgmaxBackward", [["t", d, [1, 2, 1, 3, 3]], ["t", d, [1, 2, 2, 6, 6]],
                                             ["t", "int32", [1, 2, 1, 3, 3], 0], [2], [], [0], [1], False,
                                             ["t", d, [1, 2, 2, 6, 6]]])]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    halves = ["float32", "float16", "bfloat16"]
    ok = {"MaxPool2dWithIndices": halves, "MaxPool2dWithIndicesBackward": halves if soc != A2 else ["float32"],
          "AvgPool2d": halves + (["hifloat8"] if soc != A2 else []), "AvgPool2dBackward": halves,
          "AdaptiveAvgPool2d": halves, "AdaptiveAvgPool2dBackward": halves,
          "AdaptiveMaxPool2d": halves + ["float64"], "AdaptiveMaxPool2dBackward": halves, "AvgPool3d": halves,
          "AvgPool3dBackward": halves, "MaxPool3dWithArgmax": halves, "MaxPool3dWithArgmaxBackward": halves}
    calls = [c for d in CANDS for c in _calls(d)]
    want = [0 if d in ok[c[0]] else INVALID for d in CANDS for c in _calls(d)]
    if soc == A2:
        got, extra = status_codes(calls, soc, extra=_A2_MASK)
        assert extra["same"]
    else:
        got = status_codes(calls, soc)
    assert [(c[0], c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w] == []


# ---- torch_npu ----------------------------------------------------------------------------------------

_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
calls = {
    "max_pool2d": lambda x: F.max_pool2d(x, 3, 2, 1),
    "max_pool2d-ceil-dil": lambda x: F.max_pool2d(x, 2, 2, 0, 2, ceil_mode=True),
    "max_pool2d-indices": lambda x: F.max_pool2d(x, 2, return_indices=True)[0],
    "avg_pool2d": lambda x: F.avg_pool2d(x, 3, 2, 1),
    "avg_pool2d-excl-ceil": lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x, (3, 2)),
    "adaptive_avg_pool2d-1": lambda x: F.adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x, (4, 3)),
    "adaptive_max_pool2d-indices": lambda x: F.adaptive_max_pool2d(x, (2, 5), return_indices=True)[0],
}
x = torch.randn(2, 3, 9, 8)
"""
_BODY += FWD_BWD_LOOP + """
calls = {
    "avg_pool3d": lambda x: F.avg_pool3d(x, 2, 2, 1),
    "avg_pool3d-ceil-excl": lambda x: F.avg_pool3d(x, (3, 2, 2), (2, 1, 2), 1, ceil_mode=True, count_include_pad=False),
    "max_pool3d": lambda x: F.max_pool3d(x, 3, 2, 1),
    "max_pool3d-ceil-indices": lambda x: F.max_pool3d(x, (3, 2, 2), (2, 1, 2), 1, ceil_mode=True, return_indices=True)[0],
}
x = torch.randn(2, 2, 5, 6, 7)
""" + FWD_BWD_LOOP

TORCH_CALLS = ["max_pool2d", "max_pool2d-ceil-dil", "max_pool2d-indices", "avg_pool2d", "avg_pool2d-excl-ceil",
               "adaptive_avg_pool2d", "adaptive_avg_pool2d-1", "adaptive_max_pool2d", "adaptive_max_pool2d-indices",
               "avg_pool3d", "avg_pool3d-ceil-excl", "max_pool3d", "max_pool3d-ceil-indices"]


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", TORCH_CALLS)
def test_torch_npu_pooling_matches_cpu(on_npu, call):
    r = on_npu[call]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = dec(c), dec(n)
        assert c.shape == n.shape and np.abs(f64(c) - f64(n)).max() <= 1e-6 * max(1.0, np.abs(f64(c)).max())
