"""Affine grids (native_stubs/src/ops/grid_sample/affine_grid.toml): aclnnAffineGrid against torch CPU's
affine_grid in float64 (float64 arithmetic rounded once: within half an ulp of the reference), 2-D and 3-D,
alignCorners both ways, one-step axes, every dtype of the vendor's list (950 in process, A2 in test_spatial2_dtype_lists.py's
child), the
validation codes and messages; and torch_npu's F.affine_grid (forward and backward) against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import INVALID, NULLPTR, dec, error_of, f64, status_codes, torch_npu_run, zeros
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(3111)


@pytest.mark.parametrize("size,align,name", [((2, 3, 5, 4), True, "float32"), ((2, 3, 5, 4), False, "float32"),
                                             ((1, 1, 1, 6), False, "float16"), ((2, 2, 3, 4, 5), False, "float32"),
                                             ((1, 2, 2, 1, 3), False, "bfloat16")])
def test_affine_grid_matches_torch(size, align, name):
    k = len(size) - 2
    theta = R.cast(RNG.uniform(-2, 2, (size[0], k, k + 1)), name)
    want = F.affine_grid(torch.from_numpy(f64(theta)), list(size), align_corners=align).numpy()
    got = ops.AffineGrid(theta, list(size), align, zeros(want.shape, name))
    exact = R.cast(want, name).astype(np.float64)       # the float64 reference rounded once
    ulp = np.spacing(np.abs(exact).astype(R.np_dtype(name))).astype(np.float64)
    assert (np.abs(f64(got) - want) <= 0.5 * ulp + 1e-12 * np.abs(want)).all()


T2, O2 = np.zeros((1, 2, 3), np.float32), np.zeros((1, 4, 5, 2), np.float32)


@pytest.mark.parametrize("args,code,text", [
    ((None, [1, 1, 4, 5], True, O2), NULLPTR, ""),
    ((T2.astype(np.float64), [1, 1, 4, 5], True, O2.astype(np.float64)), INVALID, "theta"),
    ((T2, [1, 1, 4, 5], True, O2.astype(np.float16)), INVALID, "FLOAT"),
    ((T2[:0], [0, 1, 4, 5], True, O2[:0]), INVALID, "Expected theta to be not null tensor."),
    ((T2, [1, 4, 5], True, O2), INVALID, "AffineGridGenerator needs 4d or 5d size(input)."),
    ((T2, [2, 1, 4, 5], True, O2), INVALID, "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
     "[2, 1, 4, 5]. Got [1, 2, 3]."),
    ((T2, [1, 1, 2, 4, 5], True, O2), INVALID, "Expected a batch of 3D affine matrices of shape Nx3x4 for size "
     "[1, 1, 2, 4, 5]. Got [1, 2, 3]."),
    ((T2, [1, 1, 4, 6], True, O2), INVALID, "Expected tensor for out to have same size as [1, 4, 6, 2], but got "
     "[1, 4, 5, 2]."),
])
def test_affine_grid_validation(args, code, text):
    got, msg = error_of(ops.AffineGrid, *args)
    assert got == code and text in msg, msg


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    cands = ["float32", "float16", "bfloat16", "float64", "int32"]
    calls = [("AffineGrid", [["t", d, [1, 2, 3]], [1, 1, 2, 2], False, ["t", d, [1, 2, 2, 2]]]) for d in cands]
    return calls, [0, 0, 0, INVALID, INVALID]


def test_dtype_list_on_950():
    calls, want = a2_cases()          # one list for both SoCs
    assert status_codes(calls, "Ascend950PR") == want


_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
for name, theta, size in [("2d", torch.randn(2, 2, 3), (2, 3, 5, 4)), ("3d", torch.randn(1, 3, 4), (1, 2, 3, 4, 2))]:
    tc, tn = theta.clone().requires_grad_(), theta.npu().requires_grad_()
    try:
        yc, yn = F.affine_grid(tc, size, align_corners=False), F.affine_grid(tn, size, align_corners=False)
        OUT[name] = {"cpu": [enc(to_np(yc))], "npu": [enc(to_np(yn))]}
        if name == "2d":
            g = torch.linspace(-1, 1, yc.numel()).reshape(yc.shape)
            yc.backward(g)
            yn.backward(g.npu())
            OUT[name]["cpu"].append(enc(to_np(tc.grad)))
            OUT[name]["npu"].append(enc(to_np(tn.grad)))
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", ["2d", "3d"])
def test_torch_npu_affine_grid_matches_cpu(on_npu, call):
    r = on_npu[call]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = f64(dec(c)), f64(dec(n))
        assert c.shape == n.shape and np.abs(c - n).max() <= 1e-5 * max(1.0, np.abs(c).max())
