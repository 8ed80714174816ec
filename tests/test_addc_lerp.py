"""aclnnAddcmul / aclnnAddcdiv / aclnnLerps and their in-place forms (hicann/ops-math math/addcmul,
math/addcdiv, math/lerp) against a float64 NumPy reference (floats: within the fp32 steps' error,
pyaclnn/ops/_fidelity.py) or exact integer arithmetic, and torch CPU where torch has the operation;
broadcasting, strided views, the vendor's validation codes and messages."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided

RNG = np.random.default_rng(1517)
EPS32 = 2.0 ** -24


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


def _floats(name, shape):
    return R.cast(RNG.standard_normal(shape) * 2, name)


def _within(got, want, name, terms):
    """fp32 steps: |got - want| <= 4 fp32 roundings of the terms' size, plus the final rounding to `name`."""
    got = np.asarray(got).astype(np.float64)
    if name == "float64":
        assert np.all(np.abs(got - want) <= 1e-15 * terms)
        return
    bound = 4 * EPS32 * terms
    if name in ("float16", "bfloat16"):
        bound = bound + np.abs(R.cast(want, name).astype(np.float64) - want) * 2 + \
            np.abs(want) * (2.0 ** -10 if name == "float16" else 2.0 ** -7)
    assert np.all(np.abs(got - want) <= bound), np.max(np.abs(got - want) - bound)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("op", ["Addcmul", "Addcdiv"])
def test_addc_floats(op, name):
    s, a, b = _floats(name, (5, 33)), _floats(name, (5, 33)), _floats(name, (33,))
    if op == "Addcdiv":
        b = R.cast(np.abs(b.astype(np.float64)) + 0.5, name)
    got = getattr(ops, op)(s, a, b, ops.Scalar(0.37, "float64"), zeros((5, 33), name))
    s64, a64, b64 = (x.astype(np.float64) for x in (s, a, b))
    v = float(np.float32(0.37)) if name != "float64" else 0.37
    prod = a64 * b64 if op == "Addcmul" else a64 / b64
    _within(got, s64 + v * prod, name, np.abs(s64) + np.abs(v * prod))


@pytest.mark.parametrize("name", ["int32", "int64", "int8", "uint8"])
def test_addcmul_integers_wrap(name):
    s, a, b = (R.cast(RNG.integers(-60, 60, 40) if name != "uint8" else RNG.integers(0, 100, 40), name)
               for _ in range(3))
    got = ops.Addcmul(s, a, b, ops.Scalar(3, "int64"), zeros(40, name))
    with np.errstate(all="ignore"):
        want = (s.astype(np.int64) + 3 * (a.astype(np.int64) * b.astype(np.int64))).astype(R.np_dtype(name))
    assert got.tolist() == want.tolist()


def test_addcdiv_int64_truncates():
    got = ops.Addcdiv(np.int64([10, 10, 10, 10]), np.int64([7, -7, 5, 3]), np.int64([2, 2, 0, -1]),
                      ops.Scalar(2, "int64"), zeros(4, "int64"))
    assert got.tolist() == [16, 4, 10, 4]


@pytest.mark.parametrize("weight", [0.1, 0.7])
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_lerps(name, weight):
    s, e = _floats(name, (7, 9)), _floats(name, (9,))
    got = ops.Lerps(s, e, ops.Scalar(weight, "float64"), zeros((7, 9), name))
    s64, e64 = s.astype(np.float64), e.astype(np.float64)
    w = float(np.float32(weight))                      # Ascend 950: the weight as FLOAT
    _within(got, s64 + w * (e64 - s64), name, np.abs(s64) + np.abs(w * (e64 - s64)))


def test_lerps_out_wider_and_torch():
    torch = pytest.importorskip("torch")
    s, e = _floats("float32", (64,)), _floats("float32", (64,))
    got = ops.Lerps(s, e, ops.Scalar(0.1, "float64"), zeros(64, "float64"))
    want = torch.lerp(torch.from_numpy(s), torch.from_numpy(e), 0.1).numpy().astype(np.float64)
    assert np.all(np.abs(got - want) <= 2 * EPS32 * (np.abs(s) + np.abs(e)))


def test_inplace_forms_match_out_of_place_on_strided_views():
    s, a, b = _floats("float32", (4, 6)), _floats("float32", (4, 6)), _floats("float32", (4, 6))
    b = np.abs(b) + 0.5
    v = ops.Scalar(-0.5, "float64")
    for op in ("Addcmul", "Addcdiv"):
        want = getattr(ops, op)(s, a, b, v, zeros((4, 6), "float32"))
        t = strided(s, transpose=True)
        getattr(ops, "Inplace" + op)(t, strided(a), strided(b, transpose=True), v)
        assert t.numpy().tolist() == want.tolist()
    want = ops.Lerps(s, a, ops.Scalar(0.25, "float32"), zeros((4, 6), "float32"))
    t = strided(s)
    ops.InplaceLerps(t, strided(a, transpose=True), ops.Scalar(0.25, "float32"))
    assert t.numpy().tolist() == want.tolist()


def test_adamw_step_matches_torch_cpu():
    """The single-tensor AdamW update built from these operators and Muls/Sqrt/Divs/Adds: the moments and
    the parameter after two steps within 1e-6 of torch CPU's own AdamW (foreach=False)."""
    torch = pytest.importorskip("torch")
    p0, g = _floats("float32", (8, 5)), _floats("float32", (8, 5))
    p = torch.from_numpy(p0.copy()).requires_grad_(True)
    p.grad = torch.from_numpy(g)
    opt = torch.optim.AdamW([p], lr=1e-2, foreach=False)
    opt.step()
    m, v = pyaclnn.from_numpy(np.zeros_like(p0)), pyaclnn.from_numpy(np.zeros_like(p0))
    ops.InplaceLerps(m, g, ops.Scalar(0.1, "float64"))
    ops.InplaceMuls(v, ops.Scalar(0.999, "float64"))
    ops.InplaceAddcmul(v, g, g, ops.Scalar(0.001, "float64"))
    st = opt.state[p]
    assert np.abs(m.numpy() - st["exp_avg"].numpy()).max() <= 1e-6 * np.abs(g).max()
    assert np.abs(v.numpy() - st["exp_avg_sq"].numpy()).max() <= 1e-6 * (g * g).max()
    param = pyaclnn.from_numpy(p0 * np.float32(1 - 1e-2 * 1e-2))
    denom = ops.Sqrt(v.numpy(), zeros(p0.shape, "float32")) / np.float32(np.sqrt(0.001))
    denom = ops.Adds(denom, ops.Scalar(1e-8, "float64"), ops.Scalar(1, "int64"), zeros(p0.shape, "float32"))
    ops.InplaceAddcdiv(param, m, denom, ops.Scalar(-1e-2 / 0.1, "float64"))
    assert np.abs(param.numpy() - p.detach().numpy()).max() <= 1e-6 * np.abs(p0).max()


@pytest.mark.parametrize("call,text", [
    (lambda: ops.Addcmul(np.int16([1]), np.int16([1]), np.int16([1]), ops.Scalar(1, "int64"), zeros(1, "int16")),
     "self dtype INT16 is not supported"),
    (lambda: ops.Addcmul(np.int8([1]), np.uint8([1]), np.uint8([1]), ops.Scalar(1, "int64"), zeros(1, "int32")),
     "addcmul can not support promote dtype INT16"),
    (lambda: ops.Addcmul(np.float32([1]), np.float32([1]), np.float32([1]), ops.Scalar(1, "int64"), zeros(1, "int32")),
     "Result dtype FLOAT can't be cast to the desired output type INT32"),
    (lambda: ops.Addcmul(np.float32([1, 2]), np.float32([1, 2, 3]), np.float32([1]), ops.Scalar(1, "int64"),
                         zeros(3, "float32")), "broadcast"),
    (lambda: ops.InplaceAddcmul(pyaclnn.zeros((2,), "float32"), np.ones((3, 2), np.float32), np.float32([1, 1]),
                                ops.Scalar(1, "int64")), "Shape of out should be [3, 2]"),
    (lambda: ops.Addcdiv(np.int32([1]), np.int32([1]), np.int32([1]), ops.Scalar(1, "int64"), zeros(1, "int32")),
     "self dtype INT32 is not supported"),
    (lambda: ops.Addcdiv(zeros((1,) * 9, "float32"), zeros((1,) * 9, "float32"), zeros((1,) * 9, "float32"),
                         ops.Scalar(1, "int64"), zeros((1,) * 9, "float32")), "dimensions"),
    (lambda: ops.Lerps(np.float32([1]), np.float16([1]), ops.Scalar(0.5, "float32"), zeros(1, "float32")),
     "end dtype FLOAT16 should be the same as self dtype FLOAT"),
    (lambda: ops.Lerps(np.float64([1]), np.float64([1]), ops.Scalar(0.5, "float32"), zeros(1, "float64")),
     "self dtype DOUBLE is not supported"),
    (lambda: ops.Lerps(np.float32([1]), np.float32([1]), ops.Scalar(0.5, "float32"), zeros(1, "int32")),
     "out dtype INT32 is not supported"),
    (lambda: ops.Lerps(np.float32([1, 2]), np.float32([1, 2, 3]), ops.Scalar(0.5, "float32"), zeros(3, "float32")),
     "Shape of self and end can't broadcast."),
])
def test_invalid_arguments_return_161002(call, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == INVALID and text in str(e.value), str(e.value)


@pytest.mark.parametrize("func,n", [("aclnnAddcmulGetWorkspaceSize", 5), ("aclnnInplaceAddcdivGetWorkspaceSize", 4),
                                    ("aclnnLerpsGetWorkspaceSize", 4)])
def test_null_arguments_return_161001(func, n):
    assert raw_null_status(func, n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")
