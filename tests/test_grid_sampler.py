"""The grid-sampling family (native_stubs/src/ops/grid_sample/grid_sampler.toml) against float64 torch CPU:
aclnnGridSampler2D and its backward in every interpolation mode (bilinear, nearest, bicubic) and padding mode
(zeros, border, reflection), align_corners both ways, grids reaching outside [-1, 1]; every dtype of the vendor's
lists (Atlas A2 in one child process), strided views, empty batches, the outputMask, the validation codes and
messages (torch_npu's F.grid_sample on the emulator: tests/test_upsample.py's child).
Adding a configuration adds a row to a CASES table."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, error_of, f64, status_codes, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(4417)
F32 = np.float32


def torch_ref(x, g, im, pm, align, dy):
    """float64 torch: out, dx, dgrid, and the magnitudes the fp32 error scales with."""
    xt = torch.from_numpy(f64(x)).requires_grad_()
    gt = torch.from_numpy(f64(g)).requires_grad_()
    y = torch.grid_sampler_2d(xt, gt, im, pm, align)
    y.backward(torch.from_numpy(f64(dy)))
    mag = torch.grid_sampler_2d(torch.from_numpy(np.abs(f64(x))), gt.detach(), im, pm, align).numpy()
    return y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy(), mag


# name: input shape, grid plane, interpolationMode, paddingMode, alignCorners, grid range
CASES = {
    "bilinear-zeros": ((2, 3, 5, 7), (4, 6), 0, 0, False, 1.3),
    "bilinear-border-align": ((1, 4, 6, 5), (3, 7), 0, 1, True, 1.5),
    "bilinear-reflection": ((2, 2, 4, 6), (5, 3), 0, 2, False, 2.5),
    "bilinear-reflection-align": ((1, 3, 5, 5), (4, 4), 0, 2, True, 3.0),
    "nearest-zeros-align": ((2, 3, 5, 7), (4, 6), 1, 0, True, 1.2),
    "nearest-reflection": ((1, 2, 6, 4), (3, 5), 1, 2, False, 2.0),
    "bicubic-zeros": ((1, 3, 6, 7), (4, 5), 2, 0, False, 1.2),
    "bicubic-border-align": ((2, 2, 5, 6), (3, 4), 2, 1, True, 1.4),
    "bicubic-reflection": ((1, 2, 5, 5), (3, 3), 2, 2, False, 2.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_grid_sampler_2d_matches_torch(case):
    shape, (oh, ow), im, pm, align, r = CASES[case]
    x = RNG.standard_normal(shape).astype(F32)
    g = RNG.uniform(-r, r, (shape[0], oh, ow, 2)).astype(F32)
    dy = RNG.standard_normal((shape[0], shape[1], oh, ow)).astype(F32)
    y, dx, dg, mag = torch_ref(x, g, im, pm, align, dy)
    out = ops.GridSampler2D(strided(x), strided(g), im, pm, align, zeros(y.shape, "float32"))
    # fp32 coordinates: an error of ulp(coordinate) times the image's slope, plus the sums' rounding
    coord = 2.0 ** -22 * max(shape[2:]) * r * 2 * np.abs(x).max()
    assert (np.abs(f64(out) - y) <= 2.0 ** -21 * 4 * mag + coord).all()
    gx, gg = ops.GridSampler2DBackward(strided(dy), x, g, im, pm, align, [True, True], zeros(x.shape, "float32"),
                                       zeros(g.shape, "float32"))
    taps = 16 if im == 2 else 4
    scale = np.abs(dy).max() * taps * oh * ow
    assert (np.abs(f64(gx) - dx) <= 2.0 ** -20 * scale * (1 + max(shape[2:]) * r)).all()
    gscale = shape[1] * taps * np.abs(x).max() * np.abs(dy).max() * max(shape[2:]) * 2
    assert (np.abs(f64(gg) - dg) <= 2.0 ** -20 * gscale).all()
    if im == 1:
        np.testing.assert_array_equal(out, y.astype(F32))          # a copy (no ties in these grids)
        assert (f64(gg) == 0).all()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float64"])
def test_other_dtypes(name):
    x = R.cast(RNG.standard_normal((2, 3, 4, 5)), name)
    g = R.cast(RNG.uniform(-1.1, 1.1, (2, 3, 4, 2)), name)
    dy = R.cast(RNG.standard_normal((2, 3, 3, 4)), name)
    for im, pm, align in ((0, 0, False), (1, 1, True), (2 if name != "float64" else 0, 2, True)):
        y, dx, dg, mag = torch_ref(x, g, im, pm, align, dy)
        out = ops.GridSampler2D(x, g, im, pm, align, zeros(y.shape, name))
        gx, gg = ops.GridSampler2DBackward(dy, x, g, im, pm, align, [True, True], zeros(x.shape, name),
                                           zeros(g.shape, name))
        if name == "float64":                                       # the AI CPU kernel's float64 steps
            np.testing.assert_allclose(out, y, rtol=0, atol=1e-13)
            np.testing.assert_allclose(gx, dx, rtol=0, atol=1e-13)
            np.testing.assert_allclose(gg, dg, rtol=0, atol=1e-12)
            continue
        u = 2.0 ** -11 if name == "float16" else 2.0 ** -8         # the output's rounding, fp32 steps before it
        assert (np.abs(f64(out) - y) <= u * np.abs(y) + 2.0 ** -18 * 4 * mag + 1e-6).all()
        assert (np.abs(f64(gx) - dx) <= u * np.abs(dx) + 2.0 ** -18 * 16 * 12 * np.abs(f64(dy)).max()).all()
        assert (np.abs(f64(gg) - dg) <= u * np.abs(dg) + 2.0 ** -18 * 3 * 16 * 5 * 4).all()


def test_empty_mask_and_nonfinite_grid():
    assert ops.GridSampler2D(np.zeros((0, 2, 3, 3), F32), np.zeros((0, 4, 4, 2), F32), 0, 0, False,
                             np.zeros((0, 2, 4, 4), F32)).shape == (0, 2, 4, 4)
    x = RNG.standard_normal((1, 2, 3, 4)).astype(F32)
    g = RNG.uniform(-1, 1, (1, 2, 2, 2)).astype(F32)
    dy = np.ones((1, 2, 2, 2), F32)
    _, dx, dg, _ = torch_ref(x, g, 0, 0, False, dy)
    sentinel = np.full(g.shape, 7, F32)
    gx, gg = ops.GridSampler2DBackward(dy, x, g, 0, 0, False, [True, False], zeros(x.shape, "float32"), sentinel)
    assert (np.asarray(gg) == 7).all()                              # gridGrad left as it was
    np.testing.assert_allclose(gx, dx, rtol=0, atol=1e-6)
    gx, gg = ops.GridSampler2DBackward(dy, x, g, 0, 0, False, None, np.full(x.shape, 5, F32), sentinel)
    assert (np.asarray(gx) == 5).all()                              # a NULL mask: success, nothing launched
    # a NaN / inf grid value: zeros padding reads nothing (coordinate -100), border clips it to 0
    g = np.array([[[[np.nan, 0.0], [np.inf, 0.0]]]], F32)
    y = ops.GridSampler2D(x, g, 0, 0, True, np.zeros((1, 2, 1, 2), F32))
    assert (np.asarray(y) == 0).all()
    y = ops.GridSampler2D(x, g, 0, 1, True, np.zeros((1, 2, 1, 2), F32))
    np.testing.assert_array_equal(np.asarray(y)[:, :, 0], x[:, :, 1, [0, 3]])     # x: NaN -> 0, inf -> W - 1; y: row 1


X = np.ones((1, 2, 3, 4), F32)
G = np.zeros((1, 5, 6, 2), F32)
O = np.zeros((1, 2, 5, 6), F32)


@pytest.mark.parametrize("args,code,text", [
    ((None, G, 0, 0, False, O), NULLPTR, "input"),
    ((X, G.astype(np.float16), 0, 0, False, O), INVALID, "Tensor grid expected dtype is FLOAT but found FLOAT16."),
    ((X.astype(np.int32), G.astype(np.int32), 0, 0, False, O.astype(np.int32)), INVALID,
     "Tensor input not implemented for INT32"),
    ((X, G, 3, 0, False, O), INVALID, "interpolationMode 3 should be in support list {0(bilinear), 1(nearest), 2(bicubic)}."),
    ((X, G, 0, -1, False, O), INVALID, "paddingMode -1 should be in support list {0(zeros), 1(border), 2(reflection)}."),
    ((X[0], G, 0, 0, False, O), INVALID, "Expected 4 dimension input, but got input with sizes [2, 3, 4]."),
    ((X, G[:, :, :, :1], 0, 0, False, O), INVALID, "expect grid to have size 2 in last dimension, but got grid with "
                                                   "shape [[1, 5, 6, 1]]"),
    ((X, G, 0, 0, False, np.zeros((1, 3, 5, 6), F32)), INVALID, "expect input and out to have same channel size"),
    ((X, G, 0, 0, False, np.zeros((1, 2, 5, 5), F32)), INVALID, "expect grid and out to have same H and W size"),
    ((np.ones((2, 2, 3, 4), F32), G, 0, 0, False, O), INVALID, "expect input, grid and out to have same batch size"),
    ((np.ones((1, 2, 0, 4), F32), G, 0, 0, False, O), INVALID, "expect input to have non-empty spatial dimensions"),
    ((X.astype(np.float64), G.astype(np.float64), 2, 0, False, O.astype(np.float64)), INVALID,
     "Notice that when data type is double, no support interpolation mode is bicubic."),
])
def test_forward_validation(args, code, text):
    got, msg = error_of(ops.GridSampler2D, *args)
    assert got == code and text in msg, msg


def test_backward_validation():
    f = ops.GridSampler2DBackward
    code, msg = error_of(f, O, X, G, 0, 0, False, [True, True], None, G)
    assert code == NULLPTR and "inputGrad" in msg, msg
    code, msg = error_of(f, O, X, G, 3, 0, False, [True, True], X, G)
    assert code == INVALID and "interpolationMode 3 should be in range [0, 2]." in msg, msg
    code, msg = error_of(f, O, X, G, 0, 0, False, [True, True, True], X, G)
    assert code == INVALID and "Expected aclnnGridSampler2DBackward outputMask len to be 2, but got 3." in msg, msg
    code, msg = error_of(f, O, X, G, 0, 0, False, [True, True], X, np.zeros((1, 5, 6, 3), F32))
    assert code == INVALID and "Expected tensor for gridGrad to have same size as tensor for grid" in msg, msg
    code, msg = error_of(f, O.astype(np.float16), X, G, 0, 0, False, [True, True], X, G)
    assert code == INVALID and "Tensor gradOutput expected dtype is FLOAT but found FLOAT16." in msg, msg
    code, msg = error_of(f, O[:, :1], X, G, 0, 0, False, [True, True], X, G)
    assert code == INVALID and "expect input and gradOutput to have same channel size" in msg, msg


# ---- dtype lists per SoC (Atlas A2 in one child) ------------------------------------------------------------

CANDS = ["float32", "float16", "bfloat16", "float64", "int32", "uint8"]


def _calls(d):
    x, g, o = ["t", d, [1, 2, 3, 4]], ["t", d, [1, 2, 2, 2], 0], ["t", d, [1, 2, 2, 2]]
    return [("GridSampler2D", [x, g, 0, 0, False, o]),
            ("GridSampler2DBackward", [o, x, g, 0, 0, False, [True, True], x, g])]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    ok = ["float32", "float16", "bfloat16", "float64"]
    calls = [c for d in CANDS for c in _calls(d)]
    want = [0 if d in ok else INVALID for d in CANDS for _ in _calls(d)]
    assert status_codes(calls, soc) == want

# torch_npu's F.grid_sample on the emulator: in tests/test_upsample.py's child (one child per family of files)
