"""Backwards of the activations defined by element functions (native_stubs/src/ops/activation/act_grad.toml):
every dtype of the vendor's lists (Ascend 950 here, Atlas A2 in a subprocess) against a NumPy reference of the
vendor's kernel steps (bit for bit), their float64 error (the figures in the notes), promotion and broadcasting
where the vendor does them, strided views, empty tensors, NaN/inf, the validation codes, and torch_npu's autograd
on the emulator against torch CPU.

Adding an operator adds a row to BACKS (and its reference function)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

from _math_ops import A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, sample, torch_npu_run
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R
from _pointwise_calls import SOC950, assert_codes
from test_act_fn import F, GELU_C, GELU_K, back, check, dtype_name, exp32, f32, tanh_softplus32, up

RNG = np.random.default_rng(2035)
F3 = names("FLOAT FLOAT16 BF16")


def promoted(g: np.ndarray, x: np.ndarray) -> str:
    return R.promote(dtype_name(g), dtype_name(x))


# ---- references, written from the vendor's kernels (x0 = gradOutput, x1 = the forward's input or result) ----

def hardtanh_bw(g, x, mn=-1.0, mx=2.0):
    v = up(x)
    keep = ((v < f32(mx)) & (v > f32(mn))) | np.isnan(v)
    return np.where(keep, g, np.zeros((), g.dtype)).astype(g.dtype)


def leaky_relu_bw(g, x, slope=0.1):
    c = promoted(g, x)
    gc, xc = R.cast(g, c), R.cast(x, c)
    if c == "float64":
        return np.where(xc > 0, gc, gc * float(f32(slope)))
    with np.errstate(all="ignore"):
        return back(np.where(xc > 0, up(gc), up(gc) * f32(slope)), c)


def elu_bw(g, y, alpha=1.5, scale=1.25, iscale=0.75, is_result=False):
    a, s, i = f32(alpha), f32(scale), f32(iscale)
    neg = a * s
    gv, v = up(g), up(y)
    with np.errstate(all="ignore"):
        if is_result:
            r = np.where(v <= 0, gv * i * (v + neg), gv * s)
        else:
            r = np.where(v <= 0, gv * i * neg * exp32(v * i), gv * s)
    return back(r, dtype_name(g))


def softplus_bw(g, x, beta=2.0, threshold=10.0):
    gn, xn = dtype_name(g), dtype_name(x)
    c = gn if gn == xn and gn in ("float32", "float16", "bfloat16") else "float32"
    gv, xv = up(R.cast(g, c)), up(R.cast(x, c))
    with np.errstate(all="ignore"):
        t = xv * f32(beta)
        d = gv / (exp32(-t) + F(1))
        return back(np.where(t > (t - t) + f32(threshold), gv, d), c)


def mish_bw(g, x):
    c = promoted(g, x)
    v, gv = up(R.cast(x, c)), up(R.cast(g, c))
    with np.errstate(all="ignore"):
        t = tanh_softplus32(v)
        d = t - (t * t - F(1)) * v / (exp32(v * F(-1)) + F(1))
        return back(d * gv, c)


def hardswish_bw(g, x, strict=False):
    v = up(x)
    d = v * F(1 / 3) + F(0.5)
    d = np.where(v > -3 if strict else v >= -3, d, F(0))
    d = np.where(v < 3 if strict else v <= 3, d, F(1))
    with np.errstate(all="ignore"):
        return back(up(g) * d, dtype_name(x))


def hardsigmoid_bw(g, x):
    c = promoted(g, x)
    a = F(1 / 6)
    t = up(R.cast(x, c)) * a + F(0.5)
    with np.errstate(all="ignore"):
        r = up(R.cast(g, c)) * a
    r = np.where(t > 0, r, F(0))
    r = np.where(t < 1, r, F(0))
    return back(r, c, "round" if c == "bfloat16" else "rint")


def log_sigmoid_bw(g, x):
    v = up(x)
    with np.errstate(all="ignore"):
        e = exp32(np.abs(v) * F(-1))
        return back(np.where(v < 0, F(1), e) / (e + F(1)) * up(g), dtype_name(x))


def softshrink_bw(g, x, lambd=0.5):
    c = dtype_name(g) if dtype_name(g) == dtype_name(x) else "float32"
    gc, v = R.cast(g, c), up(x)
    return np.where((np.abs(v) > f32(lambd)) | np.isnan(v), gc, np.zeros((), gc.dtype)).astype(gc.dtype)


def hardshrink_bw(g, x, lambd=0.5):
    c = promoted(g, x)
    gc, v = R.cast(g, c), up(x)
    return np.where(np.abs(v) <= max(f32(lambd), F(0)), np.zeros((), gc.dtype), gc).astype(gc.dtype)


def logit_grad(x, dy, eps=1e-3):
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        r = dy.astype(np.float64) / (v * (1 - v))
        outside = (v < 0) | (v > 1) if eps < 0 else (v < eps) | (v > 1 - eps)
        r = np.where(outside, np.nan if eps < 0 else 0.0, r)
        return back(r.astype(F), dtype_name(x))


def gelu_grad_tanh64(x):
    """GeluBackwardV2's tanh derivative in float64 with the C library's tanh (gelu.c's arithmetic)."""
    def d(v):
        t = math.tanh(GELU_K * (v + GELU_C * v * v * v))
        return 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * GELU_K * (1.0 + 3.0 * GELU_C * v * v)
    return np.vectorize(d, otypes=[np.float64])(np.asarray(x, np.float64))


def gelu_bw(g, x):
    c = promoted(g, x)
    gc, xc = R.cast(g, c), R.cast(x, c)
    with np.errstate(all="ignore"):
        return back((gc.astype(np.float64) * gelu_grad_tanh64(xc)).astype(F), c)


# ---- the operators ---------------------------------------------------------------------------------------

def z(shape, name):
    return np.zeros(shape, R.np_dtype(name))


@dataclass
class Back:
    ref: Callable                 # ref(g, x) -> the result in the compute dtype
    run: Callable                 # run(g, x, out) -> the operator's result
    dtypes_950: list[str]
    dtypes_a2: list[str]
    args: Callable                # args(g, x, out): the argument list of a validation call (encoded)
    broadcast: bool = False       # gradOutput and self broadcast
    mixed: bool = False           # gradOutput and self may differ in dtype (promotion)
    f64: Callable | None = None   # float64 derivative (times g), for the ulp figure
    ulp: tuple = (0, 0)
    x_scale: float = 4.0
    rank_checked: bool = True     # more than 8 dimensions are refused
    abs_tol: dict | None = None   # instead of ulp: max absolute error vs float64 per dtype (a derivative that
                                  # crosses zero, where ulps lose meaning)


S = lambda v: ("s", v, "float64")   # noqa: E731
V = lambda v: ("v", v)              # noqa: E731


def sig(x):
    return 1 / (1 + np.exp(-x))


BACKS = {
    "HardtanhBackward": Back(hardtanh_bw, lambda g, x, o: ops.HardtanhBackward(g, x, -1.0, 2.0, o), F3, F3,
                             lambda g, x, o: [g, x, S(-1.0), S(2.0), o]),
    "LeakyReluBackward": Back(leaky_relu_bw, lambda g, x, o: ops.LeakyReluBackward(g, x, 0.1, False, o),
                              names("FLOAT FLOAT16 DOUBLE BF16"), names("FLOAT FLOAT16 DOUBLE BF16"),
                              lambda g, x, o: [g, x, S(0.1), V(False), o], broadcast=True, mixed=True),
    "HardswishBackward": Back(hardswish_bw, lambda g, x, o: ops.HardswishBackward(g, x, o), F3, F3,
                              lambda g, x, o: [g, x, o]),
    "HardswishBackwardV2": Back(lambda g, x: hardswish_bw(g, x, True), lambda g, x, o: ops.HardswishBackwardV2(g, x, o),
                                F3, F3, lambda g, x, o: [g, x, o]),
    "HardsigmoidBackward": Back(hardsigmoid_bw, lambda g, x, o: ops.HardsigmoidBackward(g, x, o), F3, F3,
                                lambda g, x, o: [g, x, o], mixed=True),
    "SoftplusBackward": Back(softplus_bw, lambda g, x, o: ops.SoftplusBackward(g, x, 2.0, 10.0, o),
                             names("FLOAT FLOAT16 DOUBLE BF16"), names("FLOAT FLOAT16 DOUBLE BF16"),
                             lambda g, x, o: [g, x, S(2.0), S(10.0), o], mixed=True,
                             f64=lambda x: np.where(2 * x > 10, 1.0, sig(2 * x)), ulp=(2, 1)),
    "EluBackward": Back(elu_bw, lambda g, y, o: ops.EluBackward(g, 1.5, 1.25, 0.75, False, y, o), F3, F3,
                        lambda g, x, o: [g, S(1.5), S(1.25), S(0.75), V(False), x, o],
                        f64=lambda x: np.where(x <= 0, 1.5 * 1.25 * 0.75 * np.exp(0.75 * x), 1.25), ulp=(9, 0)),
    "MishBackward": Back(mish_bw, lambda g, x, o: ops.MishBackward(g, x, o), F3, F3, lambda g, x, o: [g, x, o],
                         broadcast=True, mixed=True,
                         f64=lambda x: np.tanh(np.log1p(np.exp(x))) + x * (1 - np.tanh(np.log1p(np.exp(x))) ** 2)
                         * sig(x), abs_tol={"float32": 1.1e-6, "float16": 5e-4, "bfloat16": 4e-3}),
    "LogSigmoidBackward": Back(log_sigmoid_bw, lambda g, x, o: ops.LogSigmoidBackward(g, x, x, o), F3, F3,
                               lambda g, x, o: [g, x, x, o], f64=lambda x: sig(-x), ulp=(2, 1), rank_checked=False),
    "SoftshrinkBackward": Back(softshrink_bw, lambda g, x, o: ops.SoftshrinkBackward(g, x, 0.5, o), F3, F3,
                               lambda g, x, o: [g, x, S(0.5), o], broadcast=True, mixed=True),
    "HardshrinkBackward": Back(hardshrink_bw, lambda g, x, o: ops.HardshrinkBackward(g, x, 0.5, o), F3, F3,
                               lambda g, x, o: [g, x, S(0.5), o], broadcast=True, mixed=True),
    "GeluBackward": Back(gelu_bw, lambda g, x, o: ops.GeluBackward(g, x, o), F3, F3, lambda g, x, o: [g, x, o],
                         broadcast=True, mixed=True, f64=gelu_grad_tanh64, ulp=(0, 1)),
    "LogitGrad": Back(lambda g, x: logit_grad(x, g), lambda g, x, o: ops.LogitGrad(x, g, 1e-3, o), F3, F3,
                      lambda g, x, o: [x, g, V(1e-3), o], x_scale=0.5,
                      f64=lambda x: np.where((x < 1e-3) | (x > 1 - 1e-3), 0.0, 1 / (x * (1 - x))), ulp=(0, 0)),
}


def grads_and_inputs(op: str, gname: str, xname: str, shape=(6, 17)):
    b = BACKS[op]
    g = sample(gname, shape, RNG, scale=2.0)
    if op == "LogitGrad":
        x = R.cast(RNG.uniform(-0.1, 1.1, shape), xname)
        x.reshape(-1)[:5] = R.cast(np.array([0.0, 1.0, 1e-4, np.nan, 0.5]), xname)
    else:
        x = sample(xname, shape, RNG, scale=b.x_scale)
    return g, x


CASES = [(op, d) for op, b in BACKS.items() for d in b.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_bit_exact(op, name):
    b = BACKS[op]
    g, x = grads_and_inputs(op, name, name)
    check(b.run(g, x, z(x.shape, name)), b.ref(g, x), name)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("op", list(BACKS))
def test_every_fp16_bf16_self(op):
    b = BACKS[op]
    for name in ("float16", "bfloat16"):
        x = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(R.np_dtype(name))
        g = R.cast(RNG.uniform(-3, 3, x.shape), name)
        same_bits(b.run(g, x, z(x.shape, name)), b.ref(g, x))


@pytest.mark.parametrize("op", [op for op, b in BACKS.items() if b.mixed])
def test_mixed_dtypes_promote(op):
    b = BACKS[op]
    for gname, xname in (("float16", "float32"), ("bfloat16", "float16"), ("float32", "bfloat16")):
        g, x = grads_and_inputs(op, gname, xname)
        want = b.ref(g, x)
        same_bits(b.run(g, x, z(x.shape, dtype_name(want))), want)


def test_softplus_backward_integral_self_computes_in_float():
    g = R.cast(RNG.uniform(-2, 2, (4, 9)), "float16")
    for xname in ("int32", "bool", "int8", "float64"):
        x = sample(xname, (4, 9), RNG)
        same_bits(ops.SoftplusBackward(g, x, 2.0, 10.0, z(x.shape, "float32")),
                  R.cast(softplus_bw(g, x), "float32"))


@pytest.mark.parametrize("op", [op for op, b in BACKS.items() if b.broadcast])
def test_broadcast_strided_empty(op):
    b = BACKS[op]
    g = grads_and_inputs(op, "float32", "float32", (4, 1, 7))[0]
    x = grads_and_inputs(op, "float32", "float32", (3, 1))[1]
    gg, xx = np.broadcast_arrays(g, x)
    same_bits(b.run(g, x, z(gg.shape, "float32")), b.ref(np.ascontiguousarray(gg), np.ascontiguousarray(xx)))
    g2, x2 = grads_and_inputs(op, "float32", "float32", (5, 8))
    same_bits(b.run(strided(g2, transpose=True), strided(x2), z((5, 8), "float32")), b.ref(g2, x2))
    assert b.run(z((0, 3), "float32"), z((1, 3), "float32"), z((0, 3), "float32")).shape == (0, 3)


@pytest.mark.parametrize("op", [op for op, b in BACKS.items() if not b.broadcast])
def test_strided_and_empty(op):
    b = BACKS[op]
    g, x = grads_and_inputs(op, "float32", "float32", (5, 8))
    same_bits(b.run(strided(g, transpose=True), strided(x), z((5, 8), "float32")), b.ref(g, x))
    assert b.run(z((0, 3), "float32"), z((0, 3), "float32"), z((0, 3), "float32")).shape == (0, 3)


def test_specials():
    x = F([-100, -3, -1, -0.0, 0.0, 0.5, 3, 100, np.nan, np.inf, -np.inf])
    g = F([1.5] * 11)
    for op, b in BACKS.items():
        if op != "LogitGrad":
            same_bits(b.run(g, x, np.zeros_like(x)), b.ref(g, x))
    # SoftplusBackward: beta * self equal to the threshold takes the sigmoid branch (the compare is strict)
    at = F([5.0, 5.0000005])
    same_bits(ops.SoftplusBackward(np.ones_like(at), at, 2.0, 10.0, np.zeros_like(at)), F([1 / (1 + exp32(F(-10))), 1]))
    # on the forward's result (isResult): y <= 0 uses y + alpha * scale; a negative alpha is refused
    y = F([-1.5, -0.5, 0.0, 2.0])
    gy = F([1.0, 2.0, 3.0, 4.0])
    same_bits(ops.EluBackward(gy, 1.5, 1.25, 0.75, True, y, np.zeros_like(y)), elu_bw(gy, y, is_result=True))
    assert code(ops.EluBackward, gy, -1.0, 1.0, 1.0, True, y, np.zeros_like(y)) == INVALID
    assert code(ops.EluBackward, gy, -1.0, 1.0, 1.0, False, y, np.zeros_like(y)) == 0
    assert code(ops.LeakyReluBackward, gy, y, -0.1, True, np.zeros_like(y)) == INVALID
    # LogitGrad: NaN outside [0, 1] for a negative eps, 0 outside [eps, 1 - eps] otherwise
    p = F([-0.5, 0.0, 0.25, 1.0, 1.5])
    got = ops.LogitGrad(p, np.ones_like(p), -1.0, np.zeros_like(p))
    assert np.isnan(got[[0, 4]]).all() and got[1] == np.inf and got[3] == np.inf
    same_bits(ops.LogitGrad(p, np.ones_like(p), 0.3, np.zeros_like(p)), logit_grad(p, np.ones_like(p), 0.3))
    # HardshrinkBackward returns for empty inputs before it checks the broadcast
    assert code(ops.HardshrinkBackward, z((0, 3), "float32"), z((2, 3), "float32"), 0.5, z((5, 5), "float32")) == 0
    assert code(ops.HardshrinkBackward, z((1, 3), "float32"), z((2, 3), "float32"), 0.5, z((5, 5), "float32")) == INVALID


def error_vs_float64(op: str, name: str):
    """(max ulp over normal results, max absolute error) of the derivative (gradOutput 1) vs float64."""
    b = BACKS[op]
    if name == "float32":
        x = np.linspace(-20, 20, 400001, dtype=np.float64).astype(F) if op != "LogitGrad" else \
            np.linspace(0, 1, 200001, dtype=np.float64).astype(F)
    else:
        x = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16).view(R.np_dtype(name))
    g = np.ones(x.shape, R.np_dtype(name))
    got = b.run(g, x, z(x.shape, name))
    with np.errstate(all="ignore"):
        w64 = b.f64(x.astype(np.float64))
    keep = np.isfinite(w64) & ~(np.abs(w64) < float(np.finfo(F if name != "float16" else np.float16).tiny))
    return (int(R.ulp_distance(got, R.cast(w64, name), name)[keep].max()),
            float(np.abs(got.astype(np.float64) - w64)[keep].max()))


@pytest.mark.parametrize("op", [op for op, b in BACKS.items() if b.f64 is not None])
def test_within_bound_of_float64(op):
    # the figures each fidelity note states, measured on these grids
    b = BACKS[op]
    for k, name in enumerate(("float32", "float16", "bfloat16")):
        ulps, err = error_vs_float64(op, name)
        if b.abs_tol is not None:
            assert err <= b.abs_tol[name], name
        else:
            assert ulps <= b.ulp[min(k, 1)], name


# ---- validation ------------------------------------------------------------------------------------------

def calls_and_codes(soc: str) -> list[tuple]:
    out = []
    t = lambda d, s=(2, 3): ("t", d, list(s))   # noqa: E731
    for op, b in BACKS.items():
        ins = b.dtypes_950 if soc != A2 else b.dtypes_a2
        args = b.args(t("float32"), t("float32"), t("float32"))
        for k in range(len(args)):
            if args[k][0] != "v":
                out.append((op, args[:k] + [("n",)] + args[k + 1:], NULLPTR))
        for d in ALL:
            out.append((op, b.args(t(d), t(d), t(d)), 0 if d in ins else INVALID))
        out.append((op, b.args(t("float32"), t("float32"), t("float32", (3, 2))), INVALID))
        out.append((op, b.args(t("float32", [1] * 9), t("float32", [1] * 9), t("float32", [1] * 9)),
                    INVALID if b.rank_checked else 0))
        out.append((op, b.args(t("float32"), t("float32", (4, 3)), t("float32")), INVALID))
    # mixed dtypes: refused where the vendor wants one dtype, promoted elsewhere
    for op, want in (("HardtanhBackward", INVALID), ("HardswishBackward", INVALID), ("EluBackward", INVALID),
                     ("LogSigmoidBackward", INVALID), ("LogitGrad", INVALID), ("LeakyReluBackward", 0),
                     ("HardsigmoidBackward", 0), ("MishBackward", 0), ("SoftshrinkBackward", 0),
                     ("HardshrinkBackward", 0), ("SoftplusBackward", 0), ("GeluBackward", 0)):
        out.append((op, BACKS[op].args(t("float16"), t("float32"), t("float32")), want))
    out.append(("SoftplusBackward", [t("float32"), t("int32"), S(1.0), S(20.0), t("float32")], 0))
    out.append(("SoftplusBackward", [t("float32"), t("uint16"), S(1.0), S(20.0), t("float32")], INVALID))
    out.append(("SoftshrinkBackward", [t("float32"), t("float32"), S(-0.5), t("float32")], INVALID))
    out.append(("LeakyReluBackward", [t("float32"), t("float32"), ("s", 1, "uint16"), V(False), t("float32")], INVALID))
    return out


@pytest.mark.parametrize("soc", [SOC950, A2])
def test_validation_codes(soc):
    assert_codes(calls_and_codes(soc), soc)


# ---- torch_npu autograd on the emulator ----------------------------------------------------------------

_TORCH_BODY = """
import torch.nn.functional as Fn
for case in SPEC["cases"]:
    x, g = T(dec(case["x"])), T(dec(case["g"]))
    res = []
    for dev, fn in (("npu", case["fn"]), ("cpu", case["cpu"] or case["fn"])):
        xd = x.to(dev).detach().requires_grad_(True)
        eval(fn)(xd).backward(g.to(dev))
        res.append(enc(to_np(xd.grad)))
    OUT[case["id"]] = res
"""

# Run on Atlas A2 (Ascend910B4), where torch_npu's gelu and gelu_backward call aclnnGelu / aclnnGeluBackward (on
# Ascend 950, an aclnn-only SoC, it calls the V2 forms): whatever approximate asks, those compute the tanh form
# (the vendor's kernels), so F.gelu on the NPU is compared with torch CPU's approximate="tanh".
# (forward, dtype, bound of the gradient against torch CPU: 0 bit for bit, an int a max ulp distance, a float an
# absolute error where the vendor's formula cancels differently from torch's (hardswish: x / 3 + 1/2 against
# (2x + 3) / 6 near x = -1.5))
TORCH_CASES = [
    ("lambda x: Fn.hardtanh(x, -1.0, 2.0)", "float32", 0),
    ("lambda x: Fn.leaky_relu(x, 0.2)", "float32", 0),
    ("lambda x: Fn.elu(x, 1.5)", "float32", 8),
    ("lambda x: Fn.softplus(x, 2.0, 10.0)", "float32", 8),
    ("lambda x: Fn.mish(x)", "float32", 1e-5),      # the derivative crosses 0 near x = -1.19
    ("lambda x: Fn.hardswish(x)", "float32", 1e-6),
    ("lambda x: Fn.hardsigmoid(x)", "float32", 1),
    ("lambda x: Fn.logsigmoid(x)", "float32", 8),
    ("lambda x: Fn.softshrink(x, 0.5)", "float32", 0),
    ("lambda x: Fn.hardshrink(x, 0.5)", "bfloat16", 0),
    ("lambda x: torch.logit(x, 1e-3)", "float32", 8),
    ("lambda x: Fn.gelu(x)", "float32", 1e-5, "lambda x: Fn.gelu(x, approximate='tanh')"),
]


def test_torch_npu_autograd_matches_torch_cpu():
    rng = np.random.default_rng(77)   # its own: the inputs do not depend on which tests ran before
    spec = {"cases": []}
    for k, (fn, name, _, *cpu) in enumerate(TORCH_CASES):
        x = sample(name, (3, 17), rng, specials=False)
        if "logit" in fn:
            x = R.cast(rng.uniform(0.01, 0.99, (3, 17)), name)
        spec["cases"].append({"id": str(k), "fn": fn, "cpu": cpu[0] if cpu else None, "x": enc(x),
                              "g": enc(sample(name, (3, 17), rng, specials=False))})
    res = torch_npu_run(_TORCH_BODY, spec, soc=A2)
    for k, (fn, name, bound, *_) in enumerate(TORCH_CASES):
        got, want = (dec(v) for v in res[str(k)])
        if bound == 0:
            same_bits(got, want)
        elif isinstance(bound, float):
            assert np.nanmax(np.abs(got.astype(np.float64) - want.astype(np.float64))) <= bound, fn
        else:
            assert R.ulp_distance(got, want, name).max() <= bound, fn
