"""aclnnConvolution and aclnnConvolutionBackward (native_stubs/src/ops/conv/convolution.toml) against torch CPU's
convolutions in float64 on the same inputs: 1d/2d/3d, groups (depthwise too), stride, dilation, 2- and 4-value
2d padding, transposed with outputPadding, bias or none, every outputMask; every dtype of the vendor's lists
(FLOAT, FLOAT16, BF16; HIFLOAT8 on Ascend 950), USE_FP16, strided views, empty tensors, the validation codes and
messages per SoC; and torch_npu's conv layers on the emulator against torch CPU.

Class (c): fp32 products summed in fp32 (the matmul engine after an im2col). The bound checked is
2^-18 * (the same sum of |terms|) + the output dtype's rounding; the measured worst case is printed by
test_measured_error (about 2^-22 on these sizes, as the note says). Adding a configuration adds a row to CASES."""
from __future__ import annotations

import numpy as np
import pytest

from _cnn_ops import (A2, INVALID, NULLPTR, dec, enc, error_of, f64, names, status_codes, tensor, torch_npu_run,
                      within, zeros)
from _op_helpers import strided
from pyaclnn import codecs, ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
F = torch.nn.functional
RNG = np.random.default_rng(2828)
REL = 2.0 ** -18

# name: x shape, weight shape, stride, padding, dilation, groups, transposed, outputPadding, bias
CASES = {
    "2d": ((2, 4, 7, 6), (6, 2, 3, 2), [2, 1], [1, 0], [1, 2], 2, False, [0, 0], True),
    "2d-depthwise": ((1, 4, 6, 6), (4, 1, 3, 3), [1, 1], [1, 1], [1, 1], 4, False, [0, 0], False),
    "2d-pad4": ((1, 2, 5, 6), (3, 2, 3, 3), [1, 2], [1, 0, 2, 1], [1, 1], 1, False, [0, 0], True),
    "1d": ((2, 3, 10), (4, 3, 3), [2], [1], [2], 1, False, [0], True),
    "3d": ((1, 2, 4, 5, 4), (3, 2, 2, 3, 2), [1, 2, 1], [1, 0, 1], [1, 1, 2], 1, False, [0, 0, 0], True),
    "2d-transposed": ((2, 4, 4, 3), (4, 3, 3, 3), [2, 2], [1, 1], [1, 1], 2, True, [1, 0], True),
    "1d-transposed": ((1, 2, 5), (2, 3, 4), [3], [1], [1], 1, True, [2], False),
    "3d-transposed": ((1, 2, 3, 2, 3), (2, 2, 2, 2, 2), [2, 1, 2], [0, 1, 1], [1, 1, 1], 1, True, [1, 0, 0], True),
}


def _pads(pad, nd):
    """torch's symmetric padding, or F.pad's (left, right, ...) for 4-value 2d / 2-value 1d lists."""
    if len(pad) == 2 * nd and nd <= 2:
        top_bottom = [(pad[2 * d], pad[2 * d + 1]) for d in range(nd)]
        return [0] * nd, [v for d in reversed(range(nd)) for v in top_bottom[d]]
    return pad, None


def ref_forward(case, x, w, b, abs_=False):
    """float64 torch conv on the given values (abs_: of |x|, |w|, |b|: the scale of the sum)."""
    xs, ws, st, pad, dil, g, tr, opad, _ = case
    nd = len(xs) - 2
    t = [torch.from_numpy(f64(v)) if v is not None else None for v in (x, w, b)]
    if abs_:
        t = [v.abs() if v is not None else None for v in t]
    sym, fpad = _pads(pad, nd)
    xin = F.pad(t[0], fpad) if fpad else t[0]
    if tr:
        conv = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd - 1]
        return conv(xin, t[1], t[2], stride=st, padding=sym, output_padding=opad, groups=g, dilation=dil).numpy()
    conv = [F.conv1d, F.conv2d, F.conv3d][nd - 1]
    return conv(xin, t[1], t[2], stride=st, padding=sym, dilation=dil, groups=g).numpy()


def ref_backward(case, x, w, b, gy, abs_=False):
    xs, ws, st, pad, dil, g, tr, opad, has_b = case
    t = [torch.from_numpy(np.abs(f64(v)) if abs_ else f64(v)).requires_grad_() for v in (x, w)]
    bt = torch.from_numpy(f64(b)).requires_grad_() if has_b else None
    ins = t
    nd = len(xs) - 2
    sym, fpad = _pads(pad, nd)
    xin = F.pad(ins[0], fpad) if fpad else ins[0]
    if tr:
        conv = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][nd - 1]
        y = conv(xin, ins[1], bt, stride=st, padding=sym, output_padding=opad, groups=g, dilation=dil)
    else:
        conv = [F.conv1d, F.conv2d, F.conv3d][nd - 1]
        y = conv(xin, ins[1], bt, stride=st, padding=sym, dilation=dil, groups=g)
    up = torch.from_numpy(f64(gy))
    y.backward(up.abs() if abs_ else up)
    return t[0].grad.numpy(), t[1].grad.numpy(), bt.grad.numpy() if has_b else None


def inputs(case, name, rng=RNG):
    xs, ws, *_, has_b = case
    x, w = R.cast(rng.standard_normal(xs), name), R.cast(rng.standard_normal(ws) * 0.5, name)
    out_c = ws[1] * case[5] if case[6] else ws[0]
    b = R.cast(rng.standard_normal(out_c), name) if has_b else None
    return x, w, b


def run_forward(case, x, w, b, out_name, cube=0, xin=None):
    xs, ws, st, pad, dil, g, tr, opad, _ = case
    shape = ref_forward(case, np.zeros(xs), np.zeros(ws), None).shape
    return ops.Convolution(x if xin is None else xin, w, b, st, pad, dil, tr, opad, g, zeros(shape, out_name), cube)


def run_backward(case, x, w, gy, mask=(True, True, True), name="float32"):
    xs, ws, st, pad, dil, g, tr, opad, has_b = case
    nb = gy.shape[1]
    outs = [zeros(x.shape, name) if mask[0] else None, zeros(w.shape, name) if mask[1] else None,
            zeros((nb,), name) if mask[2] else None]
    return ops.ConvolutionBackward(gy, x, w, [nb], st, pad, dil, tr, opad, g, list(mask), 0, *outs)


MEASURED = []


@pytest.mark.parametrize("case", list(CASES))
def test_forward_float32(case):
    c = CASES[case]
    x, w, b = inputs(c, "float32")
    got = run_forward(c, x, w, b, "float32")
    scale = ref_forward(c, x, w, b, abs_=True)
    MEASURED.append(within(got, ref_forward(c, x, w, b), scale, REL))


@pytest.mark.parametrize("case", list(CASES))
def test_backward_float32(case):
    c = CASES[case]
    x, w, b = inputs(c, "float32")
    gy = RNG.standard_normal(ref_forward(c, x, w, b).shape).astype(np.float32)
    got = run_backward(c, x, w, gy, mask=(True, True, c[8]))
    want, scale = ref_backward(c, x, w, b, gy), ref_backward(c, x, w, b, gy, abs_=True)
    for k in range(3 if c[8] else 2):
        MEASURED.append(within(got[k], want[k], scale[k], REL))


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("case", ["2d", "3d-transposed"])
def test_half_dtypes(case, name):
    c = CASES[case]
    x, w, b = inputs(c, name)
    within(run_forward(c, x, w, b, name), ref_forward(c, x, w, b), ref_forward(c, x, w, b, abs_=True), REL, name)
    gy = R.cast(RNG.standard_normal(ref_forward(c, x, w, b).shape), name)
    got = run_backward(c, x, w, gy, name=name)
    want, scale = ref_backward(c, x, w, b, gy), ref_backward(c, x, w, b, gy, abs_=True)
    for k in range(3):
        within(got[k], want[k], scale[k], REL, name)


def test_hifloat8_operands_on_950():
    c = CASES["2d"]
    xv = RNG.choice([-2.0, -1.0, -0.5, 0.25, 0.5, 1.0, 1.5, 3.0], c[0])
    wv = RNG.choice([-1.0, -0.25, 0.5, 0.75, 1.0], c[1])
    xc, wc = codecs.encode_hifloat8(xv), codecs.encode_hifloat8(wv)
    x, w = codecs.decode_hifloat8(xc), codecs.decode_hifloat8(wc)
    assert (x == xv).all() and (w == wv).all()
    got = run_forward(c, None, tensor(wc, "hifloat8"), None, "float32", xin=tensor(xc, "hifloat8"))
    within(got, ref_forward(c, x, w, None), ref_forward(c, x, w, None, abs_=True), REL)


def test_use_fp16_rounds_float_operands():
    c = CASES["1d"]
    x, w, b = inputs(c, "float32")
    got = run_forward(c, x, w, b, "float32", cube=2)
    xr, wr = (v.astype(np.float16).astype(np.float32) for v in (x, w))
    within(got, ref_forward(c, xr, wr, b), ref_forward(c, xr, wr, b, abs_=True), REL)


def test_strided_views_and_masks():
    c = CASES["2d"]
    x, w, b = inputs(c, "float32")
    got = run_forward(c, None, strided(w, transpose=True), strided(b), "float32", xin=strided(x, transpose=True))
    within(got, ref_forward(c, x, w, b), ref_forward(c, x, w, b, abs_=True), REL)
    gy = RNG.standard_normal(got.shape).astype(np.float32)
    full = run_backward(c, x, w, gy)
    gw_only = run_backward(c, x, w, gy, mask=(False, True, False))
    np.testing.assert_array_equal(gw_only[1] if isinstance(gw_only, tuple) else gw_only, full[1])
    nb = gy.shape[1]
    gi = ops.ConvolutionBackward(strided(gy), strided(x), w, [nb], c[2], c[3], c[4], False, c[7], c[5],
                                 [True, False, False], 0, zeros(x.shape, "float32"), None, None)
    np.testing.assert_array_equal(gi[0] if isinstance(gi, tuple) else gi, full[0])


def test_empty_tensors():
    c = CASES["2d"]
    x = np.zeros((0, 4, 7, 6), np.float32)
    w = RNG.standard_normal(c[1]).astype(np.float32)
    out = ops.Convolution(x, w, None, c[2], c[3], c[4], False, c[7], 2, zeros((0, 6, 4, 4), "float32"), 0)
    assert out.shape == (0, 6, 4, 4)
    _, gw, gb = ops.ConvolutionBackward(np.zeros((0, 6, 4, 4), np.float32), x, w, [6], c[2], c[3], c[4], False, c[7], 2,
                                     [False, True, True], 0, None, np.full(c[1], 7, np.float32),
                                     np.full(6, 7, np.float32))
    assert (gw == 0).all() and (gb == 0).all()


def test_measured_error():
    """The worst error seen, as a fraction of the stated bound (2^-18 * sum of |terms|)."""
    if MEASURED:
        print(f"conv: worst error = {max(MEASURED):.3g} of the bound")
        assert max(MEASURED) < 0.125         # under 2^-21 * scale: the note says 2^-22 measured


# ---- dtype lists per SoC and validation ------------------------------------------------------------

def _fw_args(d, out="float32"):
    return [["t", d, [1, 2, 5, 5]], ["t", d, [3, 2, 3, 3]], ["n"], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
            ["t", out if out else d, [1, 3, 3, 3]], 0]


def _bw_args(d, tr=False):
    x, gy = ([1, 2, 5, 5], [1, 3, 3, 3]) if not tr else ([1, 3, 3, 3], [1, 2, 5, 5])
    w = [3, 2, 3, 3]
    return [["t", d, gy], ["t", d, x], ["t", d, w], [3], [1, 1], [0, 0], [1, 1], tr, [0, 0], 1, [True, True, False], 0,
            ["t", d, x], ["t", d, w], ["n"]]


CANDS = ["float32", "float16", "bfloat16", "float64", "int32", "int8", "hifloat8", "float8_e4m3fn"]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    conv = names("FLOAT FLOAT16 BF16" + (" HIFLOAT8" if soc != A2 else ""))
    bp = conv + (["float8_e4m3fn"] if soc != A2 else [])
    calls, want = [], []
    for d in CANDS:
        calls.append(("Convolution", _fw_args(d, out=d if d != "hifloat8" else "float32")))
        want.append(0 if d in conv else INVALID)
        calls.append(("ConvolutionBackward", _bw_args(d)))                  # plain: the backward list
        want.append(0 if d in bp else INVALID)
        calls.append(("ConvolutionBackward", _bw_args(d, tr=True)))         # transposed: the forward's
        want.append(0 if d in conv else INVALID)
    got = status_codes(calls, soc)
    assert [(c[0], c[1][0][1], g, w) for c, g, w in zip(calls, got, want) if g != w] == []


X, W = np.ones((1, 2, 5, 5), np.float32), np.ones((3, 2, 3, 3), np.float32)
Y = np.zeros((1, 3, 3, 3), np.float32)
API = "aclnnConvolutionGetWorkspaceSize"


def conv(x=X, w=W, b=None, st=(1, 1), pad=(0, 0), dil=(1, 1), tr=False, opad=(0, 0), g=1, y=Y, cube=0):
    return ops.Convolution(x, w, b, list(st), list(pad) if pad is not None else None, list(dil), tr,
                           list(opad) if opad is not None else None, g, y, cube)


@pytest.mark.parametrize("kw,code,text", [
    (dict(pad=None), NULLPTR, "pads is NULL"),
    (dict(tr=True, opad=None), NULLPTR, "outputPadding is NULL"),
    (dict(b=np.ones(3, np.int32)), INVALID, "Parameter bias of " + API + " has incorrect dtype DT_INT32. It should be "
     "one of [DT_FLOAT, DT_FLOAT16, DT_BF16]."),
    (dict(x=X.astype(np.float64)), INVALID, "Parameter x of " + API + " has incorrect dtype DT_DOUBLE"),
    (dict(x=np.ones((5, 5), np.float32)), INVALID, "Parameter x of " + API + " has incorrect shape dim 2. It should be "
     "one of {3, 4, 5}."),
    (dict(x=np.ones((1, 2, 1, 5, 5), np.float32)), INVALID, "Parameters x, filter of " + API + " have incorrect shape "
     "dims 5, 4. Reason: the shape dims of x and filter must be the same."),
    (dict(b=np.ones(4, np.float32)), INVALID, "When transposed is false, shape[0] of bias must be equal to shape[0] "
     "of filter"),
    (dict(st=(1,)), INVALID, "Parameter strides of " + API + " has incorrect element nums 1. It should be 2."),
    (dict(pad=(0, 0, 0)), INVALID, "Parameter pads of " + API + " has incorrect element nums 3. It should be 2 or 4."),
    (dict(st=(0, 1)), INVALID, "Parameter strides of " + API + " has incorrect shape [0, 1]. Reason: shape[0] of this "
     "parameter must be greater than 0."),
    (dict(x=np.ones((1, 2, 2, 5), np.float32)), INVALID, "x[2] + pads[0] - dilations[0] * (filter[2] - 1) - 1 >= 0"),
    (dict(g=0), INVALID, "Parameter groups of " + API + " has incorrect value 0. Reason: the value should be greater "
     "than 0."),
    (dict(g=2), INVALID, "shape[1] of x must be equal to shape[1] of filter multiplied by attribute groups(2)"),
    (dict(y=np.zeros((1, 3, 4, 3), np.float32)), INVALID, "Parameter y of " + API + " has incorrect shape [1, 3, 4, 3]. "
     "Reason: shape[2] of y must be equal to its inferred value(3)."),
    (dict(cube=5), INVALID, "The value of cubeMathType only support {0: KEEP_DTYPE, 1: ALLOW_FP32_DOWN_PRECISION, 2: "
     "USE_FP16, 3: USE_HF32, 4: USE_FP32_ADD}, but got 5"),
    (dict(x=np.ones((1, 3, 3, 3), np.float32), w=np.ones((3, 2, 3, 3), np.float32), tr=True, opad=(2, 0),
          y=np.zeros((1, 2, 7, 5), np.float32)), INVALID,
     "outputPadding[0] must be less than both stride[0] and dilation[0]"),
])
def test_forward_validation(kw, code, text):
    got, msg = error_of(conv, *[kw.get(k, d) for k, d in (("x", X), ("w", W), ("b", None), ("st", (1, 1)),
                                                         ("pad", (0, 0)), ("dil", (1, 1)), ("tr", False),
                                                         ("opad", (0, 0)), ("g", 1), ("y", Y), ("cube", 0))])
    assert got == code and text in msg, msg


GY = np.ones((1, 3, 3, 3), np.float32)
BAPI = "aclnnConvolutionBackwardGetWorkspaceSize"


def bconv(gy=GY, x=X, w=W, st=(1, 1), pad=(0, 0), dil=(1, 1), tr=False, opad=(0, 0), g=1, mask=(True, True, True),
          cube=0, gi=None, gw=None, gb=None):
    gi = np.zeros_like(x) if gi is None else gi
    gw = np.zeros_like(w) if gw is None else gw
    gb = np.zeros(3, np.float32) if gb is None else gb
    return ops.ConvolutionBackward(gy, x, w, [3], list(st), list(pad), list(dil), tr, list(opad), g, list(mask), cube,
                                   gi, gw, gb)


@pytest.mark.parametrize("kw,code,text", [
    (dict(mask=(True, True)), INVALID, "Parameter outputMask of " + BAPI + " has incorrect shape dim 2. It should be 3."),
    (dict(gy=GY.astype(np.float64)), INVALID, "gradOutput dtype DOUBLE is not supported"),
    (dict(st=(0, 1)), INVALID, "Parameter stride of " + BAPI + " has incorrect value [0, 1]. Reason: the value of "
     "stride must be greater than or equal to 1."),
    (dict(pad=(-1, 0)), INVALID, "the value of padding must be greater than or equal to 0"),
    (dict(opad=(1, 0)), INVALID, "when transposed=false, the value of outputPadding must be 0"),
    (dict(g=0), INVALID, "Parameter group of " + BAPI + " has incorrect value 0."),
    (dict(cube=4), INVALID, "3: USE_HF32}, but got 4"),
    (dict(gy=np.ones((1, 3, 3), np.float32)), INVALID, "Parameters gradOutput, input of " + BAPI + " have incorrect "
     "shape dims 3,4. Reason: the shape dim of [gradOutput, input] must be the same."),
    (dict(gi=np.zeros((1, 2, 5, 4), np.float32)), INVALID, "Shape of gradInput should be [1, 2, 5, 5]"),
    (dict(gb=np.zeros(4, np.float32)), INVALID, "Parameter gradBias of " + BAPI + " has incorrect shape [4]. Reason: "
     "The gradBias shape should be equal [3]."),
    (dict(gy=np.ones((1, 4, 3, 3), np.float32), gb=np.zeros(4, np.float32)), INVALID, "the shape dim of [gradOutShape[1], weight[0]] must be the "
     "same."),
    (dict(gy=np.ones((1, 3, 3, 2), np.float32)), INVALID, "Parameter gradOutput of " + BAPI + " has incorrect shape "
     "[1, 3, 3, 2]. Reason: shape of gradOutput should equal to [1, 3,3,3]."),
])
def test_backward_validation(kw, code, text):
    got, msg = error_of(lambda: bconv(**kw))
    assert got == code and text in msg, msg


def test_backward_mask_and_nulls():
    assert error_of(lambda: ops.ConvolutionBackward(GY, X, W, [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                                    [True, False, False], 0, None, None, None))[0] == NULLPTR
    code, msg = error_of(lambda: ops.ConvolutionBackward(GY, X, W, [3], [1, 1], [0, 0], [1, 1], False, None, 1,
                                                         [True, False, False], 0, np.zeros_like(X), None, None))
    assert code == NULLPTR and "outputPadding is NULL" in msg


# ---- torch_npu ---------------------------------------------------------------------------------------

_BODY = """
import torch.nn as nn
torch.manual_seed(0)

def grads(m, x):
    x = x.clone().requires_grad_()
    y = m(x)
    y.backward(torch.ones_like(y) * 0.5)
    return [y, x.grad] + [p.grad for p in m.parameters()]

layers = {
    "conv2d": lambda: nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2),
    "conv2d-same": lambda: nn.Conv2d(4, 4, 3, padding="same", dilation=2, bias=False),
    "conv1d": lambda: nn.Conv1d(4, 3, 5, padding=2),
    "conv3d": lambda: nn.Conv3d(4, 2, (2, 3, 3), stride=(1, 2, 1)),
    "convT2d": lambda: nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
    "block": lambda: nn.Sequential(nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 4, 1)),
}
shapes = {"conv2d": (2, 4, 9, 8), "conv2d-same": (1, 4, 7, 7), "conv1d": (2, 4, 12), "conv3d": (1, 4, 3, 6, 5),
          "convT2d": (1, 4, 4, 5), "block": (2, 4, 6, 6)}
for name, make in layers.items():
    torch.manual_seed(1)
    m = make()
    x = torch.randn(shapes[name])
    cpu = grads(m, x)
    m.zero_grad()
    try:
        npu = grads(m.npu(), x.npu())
        OUT[name] = {"cpu": [enc(to_np(t)) for t in cpu], "npu": [enc(to_np(t)) for t in npu]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("layer", ["conv2d", "conv2d-same", "conv1d", "conv3d", "convT2d", "block"])
def test_torch_npu_conv_layers_match_cpu(on_npu, layer):
    r = on_npu[layer]
    assert "error" not in r, r
    for c, n in zip(r["cpu"], r["npu"]):
        c, n = dec(c), dec(n)
        assert c.shape == n.shape
        assert np.abs(c - n).max() <= 2e-5 * max(1.0, np.abs(c).max()), np.abs(c - n).max()
