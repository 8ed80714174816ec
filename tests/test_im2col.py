"""Im2col and its backward (native_stubs/src/ops/conv/im2col.toml): aclnnIm2col against torch CPU's unfold (exact:
elements moved, then the Cast to out's dtype) and aclnnIm2colBackward against torch CPU's fold in float64 (fp32 sums
rounded once: within n * 2^-24 of the absolute sum, plus the output's rounding); every dtype of the vendor's lists
per SoC (950 in process, A2 in test_spatial2_dtype_lists.py's
child), 3-D / 4-D inputs, strided views, empty batches, the validation codes and
messages; and torch_npu's F.unfold / F.fold on the emulator against torch CPU."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import A2, INVALID, NULLPTR, dec, error_of, f64, status_codes, torch_npu_run, within, zeros
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(3011)
LIST_950 = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bfloat16", "float16", "float32",
            "float64", "bool"]
LIST_A2 = ["float32", "float16", "bfloat16"]

# name: self shape, kernel, dilation, padding, stride
CASES = {
    "k3": ((2, 3, 6, 7), [3, 3], [1, 1], [0, 0], [1, 1]),
    "all": ((1, 2, 7, 8), [2, 3], [2, 1], [1, 2], [2, 3]),
    "chw": ((3, 5, 5), [2, 2], [1, 1], [1, 0], [1, 2]),
}


def sample(shape, name):
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(np.bool_)
    if name.startswith(("int", "uint")):
        return RNG.integers(0, 100, shape).astype(R.np_dtype(name))
    return R.cast(RNG.uniform(-4, 4, shape), name)


def unfold64(x, k, d, p, s):
    t = torch.from_numpy(f64(x))
    return F.unfold(t[None] if t.dim() == 3 else t, k, d, p, s)[0 if t.dim() == 3 else slice(None)].numpy()


@pytest.mark.parametrize("case,name", [("k3", n) for n in LIST_950] + [("all", "float32"), ("chw", "float16"),
                                                                      ("all", "int64")])
def test_im2col_matches_torch(case, name):
    shape, k, d, p, s = CASES[case]
    x = sample(shape, name)
    want = unfold64(x, k, d, p, s)
    got = ops.Im2col(x, k, d, p, s, zeros(want.shape, name))
    np.testing.assert_array_equal(f64(got), want)


def test_im2col_casts_strided_and_empty():
    x = sample((1, 2, 5, 4), "float32")
    want = unfold64(x, [2, 2], [1, 1], [1, 1], [1, 1])
    got = ops.Im2col(strided(x), [2, 2], [1, 1], [1, 1], [1, 1], zeros(want.shape, "float16"))     # the Cast
    np.testing.assert_array_equal(got, want.astype(np.float32).astype(np.float16))
    e = ops.Im2col(np.zeros((0, 2, 5, 4), np.float32), [2, 2], [1, 1], [0, 0], [1, 1], zeros((0, 8, 12), "float32"))
    assert e.shape == (0, 8, 12)


@pytest.mark.parametrize("case,name", [("k3", "float32"), ("k3", "float16"), ("all", "bfloat16"), ("all", "float32"),
                                       ("chw", "float32")])
def test_col2im_matches_torch(case, name):
    shape, k, d, p, s = CASES[case]
    cols = unfold64(np.zeros(shape), k, d, p, s).shape
    g = sample(cols, name)
    size = list(shape[-2:])
    t = torch.from_numpy(f64(g))
    fold = (lambda a: F.fold(a[None], size, k, d, p, s)[0]) if len(cols) == 2 else \
        (lambda a: F.fold(a, size, k, d, p, s))
    want, mag = fold(t).numpy(), fold(t.abs()).numpy()
    got = ops.Im2colBackward(g if case != "all" else strided(g), size, k, d, p, s, zeros(shape, name))
    within(got, want, mag, 9 * 2.0 ** -24, name)


def test_col2im_cast_and_empty():
    g = sample((1, 8, 12), "float32")
    want = F.fold(torch.from_numpy(f64(g)), [4, 5], 2).numpy()
    got = ops.Im2colBackward(g, [4, 5], [2, 2], [1, 1], [0, 0], [1, 1], zeros((1, 2, 4, 5), "float16"))
    within(got, want, np.abs(want), 4 * 2.0 ** -24, "float16")
    e = ops.Im2colBackward(np.zeros((0, 8, 12), np.float32), [4, 5], [2, 2], [1, 1], [0, 0], [1, 1],
                           zeros((0, 2, 4, 5), "float32"))
    assert e.shape == (0, 2, 4, 5)


X = np.zeros((1, 2, 4, 4), np.float32)
O = np.zeros((1, 8, 9), np.float32)
G, GI = np.zeros((1, 8, 9), np.float32), np.zeros((1, 2, 4, 4), np.float32)
I2 = [[2, 2], [1, 1], [0, 0], [1, 1]]


@pytest.mark.parametrize("op,args,code,text", [
    ("Im2col", (None, *I2, O), NULLPTR, ""),
    ("Im2col", (X[0, 0], *I2, O), INVALID, "Expected self dim [2] to be 3 or 4 but check failed."),
    ("Im2col", (X[:, :, :0], *I2, O), INVALID, "self'dims is invalid, self No.[3] dim is [0]."),
    ("Im2col", (X, [2], [1, 1], [0, 0], [1, 1], O), INVALID, "It is expected kernelSize equals to 2, but got size 1."),
    ("Im2col", (X, [2, 2], [1, 1], [0, 0], [1], O), INVALID, "It is expected stride equals to 2, but got size 1."),
    ("Im2col", (X, [2, 0], [1, 1], [0, 0], [1, 1], O), INVALID, "It is expected kernelSize be greater than zero, but "
     "kernelSize No.[2] dim is [0]."),
    ("Im2col", (X, [2, 2], [1, 1], [0, 0], [0, 1], O), INVALID, "It is expected stride be greater than zero, but stride "
     "No.[1] dim is [0]."),
    ("Im2col", (X, [2, 2], [1, 1], [0, -1], [1, 1], O), INVALID, "It is expected padding be greater than or equal to "
     "zero, but padding No.[2] dim is [-1]."),
    ("Im2col", (X, [5, 2], [1, 1], [0, 0], [1, 1], O), INVALID, "The shape (0, 3) of the array calculated by other "
     "parameters must be at least one."),
    ("Im2col", (X, *I2, O[..., :8]), INVALID, "Expect out shape [[1, 8, 9]], but got: [[1, 8, 8]]."),
    ("Im2colBackward", (G, [4, 4], *I2, None), NULLPTR, ""),
    ("Im2colBackward", (G.astype(np.float64), [4, 4], *I2, GI), INVALID, "gradOutput"),
    ("Im2colBackward", (G[0, 0], [4, 4], *I2, GI), INVALID, "Expected gradOutput dim [1] to be 2 or 3 but check failed."),
    ("Im2colBackward", (G, [4, 4], *I2, GI[0]), INVALID, "Expected out dim [3] to be 1 greater than gradOutput dim [3] "
     "but check failed."),
    ("Im2colBackward", (G, [4], *I2, GI), INVALID, "It is expected inputSize equals to 2, but got size 1."),
    ("Im2colBackward", (G, [4, 4], [2, 2], [1, 1], [0, 0], [1, 0], GI), INVALID, "Stride must be greater than zero, "
     "but got stride=(1,0)."),
    ("Im2colBackward", (G, [4, 4], [2, 2], [1, 1], [-1, 0], [1, 1], GI), INVALID, "Padding must not be negative, but "
     "got padding=(-1,0)."),
    ("Im2colBackward", (G, [4, 4], [3, 3], [1, 1], [0, 0], [1, 1], GI), INVALID, "Expected size of gradOutput's dim -2 "
     "to be divisible by the product of kernelSize but got gradOutput.shape[-2]=8 and kernelSize=(3,3)."),
    ("Im2colBackward", (G, [4, 5], *I2, GI), INVALID, "Expected gradOutput.shape[-1] should be 12, but current is 9."),
    ("Im2colBackward", (G, [4, 4], *I2, GI[:, :1]), INVALID, "Shape of out should be [1, 2, 4, 4], but current is "
     "[1, 1, 4, 4]."),
])
def test_im2col_validation(op, args, code, text):
    got, msg = error_of(getattr(ops, op), *args)
    assert got == code and text in msg, msg


CANDS = ["float32", "float16", "bfloat16", "float64", "int32", "uint64", "bool", "hifloat8"]


def _calls(d):
    return [("Im2col", [["t", d, [1, 2, 4, 4]], *I2, ["t", d, [1, 8, 9]]]),
            ("Im2colBackward", [["t", d, [1, 8, 9]], [4, 4], *I2, ["t", d, [1, 2, 4, 4]]])]


def cases(soc):
    ok = {"Im2col": LIST_950 if soc != A2 else LIST_A2, "Im2colBackward": LIST_A2}
    calls = [c for d in CANDS for c in _calls(d)]
    return calls, [0 if d in ok[c[0]] else INVALID for d in CANDS for c in _calls(d)]


def a2_cases():
    """(calls, expected codes) on A2 (run in tests/test_spatial2_dtype_lists.py's one child)."""
    return cases(A2)


def test_dtype_lists_on_950():
    calls, want = cases("Ascend950PR")
    assert status_codes(calls, "Ascend950PR") == want


_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(2, 3, 7, 6)
cols = torch.randn(2, 12, 20)
for name, f, a in [("unfold", lambda t: F.unfold(t, (2, 3), 1, 1, (2, 1)), x),
                   ("fold", lambda t: F.fold(t, (5, 6), 2), cols)]:
    ac, an = a.clone().requires_grad_(), a.npu().requires_grad_()
    try:
        yc, yn = f(ac), f(an)
        g = torch.linspace(-1, 1, yc.numel()).reshape(yc.shape)
        yc.backward(g)
        yn.backward(g.npu())
        OUT[name] = {"cpu": [enc(to_np(yc)), enc(to_np(ac.grad))], "npu": [enc(to_np(yn)), enc(to_np(an.grad))]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", ["unfold", "fold"])
def test_torch_npu_fold_unfold_match_cpu(on_npu, call):
    r = on_npu[call]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = f64(dec(c)), f64(dec(n))
        assert c.shape == n.shape and np.abs(c - n).max() <= 1e-5 * max(1.0, np.abs(c).max())
