"""The operators torch.nn.utils.clip_grad_norm_ and torch.optim's fused AdamW reach on npu (issue 28):
aclnnForeachNorm (hicann/ops-nn foreach/foreach_norm): per tensor of a list its 1-, 2- or (Ascend 950) inf-norm
in fp32, against a float64 NumPy reference and torch CPU's _foreach_norm; every dtype of the vendor's list,
non-contiguous and empty tensors, the A2 kernel's modes in a subprocess, the documented checks; a torch_npu
child showing clip_grad_norm_ reaches it (the direct call's bits) and matches torch CPU."""
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


# ---- torch_npu: one child for the file -------------------------------------------------------------------

TORCH_BODY = """
grads = [dec(g) for g in SPEC["grads"]]
ps = [torch.nn.Parameter(T(g).npu()) for g in grads]
for p, g in zip(ps, grads):
    p.grad = T(g).npu()
OUT["total"] = enc(to_np(torch.nn.utils.clip_grad_norm_(ps, SPEC["max_norm"])))
OUT["clipped"] = [enc(to_np(p.grad)) for p in ps]
try:   # a 9-dim tensor: aclnnForeachNorm's tiling rejects it (torch's slow path would not)
    torch._foreach_norm([torch.zeros((1,) * 9).npu()], 2)
    OUT["nine_dims"] = "no error"
except RuntimeError as e:
    OUT["nine_dims"] = str(e)
"""


@pytest.fixture(scope="module")
def on_npu():
    grads = [RNG.standard_normal(s).astype(np.float32) for s in [(4, 5), (7,), (2, 3, 2)]]
    spec = {"grads": [enc(g) for g in grads], "max_norm": 1.0}
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
