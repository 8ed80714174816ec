"""The aclnnForeach* operators multi-tensor AdamW uses (hicann/ops-nn foreach/): every tensor of the lists
against torch CPU's _foreach_* (IEEE mul/add/div: bit for bit; sqrt: correctly rounded, torch within 1 ulp; lerp/addcmul/addcdiv within the fp32
steps' error) and against the emulator's single-tensor operator (the same arithmetic, bit for bit);
BF16 lists compute in fp32; per-tensor scalars (aclScalarList, a scalars tensor); the vendor's checks."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from test_elementwise_arith import same_bits
from _op_helpers import INVALID, NULLPTR, raw_null_status

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(1518)
SHAPES = [(3, 4), (7,), (2, 3, 5)]


def lists(name, k=1, positive=False):
    out = []
    for _ in range(k):
        xs = [R.cast(RNG.standard_normal(s) * 2, name) for s in SHAPES]
        if positive:
            xs = [R.cast(np.abs(x.astype(np.float64)) + 0.25, name) for x in xs]
        out.append(xs)
    return out


def empty_like(xs):
    return [pyaclnn.from_numpy(np.zeros_like(x)) for x in xs]


def tt(xs):
    return [torch.from_numpy(x.astype(np.float32) if x.dtype == R.BF16 else x) for x in xs]


def close32(got, want, terms):
    assert np.all(np.abs(got.astype(np.float64) - want) <= 4 * 2.0 ** -24 * terms + 1e-45)


@pytest.mark.parametrize("name", ["float32", "bfloat16"])
def test_mul_and_add_scalar_bit_exact_vs_torch(name):
    (xs,) = lists(name)
    for op, fn in (("ForeachMulScalarV2", torch._foreach_mul), ("ForeachAddScalarV2", torch._foreach_add)):
        out = empty_like(xs)
        getattr(ops, op)(xs, ops.Scalar(0.3, "float64"), out)
        want = fn(tt(xs), float(np.float32(0.3)))   # the scalar as FLOAT, the op in fp32, then to the dtype
        for o, w in zip(out, want):
            same_bits(o.numpy(), R.cast(w.numpy(), name))


def test_mul_scalar_int32_list():
    xs = [R.cast(RNG.integers(-1000, 1000, s), "int32") for s in SHAPES]
    out = empty_like(xs)
    ops.ForeachMulScalarV2(xs, ops.Scalar(7, "int64"), out)
    for o, x in zip(out, xs):
        assert o.numpy().tolist() == (x * 7).tolist()


def test_sqrt_div_scalar_list_match_torch_and_single_ops():
    (xs,) = lists("float32", positive=True)
    out = empty_like(xs)
    ops.ForeachSqrt(xs, out)
    for o, x, w in zip(out, xs, torch._foreach_sqrt(tt(xs))):
        same_bits(o.numpy(), np.sqrt(x.astype(np.float64)).astype(np.float32))   # correctly rounded
        same_bits(o.numpy(), ops.Sqrt(x, np.zeros_like(x)))
        assert R.ulp_distance(o.numpy(), w.numpy(), "float32").max() <= 1   # torch CPU's vector sqrt is not
    scalars = [0.5, 3.0, 1e-3]
    out = empty_like(xs)
    ops.ForeachDivScalarList(xs, [ops.Scalar(s, "float64") for s in scalars], out)
    for o, x, w in zip(out, xs, torch._foreach_div(tt(xs), [float(np.float32(s)) for s in scalars])):
        same_bits(o.numpy(), w.numpy())


def test_lerp_addcmul_addcdiv_match_single_tensor_ops_and_torch():
    a, b, c = lists("float32", 3, positive=True)
    out = empty_like(a)
    ops.ForeachLerpScalar(a, b, ops.Scalar(0.1, "float64"), out)
    for o, x, y, w in zip(out, a, b, torch._foreach_lerp(tt(a), tt(b), 0.1)):
        same_bits(o.numpy(), ops.Lerps(x, y, ops.Scalar(0.1, "float64"), np.zeros_like(x)))
        close32(o.numpy(), w.numpy().astype(np.float64), np.abs(x) + np.abs(y))
    out = empty_like(a)
    ops.ForeachAddcmulScalarV2(a, b, c, ops.Scalar(0.001, "float64"), out)
    for o, x, y, z, w in zip(out, a, b, c, torch._foreach_addcmul(tt(a), tt(b), tt(c), 0.001)):
        same_bits(o.numpy(), ops.Addcmul(x, y, z, ops.Scalar(0.001, "float64"), np.zeros_like(x)))
        close32(o.numpy(), w.numpy().astype(np.float64), np.abs(x) + np.abs(0.001 * y * z))
    steps = np.float32([-0.1, 0.25, -3.0])
    out = empty_like(a)
    ops.ForeachAddcdivScalarList(a, b, c, steps, out)
    for o, x, y, z, s, w in zip(out, a, b, c, steps, torch._foreach_addcdiv(tt(a), tt(b), tt(c), steps.tolist())):
        same_bits(o.numpy(), ops.Addcdiv(x, y, z, ops.Scalar(float(s), "float32"), np.zeros_like(x)))
        close32(o.numpy(), w.numpy().astype(np.float64), np.abs(x) + np.abs(s * y / z))


def test_in_place_lists_and_empty_lists():
    (xs,) = lists("float32")
    ts = [pyaclnn.from_numpy(x.copy()) for x in xs]
    ops.ForeachMulScalarV2(ts, ops.Scalar(2.0, "float32"), ts)
    for t, x in zip(ts, xs):
        same_bits(t.numpy(), x * np.float32(2))
    ops.ForeachSqrt([], [])   # nothing to do, no error


@pytest.mark.parametrize("call,text", [
    (lambda: ops.ForeachMulScalarV2([np.float32([1]), np.float16([1])], ops.Scalar(2.0, "float64"),
                                    [pyaclnn.zeros((1,), "float32"), pyaclnn.zeros((1,), "float16")]),
     "x1[1] dtype FLOAT16 should be the same as x1[0] dtype FLOAT"),
    (lambda: ops.ForeachMulScalarV2([np.float32([1])], ops.Scalar(2, "int64"), [pyaclnn.zeros((1,), "float32")]),
     "scalar dtype INT64 is not supported for a FLOAT tensor list"),
    (lambda: ops.ForeachMulScalarV2([np.float64([1])], ops.Scalar(2.0, "float64"), [pyaclnn.zeros((1,), "float64")]),
     "x1 dtype DOUBLE is not supported"),
    (lambda: ops.ForeachSqrt([np.float32([1]), np.float32([1])], [pyaclnn.zeros((1,), "float32")]),
     "out has 1 tensors, x1 has 2"),
    (lambda: ops.ForeachSqrt([np.float32([1, 2])], [pyaclnn.zeros((3,), "float32")]), "Shape of out[0] should be [2]"),
    (lambda: ops.ForeachSqrt([np.int32([1])], [pyaclnn.zeros((1,), "int32")]), "x1 dtype INT32 is not supported"),
    (lambda: ops.ForeachDivScalarList([np.float32([1])], [ops.Scalar(1.0, "float64")] * 2,
                                      [pyaclnn.zeros((1,), "float32")]), "scalars has 2 values, x1 has 1 tensors"),
    (lambda: ops.ForeachAddcdivScalarList([np.float32([1])], [np.float32([1])], [np.float32([1])], np.float32([1, 2]),
                                          [pyaclnn.zeros((1,), "float32")]), "scalars has 2 values"),
])
def test_invalid_arguments_return_161002(call, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == INVALID and text in str(e.value), str(e.value)


@pytest.mark.parametrize("func,n", [("aclnnForeachMulScalarV2GetWorkspaceSize", 3),
                                    ("aclnnForeachAddcdivScalarListGetWorkspaceSize", 5)])
def test_null_arguments_return_161001(func, n):
    assert raw_null_status(func, n) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")
