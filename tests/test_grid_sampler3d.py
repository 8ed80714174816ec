"""3-D grid sampling (native_stubs/src/ops/grid_sample/grid_sampler3d.toml): aclnnGridSampler3D and its backward
against float64 torch CPU's grid_sampler_3d in both interpolation modes (trilinear, nearest) and every padding mode,
align_corners both ways, grids reaching outside [-1, 1]; every dtype of the vendor's list (950 in process, A2 in test_spatial2_dtype_lists.py's
child), strided views, the outputMask, the validation codes and messages; and torch_npu's F.grid_sample on 5-D
inputs (forward and backward) on the emulator against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, dec, error_of, f64, torch_npu_run, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(4513)
F32 = np.float32


def torch_ref(x, g, im, pm, align, dy):
    xt = torch.from_numpy(f64(x)).requires_grad_()
    gt = torch.from_numpy(f64(g)).requires_grad_()
    y = torch.grid_sampler_3d(xt, gt, im, pm, align)
    y.backward(torch.from_numpy(f64(dy)))
    mag = torch.grid_sampler_3d(torch.from_numpy(np.abs(f64(x))), gt.detach(), im, pm, align).numpy()
    return y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy(), mag


# name: input shape, grid volume, interpolationMode, paddingMode, alignCorners, grid range
CASES = {
    "trilinear-zeros": ((2, 3, 3, 4, 5), (2, 3, 4), 0, 0, False, 1.3),
    "trilinear-border-align": ((1, 2, 4, 3, 4), (3, 2, 3), 0, 1, True, 1.5),
    "trilinear-reflection": ((1, 2, 3, 4, 3), (2, 3, 2), 0, 2, False, 2.5),
    "nearest-zeros-align": ((2, 2, 3, 4, 5), (2, 3, 3), 1, 0, True, 1.2),
    "nearest-reflection": ((1, 3, 4, 3, 4), (3, 2, 2), 1, 2, False, 2.0),
}


@pytest.mark.parametrize("case", list(CASES))
def test_grid_sampler_3d_matches_torch(case):
    shape, osz, im, pm, align, r = CASES[case]
    x = RNG.standard_normal(shape).astype(F32)
    g = RNG.uniform(-r, r, (shape[0], *osz, 3)).astype(F32)
    dy = RNG.standard_normal((shape[0], shape[1], *osz)).astype(F32)
    y, dx, dg, mag = torch_ref(x, g, im, pm, align, dy)
    out = ops.GridSampler3D(strided(x), strided(g), im, pm, align, zeros(y.shape, "float32"))
    coord = 2.0 ** -22 * max(shape[2:]) * r * 2 * np.abs(x).max()
    assert (np.abs(f64(out) - y) <= 2.0 ** -21 * 8 * mag + coord).all()
    gx, gg = ops.GridSampler3DBackward(strided(dy), x, g, im, pm, align, [True, True], zeros(x.shape, "float32"),
                                       zeros(g.shape, "float32"))
    scale = np.abs(dy).max() * 8 * np.prod(osz)
    assert (np.abs(f64(gx) - dx) <= 2.0 ** -20 * scale * (1 + max(shape[2:]) * r)).all()
    gscale = shape[1] * 8 * np.abs(x).max() * np.abs(dy).max() * max(shape[2:]) * 2
    assert (np.abs(f64(gg) - dg) <= 2.0 ** -20 * gscale).all()
    if im == 1:
        np.testing.assert_array_equal(out, y.astype(F32))
        assert (f64(gg) == 0).all()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float64"])
def test_other_dtypes_and_mask(name):
    x = R.cast(RNG.standard_normal((1, 2, 3, 3, 4)), name)
    g = R.cast(RNG.uniform(-1.1, 1.1, (1, 2, 2, 3, 3)), name)
    dy = R.cast(RNG.standard_normal((1, 2, 2, 2, 3)), name)
    y, dx, dg, mag = torch_ref(x, g, 0, 1, False, dy)
    out = ops.GridSampler3D(x, g, 0, 1, False, zeros(y.shape, name))
    gx, gg = ops.GridSampler3DBackward(dy, x, g, 0, 1, False, [True, False], zeros(x.shape, name),
                                       np.full(g.shape, 7, R.np_dtype(name)))
    tol = 1e-12 if name == "float64" else 8 * (2.0 ** -8 if name == "bfloat16" else 2.0 ** -11)
    assert np.abs(f64(out) - y).max() <= tol * max(1, np.abs(y).max())
    assert np.abs(f64(gx) - dx).max() <= tol * 4 * max(1, np.abs(dx).max())
    assert (f64(gg) == 7).all()                                    # the mask leaves gridGrad alone


X, G, O = np.zeros((1, 2, 2, 3, 3), F32), np.zeros((1, 2, 2, 2, 3), F32), np.zeros((1, 2, 2, 2, 2), F32)
M = [True, True]


@pytest.mark.parametrize("op,args,code,text", [
    ("GridSampler3D", (X, None, 0, 0, False, O), NULLPTR, ""),
    ("GridSampler3D", (X, G.astype(np.float16), 0, 0, False, O), INVALID, "grid"),
    ("GridSampler3D", (X.astype(np.int32), G.astype(np.int32), 0, 0, False, O.astype(np.int32)), INVALID, "INT32"),
    ("GridSampler3D", (X, G, 0, 3, False, O), INVALID, "paddingMode 3 should be in range [0, 2]."),
    ("GridSampler3D", (X, G, 2, 0, False, O), INVALID, "interpolationMode 2 should be in range [0, 1]."),
    ("GridSampler3D", (X[0], G, 0, 0, False, O), INVALID, "Expected 5 dimension input, but got input with sizes"),
    ("GridSampler3D", (X, G, 0, 0, False, O[:, :1]), INVALID, "expect input and out to have same channel size, but "
     "got input with shape [[1, 2, 2, 3, 3]]             and out with shape [[1, 1, 2, 2, 2]]"),
    ("GridSampler3D", (X, G, 0, 0, False, O[..., :1]), INVALID, "expect grid and out to have same D H W size"),
    ("GridSampler3D", (X[..., :0], G, 0, 0, False, O), INVALID, "expect input to have non-empty spatial dimensions"),
    ("GridSampler3D", (X, G[..., :2], 0, 0, False, O), INVALID, "expect grid to have size 3 in last dimension"),
    ("GridSampler3DBackward", (O, X, G, 0, 0, False, M, X, None), NULLPTR, ""),
    ("GridSampler3DBackward", (O, X, G, 0, -1, False, M, X, G), INVALID, "paddingMode -1 should be in range [0, 2]."),
    ("GridSampler3DBackward", (O[:, :1], X, G, 0, 0, False, M, X, G), INVALID, "expect input and gradOutput to have "
     "same channel size, but got input with shape             [[1, 2, 2, 3, 3]] and gradOutput"),
    ("GridSampler3DBackward", (O, X, G, 0, 0, False, M, X[..., :2], G), INVALID, "Expected tensor for inputGrad to "
     "have same size as tensor for input"),
    ("GridSampler3DBackward", (O, X, G, 0, 0, False, [True], X, G), INVALID, "Expected aclnnGridSampler3DBackward "
     "outputMask len to be 2, but got 1."),
])
def test_grid_sampler_3d_validation(op, args, code, text):
    got, msg = error_of(getattr(ops, op), *args)
    assert got == code and text in msg, msg


def test_null_mask_does_nothing():
    gx = np.full(X.shape, 5, F32)
    out, _ = ops.GridSampler3DBackward(O, X, G, 0, 0, False, None, gx, np.zeros_like(G))
    assert (out == 5).all()


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = ["float32", "float16", "bfloat16", "float64", "int32"]

    def calls(d):
        return [("GridSampler3D", [["t", d, [1, 1, 2, 2, 2]], ["t", d, [1, 1, 1, 2, 3]], 0, 0, False,
                                   ["t", d, [1, 1, 1, 1, 2]]]),
                ("GridSampler3DBackward", [["t", d, [1, 1, 1, 1, 2]], ["t", d, [1, 1, 2, 2, 2]],
                                           ["t", d, [1, 1, 1, 2, 3]], 1, 0, True, [True, True],
                                           ["t", d, [1, 1, 2, 2, 2]], ["t", d, [1, 1, 1, 2, 3]]])]
    return [c for d in cands for c in calls(d)], [0 if d != "int32" else INVALID for d in cands for _ in range(2)]


_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
x, grid = torch.randn(2, 3, 4, 5, 4), torch.rand(2, 3, 2, 4, 3) * 2.4 - 1.2
for name, mode, pad in [("trilinear", "bilinear", "zeros"), ("nearest-border", "nearest", "border")]:
    xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    gc, gn = grid.clone().requires_grad_(), grid.npu().requires_grad_()
    try:
        yc = F.grid_sample(xc, gc, mode=mode, padding_mode=pad, align_corners=False)
        yn = F.grid_sample(xn, gn, mode=mode, padding_mode=pad, align_corners=False)
        g = torch.linspace(-1, 1, yc.numel()).reshape(yc.shape)
        yc.backward(g)
        yn.backward(g.npu())
        OUT[name] = {"cpu": [enc(to_np(t)) for t in (yc, xc.grad, gc.grad)],
                     "npu": [enc(to_np(t)) for t in (yn, xn.grad, gn.grad)]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", ["trilinear", "nearest-border"])
def test_torch_npu_grid_sample_3d_matches_cpu(on_npu, call):
    r = on_npu[call]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = f64(dec(c)), f64(dec(n))
        assert c.shape == n.shape and np.abs(c - n).max() <= 1e-4 * max(1.0, np.abs(c).max())
