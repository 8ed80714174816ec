"""Operators op-plugin's own test files needed (the "misc" share): Cummax and Cummin
(reduce/cum_extreme.toml), Amin, AminmaxDim and AminmaxAll (reduce/extremes_more.toml),
FastGelu and FastGeluBackward (activation/fast_gelu.toml), Sinc, InplaceSinc, Gcd, Lerp and
InplaceLerp (math/suite_math.toml), AddRelu and InplaceAddRelu
(activation/add_relu.toml), Prelu and PreluBackward (activation/prelu.toml),
SoftMarginLoss and SoftMarginLossBackward (loss/soft_margin.toml), NLLLoss2d and
NLLLoss2dBackward (loss/nll_loss2d.toml), ReduceNansum (reduce/nansum.toml), Take
(index/take.toml) and the others this file's tables list -- against float64 NumPy references written
from the vendor's definitions (exact operators bit for bit), every dtype of the vendor's lists (Ascend 950 here,
Atlas A2 statuses in one subprocess), strided views, empty and 0-d tensors, the validation codes and messages,
and torch's calls through torch_npu on the emulator against torch CPU (added to the family test files'
torch_npu children: test_reduce_more.py ...).

Adding an operator adds rows to the tables."""
from __future__ import annotations

import numpy as np
import pytest

from _gen_ops import assert_null_checks, codes_on, message
from _math_ops import A2, INVALID, code, names, same_bits
from _op_helpers import strided
from pyaclnn import capi, ops
from reference import elementwise as R

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(2121)
FLOATS = ("float32", "float16", "bfloat16", "float64")
ACL_OF = {"float32": capi.ACL_FLOAT, "float16": capi.ACL_FLOAT16, "bfloat16": capi.ACL_BF16, "int32": capi.ACL_INT32}


def values(name, shape, scale=3.0):
    """Samples of dtype `name` with repeats (ties) and, for floats, a NaN and infinities."""
    if name == "bool":
        return RNG.random(shape) > 0.5
    if name in FLOATS:
        x = np.round(RNG.standard_normal(shape) * scale, 1)
        flat = x.reshape(-1)
        if flat.size > 8:
            flat[[3, 5, 7]] = [np.nan, np.inf, -np.inf]
        return R.cast(x, name)
    info = np.iinfo(R.np_dtype(name))
    return R.cast(RNG.integers(max(int(info.min), -6), min(int(info.max), 7), shape), name)


# ---- Cummax / Cummin: exact -------------------------------------------------------------------------------------

def cum_ref(x, dim, largest):
    """The vendor kernel's walk: keep the running value while strictly better, else take the new element."""
    xs = np.moveaxis(np.asarray(x), dim, -1)
    vals, idx = xs.copy(), np.zeros(xs.shape, np.int64)
    for pos in np.ndindex(xs.shape[:-1]):
        cur, at = None, 0
        for k in range(xs.shape[-1]):
            y = xs[pos + (k,)]
            keep = cur is not None and (cur > y if largest else cur < y)
            if not keep:
                cur, at = y, k
            vals[pos + (k,)], idx[pos + (k,)] = cur, at
    return np.moveaxis(vals, -1, dim), np.moveaxis(idx, -1, dim)


@pytest.mark.parametrize("name", names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 UINT8 BOOL BF16"))
def test_cummax_cummin_every_dtype(name):
    x = values(name, (3, 4, 5))
    for op, largest in (("Cummax", True), ("Cummin", False)):
        for dim, idx_dtype, view in ((1, np.int64, True), (-1, np.int32, False), (0, np.int64, True)):
            want_v, want_i = cum_ref(x, dim, largest)
            v, i = getattr(ops, op)(strided(x, transpose=True) if view else x, dim, np.zeros(x.shape, x.dtype),
                                    np.zeros(x.shape, idx_dtype))
            same_bits(v, want_v)
            same_bits(i, want_i.astype(idx_dtype))


def test_cummax_cummin_edges():
    x = np.array([1.0, np.nan, 2.0, 2.0, -0.0, 0.0, np.nan, np.nan], np.float32)
    v, i = ops.Cummax(x, 0, np.zeros_like(x), np.zeros(8, np.int64))
    same_bits(v, np.array([1, np.nan, 2, 2, 2, 2, np.nan, np.nan], np.float32))   # a NaN is replaced, ties: later
    same_bits(i, np.array([0, 1, 2, 3, 3, 3, 6, 7]))
    v, i = ops.Cummin(x, 0, np.zeros_like(x), np.zeros(8, np.int64))
    same_bits(v, np.array([1, np.nan, 2, 2, -0.0, 0.0, np.nan, np.nan], np.float32))
    same_bits(i, np.array([0, 1, 2, 3, 4, 5, 6, 7]))
    v, i = ops.Cummin(np.float32(3).reshape(()), -1, np.zeros((), np.float32), np.zeros((), np.int64))
    assert v.tolist() == 3.0 and i.tolist() == 0                      # Cummin takes a 0-d self
    e = np.zeros((0, 3), np.float32)
    assert ops.Cummax(e, 1, e.copy(), np.zeros((0, 3), np.int64))[0].shape == (0, 3)


def test_cummax_cummin_validation():
    x, i64 = np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int64)
    assert "dimension specified as 0 but tensor has not dimensions." in message(
        ops.Cummax, np.float32(1).reshape(()), 0, np.zeros((), np.float32), np.zeros((), np.int64))
    assert "dim must be within the range of [-2, 1], but it is 2." in message(ops.Cummin, x, 2, x, i64)
    assert code(ops.Cummax, x, 1, x, i64.astype(np.int16)) == INVALID
    assert code(ops.Cummin, x.astype(np.uint16), 1, x.astype(np.uint16), i64) == INVALID
    assert "to have same size as tensor for indicesOut" in message(ops.Cummax, x, 1, x, np.zeros((3, 2), np.int64))
    assert code(ops.Cummin, x, 1, x.astype(np.float16), i64) == 0    # valuesOut of another listed dtype: cast
    assert_null_checks((("aclnnCummaxGetWorkspaceSize", 4), ("aclnnCumminGetWorkspaceSize", 4)))


# ---- Amin, AminmaxDim, AminmaxAll: exact ----------------------------------------------------------------------

def reduced(shape, dims, keep):
    dims = [d % len(shape) for d in dims] if dims else list(range(len(shape)))
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keep or i not in dims)


def extreme(x, dims, keep, fn):
    """np.min / np.max over dims (none: all) of x widened to float64, NaN propagating, cast back to x's dtype."""
    axis = tuple(d % x.ndim for d in dims) if dims else None
    return R.cast(fn(np.asarray(x, np.float64), axis=axis, keepdims=keep), str(x.dtype) if x.dtype != R.BF16
                  else "bfloat16")


@pytest.mark.parametrize("name", names("FLOAT FLOAT16 UINT8 INT32 INT64 INT16 INT8 DOUBLE BOOL BF16"))
def test_amin_aminmax_every_dtype(name):
    x = values(name, (3, 4, 5))
    for dims, keep in (([1], False), ([0, -1], True), ([], False)):
        got = ops.Amin(strided(x, transpose=True), dims, keep, np.zeros(reduced(x.shape, dims, keep), x.dtype))
        same_bits(got.reshape(reduced(x.shape, dims, keep)), extreme(x, dims, keep, np.min))
    for dim, keep in ((1, False), (-1, True), (0, False)):
        shape = reduced(x.shape, [dim], keep)
        mn, mx = ops.AminmaxDim(strided(x), dim, keep, np.zeros(shape, x.dtype), np.zeros(shape, x.dtype))
        same_bits(mn.reshape(shape), extreme(x, [dim], keep, np.min))
        same_bits(mx.reshape(shape), extreme(x, [dim], keep, np.max))
    mn, mx = ops.AminmaxAll(strided(x, transpose=True), np.zeros((), x.dtype), np.zeros((), x.dtype))
    same_bits(mn.reshape(()), extreme(x, [], False, np.min))
    same_bits(mx.reshape(()), extreme(x, [], False, np.max))


def test_amin_aminmax_edges_and_validation():
    s = np.float32(-2.5).reshape(())
    assert ops.Amin(s, [0], True, np.zeros((), np.float32)).tolist() == -2.5           # 0-d: copied
    assert [t.tolist() for t in ops.AminmaxDim(s, -1, False, np.zeros((), np.float32),
                                               np.zeros((), np.float32))] == [-2.5, -2.5]
    e = np.zeros((0, 3), np.float32)
    assert ops.AminmaxAll(e, np.ones(2, np.float32), np.ones(2, np.float32))[0].tolist() == [1, 1]  # early return
    assert ops.AminmaxDim(e, 1, False, np.zeros(0, np.float32), np.zeros(0, np.float32))[0].shape == (0,)
    x, f2 = np.zeros((2, 3), np.float32), np.zeros(2, np.float32)
    assert "Provided dim 2 must be in the range of [-2, 1]." in message(ops.Amin, x, [2], False, f2)
    assert "Dim 1 appears multiple times in the list of dims." in message(ops.Amin, x, [1, -1], False, f2)
    assert "Expected reducution dim 0 to have non-zero size." in message(ops.Amin, e, [0], False, np.zeros(3, np.float32))
    assert code(ops.Amin, x, [1], False, f2.astype(np.float16)) == INVALID
    assert code(ops.Amin, x, [1], False, np.zeros(3, np.float32)) == INVALID
    assert code(ops.Amin, x.astype(np.uint16), [1], False, f2.astype(np.uint16)) == INVALID
    assert "Expected reduction dim 0 to have non-zero size, but check failed." in message(
        ops.AminmaxDim, e, 0, False, np.zeros(3, np.float32), np.zeros(3, np.float32))
    assert "Provided dim -3 must be in the range of [-2, 1]." in message(ops.AminmaxDim, x, -3, False, f2, f2)
    assert "Expected both tensors to have same dtype" in message(ops.AminmaxDim, x, 1, False, f2, f2.astype(np.float16))
    assert "is not equal with shape" in message(ops.AminmaxDim, x, 1, True, f2, f2)
    assert code(ops.AminmaxAll, x, np.zeros(1, np.float32), np.zeros((1, 1), np.float32)) == 0   # one element each
    assert code(ops.AminmaxAll, x, f2, f2) == INVALID
    assert code(ops.AminmaxAll, x, np.zeros((), np.float16), np.zeros((), np.float32)) == INVALID
    assert_null_checks((("aclnnAminGetWorkspaceSize", 4), ("aclnnAminmaxDimGetWorkspaceSize", 5),
                        ("aclnnAminmaxAllGetWorkspaceSize", 3)))


# ---- FastGelu, FastGeluBackward: class c ------------------------------------------------------------------------

@pytest.mark.parametrize("name", names("FLOAT FLOAT16 BF16"))
def test_fast_gelu_and_backward(name):
    x = R.cast(np.concatenate([np.linspace(-20, 20, 4001), [0.0, -0.0, np.inf, -np.inf, np.nan]]), name)
    dy = R.cast(RNG.standard_normal(x.size), name)
    x64, dy64 = np.asarray(x, np.float64), np.asarray(dy, np.float64)
    e = np.exp(-1.702 * x64)
    with np.errstate(all="ignore"):
        want = x64 / (1 + e)
        s = 1 / (1 + e)
        want_b = dy64 * (s + 1.702 * x64 * e * s * s)
    got = ops.FastGelu(strided(x), np.zeros_like(x))
    got_b = ops.FastGeluBackward(dy, strided(x), np.zeros_like(x))
    fin = np.isfinite(x64)
    assert np.isnan(np.asarray(got, np.float64)[-1]) and np.asarray(got, np.float64)[-3] == np.inf
    assert np.isnan(np.asarray(got, np.float64)[-2])            # -inf / inf: the kernel's Div gives NaN
    if name == "float32":
        bound = 3.1 * 2.0 ** -24 * np.maximum(1, np.abs(x64))
        assert np.all(np.abs(got - want)[fin] <= (bound * np.abs(want) + 1e-45)[fin])
        assert np.all(np.abs(got_b - want_b)[fin] <= (2.7 * 2.0 ** -24 * np.abs(dy64) * np.maximum(1, np.abs(x64)))[fin])
    else:
        assert R.ulp_distance(got, R.cast(want, name), name)[fin].max() <= 1
        assert R.ulp_distance(got_b, R.cast(want_b, name), name)[fin].max() <= 1


def test_fast_gelu_validation():
    x = np.zeros((2, 3), np.float32)
    assert "Expected both tensors to have same dtype" in message(ops.FastGelu, x, x.astype(np.float16))
    assert code(ops.FastGelu, x.astype(np.float64), x.astype(np.float64)) == INVALID
    assert "to have same size as tensor for out" in message(ops.FastGelu, x, np.zeros((3, 2), np.float32))
    assert code(ops.FastGeluBackward, x, x, np.zeros((2, 1), np.float32)) == INVALID
    assert code(ops.FastGeluBackward, x.astype(np.float16), x, x) == INVALID
    assert_null_checks((("aclnnFastGeluGetWorkspaceSize", 2), ("aclnnFastGeluBackwardGetWorkspaceSize", 3)))


# ---- Sinc, InplaceSinc (class c), Gcd (exact) ------------------------------------------------------------------

def sinc64(x):
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        return np.where(x == 0, 1.0, np.sin(np.pi * x) / (np.pi * x))


@pytest.mark.parametrize("name", names("FLOAT FLOAT16 DOUBLE INT8 INT16 INT32 INT64 BOOL UINT8 BF16"))
def test_sinc_every_dtype(name):
    if name in FLOATS:
        x = R.cast(np.concatenate([np.linspace(-30, 30, 2401), [0.0, -0.0, 1e-30, np.inf, np.nan]]), name)
    else:
        x = values(name, (7, 11))
    out_name = name if name in FLOATS else "float32"
    want = sinc64(x)
    for out in ((out_name, "float64") if name == "int32" else (out_name,)):
        got = np.asarray(ops.Sinc(strided(x), np.zeros(x.shape, R.np_dtype(out))), np.float64)
        half_ulp = {"float32": 0.0, "float64": 0.0, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8}[out]
        fin = np.isfinite(np.asarray(x, np.float64))
        # DOUBLE: sin(pi x) / (pi x) in double, as the reference; libm's sin is not correctly rounded, so two
        # such computations differ by up to an ulp of sin's argument over pi x: 2^-49 absolute is ample
        bound = (2.0 ** -49 if name == "float64" else 1.75 * 2.0 ** -24) + half_ulp * np.abs(want)
        assert np.all(np.abs(got - want)[fin] <= bound[fin]), (name, out)
        assert np.isnan(got[~fin]).all()
    if name in FLOATS:
        ref = x.copy()
        ops.InplaceSinc(ref)
        same_bits(ref, ops.Sinc(x, np.zeros_like(x)))


@pytest.mark.parametrize("pair", [("int32", "int32"), ("int16", "int64"), ("int8", "uint8"), ("uint8", "uint8"),
                                  ("bool", "int32"), ("int64", "int64")])
def test_gcd(pair):
    a, b = values(pair[0], (4, 6)), values(pair[1], (6,))
    p = np.result_type(a.dtype, b.dtype) if pair[0] != "bool" else np.dtype(pair[1])
    got = ops.Gcd(strided(a), b, np.zeros((4, 6), p))
    same_bits(got, np.gcd(a.astype(np.int64), b.astype(np.int64)).astype(p))
    m = np.iinfo(np.int64).min
    same_bits(ops.Gcd(np.array([m, m, 0, -12], np.int64), np.array([0, 6, 0, 18], np.int64), np.zeros(4, np.int64)),
              np.array([m, 2, 0, 6], np.int64))


def test_sinc_gcd_validation():
    x = np.zeros((2, 3), np.float32)
    assert code(ops.Sinc, x, np.zeros((2, 3), np.int32)) == INVALID
    assert code(ops.Sinc, x.astype(np.uint16), x) == INVALID
    assert "to have same size as tensor for out" in message(ops.Sinc, x, np.zeros((3, 2), np.float32))
    assert code(ops.InplaceSinc, x.astype(np.int32)) == INVALID
    i = np.zeros((2, 3), np.int32)
    assert "gcd not implemented for BOOL" in message(ops.Gcd, i.astype(bool), i.astype(bool), i)
    assert "Out type should be integral but got FLOAT." in message(ops.Gcd, i, i, x)
    assert "get promoteType dtype FLOAT should be in dtype support list" in message(ops.Gcd, x, i, i)
    assert "Result type INT64 can't be cast to the desired output type BOOL." in message(
        ops.Gcd, i.astype(np.int64), i, i.astype(bool))
    assert code(ops.Gcd, i, np.zeros((4,), np.int32), i) == INVALID
    from _op_helpers import INNER_NULLPTR, raw_null_status
    assert raw_null_status("aclnnSincGetWorkspaceSize", 2) == INNER_NULLPTR      # CheckNotNull -> 561103
    assert raw_null_status("aclnnInplaceSincGetWorkspaceSize", 1) == INNER_NULLPTR
    assert_null_checks((("aclnnGcdGetWorkspaceSize", 3),))


# ---- Lerp, InplaceLerp (class b: the kernel's fused steps) -------------------------------------------------------

def lerp_ref(s, e, w, name):
    """The kernel's two forms in float64 (the fp32 products are exact in it; one rounding to fp32 then name)."""
    s, e, w = (np.asarray(v, np.float64) for v in (s, e, w))
    d = R.cast(e - s, "float32").astype(np.float64) if name != "float64" else e - s
    r = np.where(w < 0.5, s + w * d, e + (w - 1) * d)
    return R.cast(R.cast(r, "float32") if name != "float64" else r, name)


@pytest.mark.parametrize("name", names("FLOAT16 FLOAT BF16"))
def test_lerp_tensor(name):
    s, e = R.cast(RNG.standard_normal((3, 4, 5)) * 4, name), R.cast(RNG.standard_normal((4, 1)) * 4, name)
    w = R.cast(np.concatenate([RNG.uniform(-0.5, 1.5, 4), [1.0]]), name)
    got = ops.Lerp(strided(s, transpose=True), e, w, np.zeros((3, 4, 5), s.dtype))
    assert R.ulp_distance(got, lerp_ref(s, e, w, name), name).max() <= 1
    ends = np.broadcast_to(e, (3, 4, 5))
    assert np.array_equal(np.asarray(got, np.float64)[..., 4], np.asarray(ends, np.float64)[..., 4])   # weight 1: end exactly
    ref = s.copy()
    ops.InplaceLerp(ref, e, w)
    same_bits(ref, got)


def test_lerp_tensor_validation():
    x = np.zeros((2, 3), np.float32)
    assert code(ops.Lerp, x.astype(np.float64), x.astype(np.float64), x.astype(np.float64), x.astype(np.float64)) == INVALID
    assert "expected dtype is FLOAT but found FLOAT16" in message(ops.Lerp, x, x, x.astype(np.float16), x)
    assert "Shape of self and end can't broadcast." in message(ops.Lerp, x, np.zeros(4, np.float32), x, x)
    assert "can not broadcast" in message(ops.Lerp, x, x, np.zeros(4, np.float32), x)
    assert code(ops.Lerp, x, x, x, np.zeros((3, 3), np.float32)) == INVALID
    assert code(ops.InplaceLerp, x, np.zeros((4, 2, 3), np.float32), x) == INVALID    # the result would grow selfRef
    assert_null_checks((("aclnnLerpGetWorkspaceSize", 4), ("aclnnInplaceLerpGetWorkspaceSize", 3)))


# ---- AddRelu, InplaceAddRelu (class b) ----------------------------------------------------------------------------

def add_relu_ref(a, b, alpha, out):
    """The op_api's steps: floats in fp32 (alpha 1: one sum; else other * alpha rounded, then the sum), integers
    wrapping in the promoted dtype; relu; cast to out."""
    p = np.result_type(a.dtype, b.dtype) if R.BF16 not in (a.dtype, b.dtype) else np.dtype(np.float32)
    if p.kind == "f":
        x, y = np.asarray(a, np.float32), np.asarray(b, np.float32)
        r = x + y if alpha == 1 else x + (y * np.float32(alpha)).astype(np.float32)
        r = np.where(r < 0, np.float32(0), r)
    else:
        with np.errstate(over="ignore"):
            r = (a.astype(p) + b.astype(p) * p.type(int(alpha))).astype(p)
        r = np.where(r < 0, 0, r).astype(p)
    return R.cast(np.asarray(r, np.float64) if p.kind == "f" else r, out)


@pytest.mark.parametrize("case", [("float32", "float32", 1, "float32"), ("float16", "float16", 0.5, "float16"),
                                  ("float32", "float32", 0.1, "float32"),
                                  ("bfloat16", "float32", 2.5, "float32"), ("bfloat16", "bfloat16", 1, "bfloat16"),
                                  ("int32", "int32", 3, "int32"), ("int8", "int16", -2, "int16"),
                                  ("uint8", "uint8", 5, "uint8"), ("int64", "int32", 1, "float32")])
def test_add_relu(case):
    an, bn, alpha, out = case
    a, b = values(an, (8, 5)), values(bn, (5,))
    got = ops.AddRelu(strided(a), b, ops.Scalar(alpha, "float32" if isinstance(alpha, float) else "int64"),
                      np.zeros((8, 5), R.np_dtype(out)))
    same_bits(got, add_relu_ref(a, b, alpha, out))
    if an == out:
        ref = a.copy()
        ops.InplaceAddRelu(ref, b, ops.Scalar(alpha, "float32" if isinstance(alpha, float) else "int64"))
        same_bits(ref, got)


def test_add_relu_validation():
    x, one = np.zeros((2, 3), np.float32), ops.Scalar(1, "int64")
    assert code(ops.AddRelu, x.astype(np.float64), x, one, x) == INVALID
    assert "Alpha dtype FLOAT can't be cast to the promote dtype INT32." in message(
        ops.AddRelu, x.astype(np.int32), x.astype(np.int32), ops.Scalar(1.5, "float32"), x)
    assert "Promote dtype FLOAT can't be cast to the desired output type INT32." in message(
        ops.AddRelu, x, x, one, x.astype(np.int32))
    assert code(ops.AddRelu, x, np.zeros(4, np.float32), one, x) == INVALID
    assert "Expected shape of selfRef should be [4, 2, 3], but got [2, 3]." in message(
        ops.InplaceAddRelu, x, np.zeros((4, 2, 3), np.float32), one)
    assert_null_checks((("aclnnAddReluGetWorkspaceSize", 4), ("aclnnInplaceAddReluGetWorkspaceSize", 3)))


# ---- Prelu (exact), PreluBackward (gradWeight class c) ----------------------------------------------------------

def prelu_ref(x, w, name):
    x64 = np.asarray(x, np.float64)
    wb = np.asarray(w, np.float64).reshape((1, -1) + (1,) * (x.ndim - 2)) if w.size > 1 else np.asarray(w, np.float64)
    return R.cast(np.where(x64 > 0, x64, R.cast(x64 * wb, name).astype(np.float64)), name)


@pytest.mark.parametrize("name", names("FLOAT FLOAT16 BF16"))
def test_prelu_and_backward(name):
    x = values(name, (2, 3, 4))
    for wshape in ((3,), (1,)):
        w = R.cast(RNG.uniform(-1, 1, wshape), name)
        got = ops.Prelu(strided(x, transpose=True), w, np.zeros(x.shape, x.dtype))
        same_bits(got, prelu_ref(x, w, name))
        dy = R.cast(RNG.standard_normal(x.shape), name)
        gi, gw = ops.PreluBackward(dy, strided(x), w, np.zeros(x.shape, x.dtype), np.zeros(wshape, x.dtype))
        wb = np.asarray(w, np.float64).reshape((1, -1, 1) if w.size > 1 else 1)
        dy64 = np.asarray(dy, np.float64)
        same_bits(gi, R.cast(np.where(np.asarray(x, np.float64) > 0, dy64, R.cast(dy64 * wb, name).astype(np.float64)),
                             name))
        upd = np.where(np.asarray(x, np.float64) > 0, 0.0,
                       R.cast(np.asarray(dy, np.float64) * np.asarray(x, np.float64), name).astype(np.float64))
        upd = np.nan_to_num(upd, nan=0.0)
        fin = np.isfinite(np.asarray(x, np.float64)).all()
        want = upd.sum(axis=(0, 2)) if w.size > 1 else upd.sum().reshape(1)
        if fin:
            assert R.ulp_distance(gw, R.cast(want, name), name).max() <= 1
    x1 = R.cast(np.array([-2.0, 3.0, -0.5]), name)                        # 1-d self: one weight
    same_bits(ops.Prelu(x1, R.cast(np.array([0.25]), name), np.zeros(3, x1.dtype)), R.cast(np.array([-0.5, 3, -0.125]), name))
    same_bits(ops.Prelu(x1.astype(np.float32) if name != "float32" else x1, R.cast(np.array([0.5]), name),
                        np.zeros(3, np.float32)), np.array([-1.0, 3, -0.25], np.float32))   # promoted to FLOAT


def test_prelu_validation():
    x, w = np.zeros((2, 3, 4), np.float32), np.zeros(3, np.float32)
    assert code(ops.Prelu, x.astype(np.float64), w.astype(np.float64), x.astype(np.float64)) == INVALID
    assert "expected weight tensor size equal input channels, but found 2 does not equal 3" in message(
        ops.Prelu, x, np.zeros(2, np.float32), x)
    assert "Result type FLOAT can't be cast to the desired output type FLOAT16." not in message(ops.Prelu, x, w,
                                                                                                  x.astype(np.float16))
    assert code(ops.Prelu, x, w, np.zeros((2, 3), np.float32)) == INVALID
    assert "the number of weight elements must be 1 or self channel size" in message(
        ops.PreluBackward, x, x, np.zeros(2, np.float32), x, np.zeros(2, np.float32))
    assert code(ops.PreluBackward, x, x, w, x, np.zeros(4, np.float32)) == INVALID
    assert code(ops.PreluBackward, x, x, w.astype(np.float16), x, w) == INVALID
    assert "must be equal with selfShape" in message(ops.PreluBackward, np.zeros((5, 2, 3, 4), np.float32), x, w, x, w)
    assert_null_checks((("aclnnPreluGetWorkspaceSize", 3), ("aclnnPreluBackwardGetWorkspaceSize", 5)))


# ---- SoftMarginLoss, SoftMarginLossBackward (class c) -----------------------------------------------------------

@pytest.mark.parametrize("name", names("FLOAT FLOAT16 BF16"))
def test_soft_margin_loss_and_backward(name):
    x = R.cast(RNG.standard_normal((3, 4)) * 3, name)
    y = R.cast(np.sign(RNG.standard_normal((4,))) * RNG.uniform(0.5, 2, 4), name)
    z = -np.asarray(y, np.float64) * np.asarray(x, np.float64)
    loss = np.logaddexp(0, z)
    for red, want in ((0, loss), (1, loss.mean()), (2, loss.sum()), (7, loss.sum())):
        out = np.zeros(() if red else (3, 4), x.dtype)
        got = ops.SoftMarginLoss(strided(x), y, red, out)
        assert R.ulp_distance(got, R.cast(np.asarray(want), name), name).max() <= 1, red
    g = R.cast(RNG.standard_normal((3, 4)), name)
    for red, scale in ((0, 1.0), (1, 1 / 12), (2, 1.0)):
        want = -np.asarray(y, np.float64) / (1 + np.exp(-z)) * np.asarray(g, np.float64) * scale
        got = ops.SoftMarginLossBackward(g, strided(x, transpose=True), y, red, np.zeros((3, 4), x.dtype))
        assert R.ulp_distance(got, R.cast(want, name), name).max() <= 1, red
    e = np.zeros((0, 4), x.dtype)
    assert np.isnan(np.asarray(ops.SoftMarginLoss(e, e, 1, np.zeros((), x.dtype)), np.float64))   # mean of nothing
    assert float(np.asarray(ops.SoftMarginLoss(e, e, 2, np.ones((), x.dtype)), np.float64)) == 0.0


def test_soft_margin_loss_validation():
    x = np.zeros((2, 3), np.float32)
    assert code(ops.SoftMarginLoss, x.astype(np.float64), x, 1, np.zeros((), np.float32)) == INVALID
    assert "Expected a 0-dimensional tensor, but Shape of out is [2, 3]." in message(ops.SoftMarginLoss, x, x, 1, x)
    assert code(ops.SoftMarginLoss, x, x, 0, np.zeros((3, 2), np.float32)) == INVALID
    assert code(ops.SoftMarginLoss, x, np.zeros(4, np.float32), 0, x) == INVALID
    assert code(ops.SoftMarginLossBackward, x, x, x, 3, x) == INVALID
    assert code(ops.SoftMarginLossBackward, x, x, np.zeros((4, 1, 3), np.float32), 0, x) == INVALID
    assert_null_checks((("aclnnSoftMarginLossGetWorkspaceSize", 4), ("aclnnSoftMarginLossBackwardGetWorkspaceSize", 5)))


# ---- NLLLoss2d, NLLLoss2dBackward (class c) -----------------------------------------------------------------------

@pytest.mark.parametrize("name", names("FLOAT FLOAT16 BF16"))
def test_nll_loss2d_and_backward(name):
    n, c, h, w = 2, 3, 4, 5
    x = R.cast(RNG.standard_normal((n, c, h, w)), name)
    t = RNG.integers(0, c, (n, h, w)).astype(np.int32)
    t[0, 0, :2] = -100                                                        # ignored
    wt = R.cast(RNG.uniform(0.5, 2, c), name)
    x64, w64 = np.asarray(x, np.float64), np.asarray(wt, np.float64)
    keep = t != -100
    tc = np.where(keep, t, 0)
    per = np.where(keep, -w64[tc] * np.take_along_axis(x64, tc[:, None], 1)[:, 0], 0.0)
    total = np.where(keep, w64[tc], 0.0).sum()
    tol = {"float32": 1e-5, "float16": 2e-3, "bfloat16": 1.6e-2}[name]
    for red, want in ((0, per), (1, per.sum() / total), (2, per.sum())):
        out = np.zeros((n, h, w) if red == 0 else (), x.dtype)
        got, tw = ops.NLLLoss2d(strided(x), t, wt, red, -100, out, np.zeros((), x.dtype))
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)
        g = R.cast(RNG.standard_normal((n, h, w)) if red == 0 else np.array(1.5), name)
        gi = ops.NLLLoss2dBackward(g, x, t, wt, red, -100, np.asarray(R.cast(np.array(total), name)).reshape(()),
                                   np.zeros(x.shape, x.dtype))[-1]        # (the header's totalWeight is not const)
        g64 = np.asarray(g, np.float64) if red == 0 else float(np.asarray(g, np.float64))
        v = np.where(keep, -g64 * w64[tc], 0.0) / (total if red == 1 else 1.0)
        want_g = np.zeros((n, h, w, c))
        np.put_along_axis(want_g, tc[..., None], v[..., None], -1)
        want_g = np.moveaxis(want_g, -1, 1) * keep[:, None]
        np.testing.assert_allclose(np.asarray(gi, np.float64), want_g, rtol=tol, atol=tol)


def test_nll_loss2d_validation():
    x, t, w = np.zeros((2, 3, 4, 5), np.float32), np.zeros((2, 4, 5), np.int64), np.ones(3, np.float32)
    s0 = np.zeros((), np.float32)
    assert "Input tensor dim should be 4D" in message(ops.NLLLoss2d, x[0], t, w, 1, -100, s0, s0)
    assert "Input tensor x[1] should be equal to weight[0]." in message(ops.NLLLoss2d, x, t, np.ones(4, np.float32), 1,
                                                                        -100, s0, s0)
    assert "size mismatch got input" in message(ops.NLLLoss2d, x, t[:, :3], w, 1, -100, s0, s0)
    assert "Reduction should be between 0 and 2" in message(ops.NLLLoss2d, x, t, w, 3, -100, s0, s0)
    assert code(ops.NLLLoss2d, x, t.astype(np.int16), w, 1, -100, s0, s0) == INVALID
    assert code(ops.NLLLoss2d, x, t, w, 0, -100, np.zeros((2, 4), np.float32), s0) == INVALID
    assert "Expected a single element grad_output tensor" in message(
        ops.NLLLoss2dBackward, np.zeros(2, np.float32), x, t, w, 1, -100, s0, x)
    assert "Weight tensor should be defined for all 3 classes" in message(
        ops.NLLLoss2dBackward, s0, x, t, np.ones(2, np.float32), 1, -100, s0, x)
    assert "Shape of totalWeight tensor should be [1]" in message(
        ops.NLLLoss2dBackward, s0, x, t, w, 1, -100, np.zeros(2, np.float32), x)
    assert_null_checks((("aclnnNLLLoss2dGetWorkspaceSize", 7), ("aclnnNLLLoss2dBackwardGetWorkspaceSize", 8)))


# ---- ReduceNansum (class c) --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", names("FLOAT FLOAT16 BF16"))
def test_reduce_nansum(name):
    x = values(name, (3, 4, 5))
    x64 = np.asarray(x, np.float64)
    for dims, keep in (([1], False), ([0, -1], True), ([], False)):
        shape = reduced(x.shape, dims, keep)
        got = ops.ReduceNansum(strided(x, transpose=True), dims, keep, ACL_OF[name], np.zeros(shape, x.dtype))
        axis = tuple(d % 3 for d in dims) if dims else None
        want = np.nansum(x64, axis=axis, keepdims=keep)
        assert R.ulp_distance(np.asarray(got).reshape(shape), R.cast(want, name), name).max() <= 1
    got = ops.ReduceNansum(np.zeros((0, 3), x.dtype), [0], False, ACL_OF[name], np.ones(3, x.dtype))
    assert np.asarray(got, np.float64).tolist() == [0, 0, 0]                           # empty self: 0


def test_reduce_nansum_validation():
    x = np.zeros((2, 3), np.float32)
    f = ACL_OF["float32"]
    assert "type INT32 should be in dtype support list" in message(ops.ReduceNansum, x, [1], False, ACL_OF["int32"],
                                                                    np.zeros(2, np.int32))
    assert "Tensor out expected dtype is FLOAT but found FLOAT16." in message(ops.ReduceNansum, x, [1], False, f,
                                                                              np.zeros(2, np.float16))
    assert "Provided dim 2 must be in the range of [-2, 1]." in message(ops.ReduceNansum, x, [2], False, f, np.zeros(2, np.float32))
    assert code(ops.ReduceNansum, x, [1], False, f, np.zeros(3, np.float32)) == INVALID
    assert code(ops.ReduceNansum, x.astype(np.int32), [1], False, f, np.zeros(2, np.float32)) == INVALID   # 950: floats
    assert_null_checks((("aclnnReduceNansumGetWorkspaceSize", 5),))


# ---- Take (exact) ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", names("FLOAT FLOAT16 UINT64 INT64 UINT32 INT32 UINT16 INT16 UINT8 INT8 DOUBLE BOOL BF16"))
def test_take(name):
    x = values(name, (3, 4, 5)) if name not in ("uint16", "uint32", "uint64") else \
        RNG.integers(0, 1000, (3, 4, 5)).astype(name)
    for idx_dtype in (np.int64, np.int32):
        index = RNG.integers(-60, 60, (2, 7)).astype(idx_dtype)
        got = ops.Take(strided(x, transpose=True), index, np.zeros((2, 7), x.dtype))
        same_bits(got, x.reshape(-1)[index])


def test_take_validation():
    x, i = np.zeros((2, 3), np.float32), np.zeros((4,), np.int64)
    assert "Expected both tensors to have same dtype" in message(ops.Take, x, i, np.zeros(4, np.float16))
    assert code(ops.Take, x, i.astype(np.int16), np.zeros(4, np.float32)) == INVALID
    assert code(ops.Take, x, i, np.zeros(5, np.float32)) == INVALID
    assert "tried to take from an empty tensor" in message(ops.Take, np.zeros(0, np.float32), i, np.zeros(4, np.float32))
    assert ops.Take(np.zeros(0, np.float32), i[:0], np.zeros(0, np.float32)).shape == (0,)
    assert code(ops.Take, x, np.array([6], np.int64), np.zeros(1, np.float32)) != 0      # out of range: a device fault
    assert_null_checks((("aclnnTakeGetWorkspaceSize", 3),))


# ---- status per SoC (one A2 subprocess) -------------------------------------------------------------------------

# The calls whose status differs between the SoCs' lists.
SOC_CALLS = """[
    code(ops.Cummax, np.ones((2, 3), ml_dtypes.bfloat16), 1, np.ones((2, 3), ml_dtypes.bfloat16),
         np.ones((2, 3), np.int64)),
    code(ops.Amin, np.ones((2, 3), ml_dtypes.bfloat16), [1], False, np.ones(2, ml_dtypes.bfloat16)),
    code(ops.AminmaxAll, np.ones((2, 3), ml_dtypes.bfloat16), np.ones((), ml_dtypes.bfloat16),
         np.ones((), ml_dtypes.bfloat16)),
    code(ops.Gcd, np.ones((2, 3), np.int8), np.ones((2, 3), np.int8), np.ones((2, 3), np.int8)),
    code(ops.Sinc, np.ones((2, 3), ml_dtypes.bfloat16), np.ones((2, 3), ml_dtypes.bfloat16)),
    code(ops.FastGelu, np.ones((2, 3), ml_dtypes.bfloat16), np.ones((2, 3), ml_dtypes.bfloat16)),
    code(ops.ReduceNansum, np.ones((2, 3), np.int32), [1], False, capi.ACL_INT32, np.ones(2, np.int32)),
]"""
SOC_CODES = {"Ascend950PR": [0, 0, 0, 0, 0, 0, INVALID], A2: [0, 0, 0, INVALID, 0, 0, 0]}


@pytest.mark.parametrize("soc", list(SOC_CODES))
def test_status_per_soc(soc):
    assert codes_on(soc, SOC_CALLS) == SOC_CODES[soc]
