"""The operators torch.nn.utils.clip_grad_norm_ and torch.optim's fused AdamW reach on npu:
aclnnForeachNorm (hicann/ops-nn foreach/foreach_norm): per tensor of a list its 1-, 2- or (Ascend 950) inf-norm
in fp32, against a float64 NumPy reference and torch CPU's _foreach_norm; every dtype of the vendor's list,
non-contiguous and empty tensors, the A2 kernel's modes in a subprocess, the documented checks.
aclnnApplyAdamWV2 (hicann/ops-nn optim/apply_adam_w_v2): one AdamW step in place, bit for bit against the
vendor kernel's fp32 steps written in NumPy (both SoCs' orders) and within fp32 rounding of torch's AdamW formula
in float64; every dtype, mixed FLOAT state with a FLOAT16/BF16 grad, amsgrad, maximize, FLOAT/INT64 step,
non-contiguous state, the op_api's checks.
One torch_npu child: clip_grad_norm_ reaches ForeachNorm (its tiling error comes back) and AdamW(fused=True)
ApplyAdamWV2 (no fallback exists), both matching torch CPU."""
from __future__ import annotations

import json

import numpy as np
import pytest

import helpers
import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _math_ops import A2, dec, enc, torch_npu_run
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided

RNG = np.random.default_rng(2807)
FLOATS = ["float32", "float16", "bfloat16"]     # the vendor's x/out list, both SoCs
SHAPES = [(3, 4), (5000,), (2, 3, 5), (0, 4), ()]
NORM_ULP = 4                                     # the note: fp32 <= 3 ulp vs float64 measured


def norm_ref(x, p):
    """The p-norm in float64 (p = 1, 2, inf), of every element."""
    a = np.abs(np.asarray(x, np.float64)).reshape(-1)
    if a.size == 0:
        return 0.0
    return a.max() if p == np.inf else a.sum() if p == 1 else np.sqrt((a * a).sum())


def norm_inputs(name):
    return [R.cast(RNG.standard_normal(s) * 3, name) for s in SHAPES]


def run_norm(xs, p, dtype="float64", views=False):
    out = [pyaclnn.zeros((1,), str(x.dtype) if x.dtype != R.BF16 else "bfloat16") for x in xs]
    ins = [strided(x, transpose=True) if views and x.ndim >= 2 and x.size else x for x in xs]
    ops.ForeachNorm(ins, ops.Scalar(p, dtype), out)
    return [o.numpy()[0] for o in out]


@pytest.mark.parametrize("name", FLOATS)
@pytest.mark.parametrize("p,pdt", [(2.0, "float64"), (1, "int64"), (float("inf"), "float32")])
def test_norm_vs_float64_and_torch(name, p, pdt):
    torch = pytest.importorskip("torch")
    xs = norm_inputs(name)
    got = run_norm(xs, p, pdt, views=name == "float32")
    for g, x in zip(got, xs):
        want = R.cast(np.float64(norm_ref(x, p)), name)
        assert R.ulp_distance(np.asarray([g]), np.asarray([want]), name).max() <= NORM_ULP, (x.shape, g, want)
    keep = [k for k, x in enumerate(xs) if x.size or p != np.inf]   # torch: no inf-norm of an empty tensor
    tx = [torch.from_numpy(xs[k].astype(np.float32)) for k in keep]
    for g, w in zip([got[k] for k in keep], torch._foreach_norm(tx, p)):
        assert abs(float(g) - w.item()) <= 1e-2 * abs(w.item()) + 1e-30


def test_norm_nan_inf_and_modes():
    xs = [np.float32([1, np.nan]), np.float32([-np.inf, 2]), np.float32([3, -4])]
    assert np.isnan(run_norm(xs, 2.0)[0]) and run_norm(xs, 2.0)[1:] == [np.inf, 5]
    assert np.isnan(run_norm(xs, np.inf)[0]) and run_norm(xs, np.inf)[1:] == [np.inf, 4]
    assert run_norm(xs, 1.5)[2] == 7        # int(p) == 1: the sum of |x|
    assert run_norm(xs, 3.0)[2] == 5        # any other p: the 2-norm (the kernel's default)
    ops.ForeachNorm([], ops.Scalar(2.0, "float64"), [])


def test_norm_a2_subprocess():
    """Atlas A2: the same lists; p = +inf takes the 2-norm (the A2 kernel has no max mode)."""
    rc, out, err = helpers.run_python("""
        import json, numpy as np, pyaclnn
        from pyaclnn import ops
        from pyaclnn.errors import AclError
        res = {}
        for name in ("float32", "float16", "bfloat16"):
            o = [pyaclnn.zeros((1,), name)]
            ops.ForeachNorm([np.float32([3, -4])] if name == "float32" else [pyaclnn.zeros((2,), name)],
                            ops.Scalar(float("inf"), "float32"), o)
            res[name] = float(o[0].numpy()[0])
        try:
            ops.ForeachNorm([np.float64([1])], ops.Scalar(2.0, "float64"), [pyaclnn.zeros((1,), "float64")])
        except AclError as e:
            res["f64"] = e.code
        print("RESULT " + json.dumps(res))
    """, {"PYACLNN_STUB_SOC": A2})
    res = json.loads([ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1][7:])
    assert res == {"float32": 5.0, "float16": 0.0, "bfloat16": 0.0, "f64": INVALID}, (res, err[-2000:])


def z(shape=(1,), name="float32"):
    return pyaclnn.zeros(shape, name)


@pytest.mark.parametrize("call,status,text", [
    (lambda: ops.ForeachNorm([np.float64([1])], ops.Scalar(2.0, "float64"), [z((1,), "float64")]), INVALID,
     "x dtype DOUBLE is not supported"),
    (lambda: ops.ForeachNorm([np.float32([1]), np.float16([1])], ops.Scalar(2.0, "float64"), [z(), z()]), INVALID,
     "x[1] dtype FLOAT16 should be the same as x[0] dtype FLOAT"),
    (lambda: ops.ForeachNorm([np.float32([1])], ops.Scalar(2.0, "float64"), [z((1,), "float16")]), INVALID,
     "out[0] dtype FLOAT16 should be the same as x[0] dtype FLOAT"),
    (lambda: ops.ForeachNorm([np.float32([1])], ops.Scalar(2, "int32"), [z()]), INVALID,
     "scalar dtype INT32 should be in dtype support list [FLOAT, DOUBLE, INT64]."),
    (lambda: ops.ForeachNorm([np.float32([1])] * 2, ops.Scalar(2.0, "float64"), [z()]), INVALID,
     "out has 1 tensors, x has 2"),
    (lambda: ops.ForeachNorm([np.float32([1])], ops.Scalar(2.0, "float64"), [z((2,))]), 561002,
     "out[0] has 2 elements, its shape size must be 1"),
    (lambda: ops.ForeachNorm([np.zeros((1,) * 9, np.float32)], ops.Scalar(2.0, "float64"), [z()]), 561002,
     "x[0] has 9 dims, at most 8 are supported"),
])
def test_norm_invalid_arguments(call, status, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == status and text in str(e.value), str(e.value)


def test_norm_null_arguments():
    assert raw_null_status("aclnnForeachNormGetWorkspaceSize", 3) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


# ---- ApplyAdamWV2 ------------------------------------------------------------------------------------------

HYPER = dict(lr=0.01, beta1=0.9, beta2=0.999, wd=0.05, eps=1e-8)


def adamw_ref64(var, m, v, mx, g, step, lr, beta1, beta2, wd, eps, amsgrad, maximize):
    """torch.optim.AdamW's step in float64 (torch/optim/adamw.py, _single_tensor_adamw), t = step + 1, with the
    hyperparameters as the operator's float parameters hold them."""
    var, m, v, mx, g = (np.asarray(a, np.float64) for a in (var, m, v, mx, g))
    lr, beta1, beta2, wd, eps = (float(np.float32(x)) for x in (lr, beta1, beta2, wd, eps))   # float parameters
    t = step + 1
    g = -g if maximize else g
    var = var * (1 - lr * wd)
    m = m + (g - m) * (1 - beta1)
    v = v * beta2 + g * g * (1 - beta2)
    mx = np.maximum(mx, v) if amsgrad else mx
    denom = np.sqrt(mx if amsgrad else v) / np.sqrt(1 - beta2 ** t) + eps
    return var - lr / (1 - beta1 ** t) * m / denom, m, v, mx


def adamw_steps32(soc950, var, m, v, mx, g, step, lr, beta1, beta2, wd, eps, amsgrad, maximize):
    """The vendor kernel's fp32 steps (A2: apply_adam_w_v2_fp.h, Ascend 950: the arch35 DAG)."""
    f = np.float32
    var, m, v, mx, g = (np.asarray(a, np.float32) for a in (var, m, v, mx, g))
    lr, beta1, beta2, wd, eps = (f(x) for x in (lr, beta1, beta2, wd, eps))
    t = f(step) + f(1)
    p1, p2 = f(np.float64(beta1) ** np.float64(t)), f(np.float64(beta2) ** np.float64(t))
    if soc950:
        g = g * f(-1 if maximize else 1)
        m = m * beta1 - g * (beta1 - f(1))
        v = v * beta2 - (g * g) * (beta2 - f(1))
        mx = np.maximum(v, mx) if amsgrad else mx
        denom = np.sqrt(mx if amsgrad else v) / np.sqrt(f(1) - p2) + eps
        return var * (f(1) - lr * wd) + lr / (p1 - f(1)) * (m / denom), m, v, mx
    step_size, c2 = lr / (f(1) - p1), f(1) / np.sqrt(f(1) - p2)
    g = g * f(-1) if maximize else g
    var1 = var * (f(1) - lr * wd)
    m = (g - m) * (f(1) - beta1) + m
    v = v * beta2 + (g * g) * (f(1) - beta2)
    mx = np.maximum(mx, v) if amsgrad else mx
    return var1 - (m / (np.sqrt(mx if amsgrad else v) * c2 + eps)) * step_size, m, v, mx


def adamw_state(name, gname, shape=(4, 33)):
    var = R.cast(RNG.standard_normal(shape), name)
    m = R.cast(RNG.standard_normal(shape) * 0.1, name)
    v = R.cast(np.abs(RNG.standard_normal(shape)) * 0.01, name)
    mx = R.cast(np.asarray(v, np.float64) * RNG.uniform(0.5, 1.5, shape), gname)
    return var, m, v, mx, R.cast(RNG.standard_normal(shape), gname)


def run_adamw(state, step, step_dtype="float32", amsgrad=False, maximize=False, views=False, **kw):
    h = dict(HYPER, **kw)
    ts = [strided(a, transpose=True) if views and k < 3 else pyaclnn.from_numpy(np.ascontiguousarray(a))
          for k, a in enumerate(state)]
    stp = pyaclnn.from_numpy(np.asarray([step], step_dtype))
    ops.ApplyAdamWV2(ts[0], ts[1], ts[2], ts[3] if amsgrad else None, ts[4], stp, h["lr"], h["beta1"], h["beta2"],
                     h["wd"], h["eps"], amsgrad, maximize)
    return [t.numpy() for t in ts[:4]]


@pytest.mark.parametrize("name,gname,amsgrad,maximize,step_dtype", [
    ("float32", "float32", False, False, "float32"), ("float32", "float32", True, True, "int64"),
    ("float16", "float16", True, False, "float32"), ("bfloat16", "bfloat16", False, True, "int64"),
    ("float32", "bfloat16", True, False, "float32"), ("float32", "float16", False, False, "int64"),
    ("float16", "float32", False, False, "float32"),      # another mix: through FLOAT and back
])
def test_adamw_vendor_steps_and_float64(name, gname, amsgrad, maximize, step_dtype):
    state = adamw_state(name, gname)
    got = run_adamw(state, 4, step_dtype, amsgrad, maximize, views=name == "float32" and amsgrad)
    args = (*state, 4, 0.01, 0.9, 0.999, 0.05, 1e-8, amsgrad, maximize)
    dtypes = [name, name, name, gname]
    for k, (g, w32) in enumerate(zip(got, adamw_steps32(True, *args))):
        if k < 3 or amsgrad:
            assert np.array_equal(R.cast(w32, dtypes[k]).view(np.uint8), np.asarray(g).view(np.uint8)), k
    want = adamw_ref64(*args)
    # var's update carries 1 - beta2^t computed in fp32 (cancellation: 1e-5 relative at t = 5)
    update = np.abs(want[0] - np.asarray(state[0], np.float64) * (1 - 0.01 * 0.05))
    for k, (g, w) in enumerate(zip(got, want)):
        if k < 3 or amsgrad:   # within a few fp32 roundings, then one rounding to the tensor's dtype
            tol = {"float32": 2.0 ** -21, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}[dtypes[k]]
            scale = [np.abs(state[0]), np.abs(state[1]) + 0.1 * np.abs(state[4]), np.abs(w), np.abs(w)][k]
            bound = tol * (np.abs(w) + scale.astype(np.float64)) + 1e-30 + (2e-5 * update if k == 0 else 0)
            assert np.all(np.abs(g.astype(np.float64) - w) <= bound), (k, np.max(np.abs(g - w) / bound))
    if not amsgrad:
        assert np.array_equal(got[3], state[3])     # maxGradNorm left alone


def bf16_away(x):
    """float32 values to BF16 rounding half away from zero (the A2 kernels' CAST_ROUND)."""
    b = np.asarray(x, np.float32).view(np.uint32)
    r = ((b.astype(np.uint64) + 0x8000) & 0xFFFF0000).astype(np.uint32).view(np.float32)
    return R.cast(np.where(np.isnan(x), x, r), "bfloat16")


def test_adamw_a2_subprocess():
    """Atlas A2: the same dtype lists and checks; the fp kernels' order of the steps, bit for bit; BF16 written by
    the kernel itself (all BF16, or a BF16 maxGradNorm beside FLOAT state) rounds half away from zero, BF16 through
    the op_api's casts (another mix) to nearest even."""
    rc, out, err = helpers.run_python("""
        import json, numpy as np
        import test_optim_ops as T
        from reference import elementwise as R
        from pyaclnn.errors import AclError
        res = {"bits": []}
        for name, gname, amsgrad, maximize in (("float32", "float32", False, False), ("float32", "float32", True, True),
                                               ("bfloat16", "bfloat16", True, False), ("float32", "bfloat16", True, True),
                                               ("bfloat16", "float32", True, False), ("float16", "float16", True, False)):
            state = T.adamw_state(name, gname)
            got = T.run_adamw(state, 9, "int64", amsgrad, maximize)
            want = T.adamw_steps32(False, *state, 9, 0.01, 0.9, 0.999, 0.05, 1e-8, amsgrad, maximize)
            native = name == gname or name == "float32"
            for k, (g, w) in enumerate(zip(got, want)):
                d = [name, name, name, gname][k]
                w = T.bf16_away(w) if d == "bfloat16" and native else R.cast(w, d)
                res["bits"].append(k == 3 and not amsgrad or g.tobytes() == w.tobytes())
        res["tie"] = T.adamw_tie()
        try:
            T.run_adamw(T.adamw_state("float64", "float64"), 0)
        except AclError as e:
            res["f64"] = e.code
        print("RESULT " + json.dumps(res))
    """, {"PYACLNN_STUB_SOC": A2, "PYTHONPATH": str(__import__("pathlib").Path(__file__).parent)})
    lines = [ln for ln in out.splitlines() if ln.startswith("RESULT ")]
    assert lines, err[-3000:]
    assert json.loads(lines[-1][7:]) == {"bits": [True] * 24, "tie": [1.1328125] * 4, "f64": INVALID}


def adamw_tie():
    """A BF16 tie: with beta2 = 0, v = grad * grad = 1.0625^2 = 1 + 2^-3 + 2^-8, half way between two BF16
    values: v and maxGradNorm (all BF16; BF16 maxGradNorm beside FLOAT state) as written."""
    one = lambda x, d: R.cast(np.full(4, x), d)
    out = []
    for name in ("bfloat16", "float32"):
        state = (one(1, name), one(0, name), one(0, name), one(0, "bfloat16"), one(1.0625, "bfloat16"))
        got = run_adamw(state, 0, "float32", True, False, beta2=0.0)
        out += [float(got[2][0]) if name == "bfloat16" else float(got[3][0]), float(got[3][0])]
    return out


def test_adamw_bf16_tie_rounds_to_even_on_950():
    assert adamw_tie() == [1.125, 1.125, 1.125, 1.125]


def test_adamw_empty_var_does_nothing():
    e = np.zeros((0, 3), np.float32)
    run_adamw((e, e, e, e, e), 0)


def _adamw_call(var=None, mx=None, grad=None, step=None, amsgrad=False):
    t = lambda a: pyaclnn.from_numpy(np.asarray(a))
    return lambda: ops.ApplyAdamWV2(t(var if var is not None else np.float32([1, 2])), t(np.float32([0, 0])),
                                    t(np.float32([0, 0])), None if mx is None else t(mx),
                                    t(grad if grad is not None else np.float32([1, 2])),
                                    t(step if step is not None else np.float32([0])), 0.1, 0.9, 0.999, 0.01, 1e-8,
                                    amsgrad, False)


@pytest.mark.parametrize("call,status,text", [
    (_adamw_call(amsgrad=True), NULLPTR, "maxGradNormOptionalRef is NULL"),
    (_adamw_call(var=np.float64([1, 2])), INVALID, "varRef dtype DOUBLE is not supported"),
    (_adamw_call(mx=np.int32([1, 2]), amsgrad=True), INVALID, "maxGradNormOptionalRef dtype INT32 is not supported"),
    (_adamw_call(step=np.int32([0])), INVALID, "step dtype INT32 is not supported (supported: FLOAT, INT64)"),
    (_adamw_call(grad=np.float32([1, 2, 3])), INVALID, "Shape of grad should be [2], but current is [3]"),
    (_adamw_call(mx=np.float32([1]), amsgrad=True), INVALID, "Shape of maxGradNormOptionalRef should be [2]"),
    (_adamw_call(step=np.float32([0, 1])), INVALID, "Numel of step must be 1, but got 2."),
])
def test_adamw_invalid_arguments(call, status, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == status and text in str(e.value), str(e.value)


# ---- torch_npu: one child for the file -------------------------------------------------------------------

TORCH_BODY = """
grads = [dec(g) for g in SPEC["grads"]]
ps = [torch.nn.Parameter(T(g).npu()) for g in grads]
for p, g in zip(ps, grads):
    p.grad = T(g).npu()
OUT["total"] = enc(to_np(torch.nn.utils.clip_grad_norm_(ps, SPEC["max_norm"])))
OUT["clipped"] = [enc(to_np(p.grad)) for p in ps]
ws = [dec(w) for w in SPEC["weights"]]
qs = [torch.nn.Parameter(T(w).npu()) for w in ws]
opt = torch.optim.AdamW(qs, lr=0.01, weight_decay=0.05, amsgrad=True, fused=True)
for it in range(2):
    for q, g in zip(qs, grads):
        q.grad = T(g * (it + 1)).npu()
    opt.step()
OUT["adamw"] = [enc(to_np(q)) for q in qs]
try:   # a 9-dim tensor: aclnnForeachNorm's tiling rejects it (torch's slow path would not)
    torch._foreach_norm([torch.zeros((1,) * 9).npu()], 2)
    OUT["nine_dims"] = "no error"
except RuntimeError as e:
    OUT["nine_dims"] = str(e)
"""


@pytest.fixture(scope="module")
def on_npu():
    grads = [RNG.standard_normal(s).astype(np.float32) for s in [(4, 5), (7,), (2, 3, 2)]]
    spec = {"grads": [enc(g) for g in grads], "max_norm": 1.0,
            "weights": [enc(RNG.standard_normal(g.shape).astype(np.float32)) for g in grads]}
    return grads, spec, torch_npu_run(TORCH_BODY, spec)


def test_torch_npu_clip_grad_norm(on_npu):
    """clip_grad_norm_ on npu: _foreach_norm reaches aclnnForeachNorm (its 561002 for a 9-dim tensor comes back;
    the total is the 2-norm of the direct call's per-tensor norms) and matches torch CPU."""
    torch = pytest.importorskip("torch")
    grads, spec, res = on_npu
    per = np.float32(run_norm(grads, 2.0))
    assert "aclnnForeachNorm" in res["nine_dims"] and "561002" in res["nine_dims"], res["nine_dims"]
    total = dec(res["total"]).reshape(-1)[0]
    assert abs(float(total) - float(np.sqrt((per.astype(np.float64) ** 2).sum()))) <= 2e-6 * float(total)
    ps = [torch.nn.Parameter(torch.from_numpy(g.copy())) for g in grads]
    for p, g in zip(ps, grads):
        p.grad = torch.from_numpy(g.copy())
    want = torch.nn.utils.clip_grad_norm_(ps, 1.0)
    assert abs(float(total) - want.item()) <= 1e-6 * want.item()
    for c, p in zip(res["clipped"], ps):
        np.testing.assert_allclose(dec(c), p.grad.numpy(), rtol=2e-6, atol=1e-7)


def test_torch_npu_fused_adamw(on_npu):
    """AdamW(fused=True, amsgrad=True) on npu, two steps: _fused_adamw_ reaches aclnnApplyAdamWV2 (torch_npu has no
    fallback: the step fails without it) and matches torch CPU's AdamW within fp32 rounding."""
    torch = pytest.importorskip("torch")
    grads, spec, res = on_npu
    ps = [torch.nn.Parameter(torch.from_numpy(dec(w).copy())) for w in spec["weights"]]
    opt = torch.optim.AdamW(ps, lr=0.01, weight_decay=0.05, amsgrad=True)
    for it in range(2):
        for p, g in zip(ps, grads):
            p.grad = torch.from_numpy(g * (it + 1))
        opt.step()
    for got, p in zip(res["adamw"], ps):
        np.testing.assert_allclose(dec(got), p.detach().numpy(), rtol=1e-6, atol=1e-7)
