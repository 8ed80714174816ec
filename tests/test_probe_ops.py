"""The operators the torch probe (tests/test_torch_npu_probe.py) reached and the emulator lacked:
aclnnArgMin, aclnnAminmax, aclnnKthvalue, aclnnMedian and aclnnMedianDim (reduce/reduce.toml), aclnnL1Loss and aclnnL1LossBackward (loss/pointwise_loss.toml), aclnnGlu and
aclnnGluBackward (activation/glu.toml), aclnnEye and aclnnOneHot (math/creation.toml), aclnnBaddbmm (matmul/matmul.toml), aclnnForeachAddListV2 (foreach/foreach.toml), aclnnUnique2 (index/unique.toml). Data-driven: an operator's values are rows of VALUES (a call and its
torch CPU / float64 NumPy reference, per dtype of the vendor's 950 list), its dtype lists rows of DTYPE_ROWS
(950 in-process, A2 in one subprocess), its refusals rows of INVALID_CALLS and NULL_STATUS; one torch_npu
child for the torch calls."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")          # the references are torch CPU's
F = torch.nn.functional

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from _op_helpers import INVALID, NULLPTR, raw_null_status, strided
from _status_calls import CALL_SOURCE, status_codes

RNG = np.random.default_rng(2811)
F32 = np.float32
ALL = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
       "uint32", "uint64", "bool"]


def T(a):
    """A NumPy array as a torch CPU tensor (bf16 through its bits)."""
    a = np.ascontiguousarray(a)
    if a.dtype == R.BF16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def rand(shape, name, lo=-8, hi=8):
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    if name.startswith("uint"):
        lo = 0
    v = RNG.integers(lo, hi, shape) if name[0] in "iu" else RNG.standard_normal(shape) * 3
    return R.cast(np.asarray(v, np.float64), name)


# ---- values: (operator, dtypes, check(name)) --------------------------------------------------------------

def _argmin(name):
    x = rand((5, 7, 3), name)
    for dim, keep, view in [(1, False, False), (-1, True, True), (0, False, True)]:
        oshape = T(x).argmin(dim, keepdim=keep).shape
        for odt in (np.int64, np.int32):
            got = ops.ArgMin(strided(x) if view else x, dim, keep, np.zeros(oshape, odt))
            assert got.dtype == odt and np.array_equal(got, T(x).argmin(dim, keepdim=keep).numpy()), (name, dim)


def _argmin_edges(_):
    x = F32([[3, 1, np.nan, 1], [2, -np.inf, -np.inf, 0], [0.0, -0.0, 0.0, 1]])
    assert ops.ArgMin(x, 1, False, np.zeros(3, np.int64)).tolist() == T(x).argmin(1).tolist() == [2, 1, 0]
    assert int(ops.ArgMin(F32(7), 0, False, np.full((), 9, np.int64))) == 0   # 0-d: index 0 (the vendor's Fill)
    assert int(ops.ArgMin(F32(7), -1, True, np.full((), 9, np.int32))) == 0
    assert ops.ArgMin(np.zeros((0, 3), F32), 1, False, np.zeros(0, np.int64)).shape == (0,)   # nothing to do


def _l1_64(x, y, red):
    d = np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64))
    return d if red == 0 else d.mean() if red == 1 else d.sum()


def _l1(name):
    for xs, ys, view in [((5, 7), (7,), True), ((3, 1, 4), (2, 1), False), ((), (), False)]:
        x, y = rand(xs, name), rand(ys, name)
        if name == "float32":
            x.flat[0], y.flat[0] = np.nan, 0   # NaN propagates
        shape = np.broadcast_shapes(xs, ys)
        for red in ((0, 2) if name == "int64" else (0, 1, 2)):   # an integral mean is refused
            got = ops.L1Loss(strided(x) if view else x, y, red, np.zeros(shape if red == 0 else (), R.np_dtype(name)))
            want = _l1_64(x, y, red)
            if red == 0 or name == "int64":   # |fp32(x) - fp32(y)| rounded once; int64 exact
                assert np.array_equal(np.asarray(got, np.float64),
                                      R.cast(np.abs(_f32(x) - _f32(y)).astype(np.float64), name).astype(np.float64)
                                      if name != "int64" else want, equal_nan=True), (name, red)
            elif name == "float32":
                assert np.isnan(got) if np.isnan(want) else abs(float(got) - want) <= 2e-6 * np.abs(want) + 1e-30
            else:
                assert R.ulp_distance(R.cast(np.float64(got), name), R.cast(want, name), name).max() <= 1, (name, red)


def _f32(a):
    return np.asarray(a).astype(np.float32)


def _l1_grad32(g, x, y, shape, red):
    r = F32(1)
    for n in (shape if red == 1 else ()):
        r = F32(r / F32(n))
    x, y = _f32(x), _f32(y)
    return np.where(x > y, F32(1), np.where(x < y, F32(-1), F32(0))) * (_f32(g) * r)


def _l1_backward(name):
    for gs, xs, ys, red in [((), (4, 6), (6,), 1), ((4, 6), (4, 6), (4, 1), 0), ((), (3, 1, 5), (2, 1), 2)]:
        g, x, y = rand(gs, name), rand(xs, name), rand(ys, name)
        y.flat[0] = x.flat[0]   # sign 0
        shape = np.broadcast_shapes(gs, xs, ys)
        got = ops.L1LossBackward(g, strided(x), y, red, np.zeros(shape, R.np_dtype(name)))
        want = R.cast(_l1_grad32(np.broadcast_to(g, shape), np.broadcast_to(x, shape), np.broadcast_to(y, shape),
                                 shape, red), name)
        assert np.array_equal(got.view(np.uint8), np.ascontiguousarray(want).view(np.uint8)), (name, red)


def _l1_edges(_):
    e = np.zeros((0, 3), F32)
    assert np.isnan(ops.L1Loss(e, e, 1, np.full((), 7, F32)))                     # mean of nothing: NaN
    assert float(ops.L1Loss(e, e, 2, np.full((), 7, F32))) == 0.0
    assert ops.L1Loss(e, e, 0, np.zeros((0, 3), F32)).shape == (0, 3)
    assert ops.L1LossBackward(e, e, e, 1, np.zeros((0, 3), F32)).shape == (0, 3)
    i = np.int64([2 ** 62, -(2 ** 62), 5])   # INT64: the vendor's Sub / Abs / ReduceSum, wrapping
    got = ops.L1Loss(i, np.int64([-(2 ** 62), 2 ** 62, 0]), 2, np.zeros((), np.int64))
    assert int(got) == 5   # |2^63| wraps to -2^63, twice: the sum wraps back
    got = ops.L1Loss(i, np.int64([-(2 ** 62), 2 ** 62, 0]), 0, np.zeros(3, np.int64))
    assert got.tolist() == [-(2 ** 63), -(2 ** 63), 5]
    h = np.float16([1.5, -2.0])   # mixed dtypes: the promoted one (fp32), cast to out
    assert ops.L1Loss(h, F32([0.25, 1.0]), 0, np.zeros(2, np.float16)).tolist() == [1.25, 3.0]
    assert float(ops.L1Loss(np.int32([1, -4]), F32([0.5, 0.5]), 2, np.zeros((), F32))) == 5.0


def _exp32(v):
    with np.errstate(over="ignore"):
        return np.exp(np.asarray(v, np.float64)).astype(F32)


def _glu_model(x, dim, g=None):
    """Glu / GluBackward as the 950 kernel steps (fp32) or, for float64, the vendor's composition in double."""
    a, b = np.split(np.asarray(x), 2, axis=dim)
    if x.dtype == np.float64:   # libm's exp (NumPy's own SIMD exp may differ in the last bit)
        sig = 1 / (np.vectorize(math.exp)(-b) + 1)
        if g is None:
            return sig * a
        ga = g * sig
        return np.concatenate([ga, (a - a * sig) * ga], axis=dim)
    a, b = _f32(a), _f32(b)
    with np.errstate(over="ignore"):
        sig = F32(1) / (_exp32(b * F32(-1)) + F32(1))
    if g is None:
        return R.cast(sig * a, _name(x))
    g = _f32(g)
    out = np.concatenate([g * sig, (((F32(1) - sig) * sig) * a) * g], axis=dim)
    return R.cast(out, _name(x))


def _name(x):
    return "bfloat16" if x.dtype == R.BF16 else str(x.dtype)


def _glu(name):
    for shape, dim, view in [((4, 6), 1, True), ((2, 4, 3), -2, False), ((6,), 0, False)]:
        x = rand(shape, name)
        if name == "float32":
            x.flat[-1] = -200.0   # Exp overflows: sig 0
        oshape = list(shape)
        oshape[dim] //= 2
        got = ops.Glu(strided(x) if view else x, dim, np.zeros(oshape, x.dtype))
        want = _glu_model(x, dim)
        assert np.array_equal(np.asarray(got).view(np.uint8), np.ascontiguousarray(want, x.dtype).view(np.uint8)), name
        g = rand(oshape, name)
        got = ops.GluBackward(g, strided(x) if view else x, dim, np.zeros(shape, x.dtype))
        want = _glu_model(x, dim, g)
        assert np.array_equal(np.asarray(got).view(np.uint8), np.ascontiguousarray(want, x.dtype).view(np.uint8)), name


def _glu_edges(_):
    x = F32([[1.0, np.nan, 2.0, -np.inf]])
    got = ops.Glu(x, -1, np.zeros((1, 2), np.float16))   # rounded to self's dtype, then cast to out's
    assert np.isnan(got[0, 1]) and got[0, 0] == np.float16(_glu_model(x, -1)[0, 0])
    e = np.zeros((0, 4), F32)
    assert ops.Glu(e, 1, np.zeros((0, 2), F32)).shape == (0, 2)
    assert ops.GluBackward(np.zeros((0, 2), F32), e, 1, np.zeros((0, 4), F32)).shape == (0, 4)


def _eye(name):
    for n, m, view in [(4, 4, False), (3, 5, True), (6, 2, False), (1, 1, False)]:
        o = pyaclnn.from_numpy(np.full((m, n), 7).astype(R.np_dtype(name))).as_strided((n, m), (1, n), 0) \
            if view else np.full((n, m), 7).astype(R.np_dtype(name))
        got = ops.Eye(n, m, o)
        got = got.numpy() if view else got
        want = torch.eye(n, m, dtype=T(np.zeros(0, R.np_dtype(name))).dtype)
        assert torch.equal(T(np.asarray(got)), want), (name, n, m)
    keep = np.full((0, 3), 7, R.np_dtype(name))
    assert ops.Eye(0, 3, keep).shape == (0, 3)


def _one_hot_model(idx, depth, on, off, axis):
    hot = np.arange(depth) == np.asarray(idx)[..., None]   # out-of-range indices match nothing
    return np.moveaxis(np.where(hot, on, off), -1, axis if axis >= 0 else -1)


def _one_hot(name):
    for shape, axis, view in [((5,), -1, False), ((3, 4), 0, True), ((2, 3), 2, False), ((2, 1, 3), 1, False)]:
        idx = RNG.integers(-1, 6, shape).astype(R.np_dtype("int64" if name in ("float32", "float16") else name))
        if name == "uint8":
            idx = np.abs(idx).astype(np.uint8)
        vt = R.np_dtype("int64" if name in ("int32", "int64", "uint8") else name)
        on, off = np.array([5], vt), np.array([2], vt)
        oshape = list(shape)
        oshape.insert(axis if axis >= 0 else len(shape), 5)
        got = ops.OneHot(strided(idx) if view else idx, 5, on, off, axis, np.zeros(oshape, vt))
        assert np.array_equal(got, _one_hot_model(idx, 5, on[0], off[0], axis)), (name, axis)


def _one_hot_values(name):   # every value dtype of the 950 list
    idx = np.int64([[0, 2], [1, 3]])
    on, off = np.array([1], R.np_dtype(name)), np.array([0], R.np_dtype(name))
    got = ops.OneHot(idx, 3, on, off, -1, np.zeros((2, 2, 3), R.np_dtype(name)))
    assert np.array_equal(got.astype(np.int64), F.one_hot(torch.from_numpy(idx).clamp(max=2), 3).numpy() * (idx[..., None] < 3))
    assert ops.OneHot(np.zeros((0, 2), np.int64), 3, on, off, -1, np.zeros((0, 2, 3), R.np_dtype(name))).shape == (0, 2, 3)
    assert ops.OneHot(idx, 0, on, off, -1, np.zeros((2, 2, 0), R.np_dtype(name))).shape == (2, 2, 0)


def _baddbmm(name):
    dt = R.np_dtype(name)
    for ss, bs, beta, alpha, view in [((2, 4, 3), (2, 4, 5, 3), 0.5, 2.0, True), ((3,), (2, 4, 5, 3), 1.0, 1.0, False),
                                      ((4, 1), (3, 4, 6, 2), 0.0, -1.5, False), ((1, 4, 2), (2, 4, 3, 2), 2.0, 0.5, True)]:
        b, m, k, n = bs
        x, a, c = (R.cast(RNG.standard_normal(sh), name) for sh in (ss, (b, m, k), (b, k, n)))
        got = ops.Baddbmm(strided(x) if view else x, strided(a) if view else a, c, ops.Scalar(beta, "float32"),
                          ops.Scalar(alpha, "float32"), np.zeros((b, m, n), dt), 0)
        prod = np.matmul(a.astype(np.float64), c.astype(np.float64))
        want = beta * x.astype(np.float64) + alpha * prod
        bound = (k + 2) * 2.0 ** -24 * np.abs(alpha) * np.matmul(np.abs(a.astype(np.float64)), np.abs(c.astype(np.float64)))
        if name == "float32":
            assert np.all(np.abs(got - want) <= bound + 2.0 ** -23 * np.abs(want) + 1e-30), (name, ss)
        else:   # one rounding of the fp32 result to the dtype
            assert R.ulp_distance(R.cast(np.asarray(got, np.float64), name), R.cast(want, name), name).max() <= 1, (name, ss)
    e = np.zeros((2, 0, 3), dt)
    assert ops.Baddbmm(e, np.zeros((2, 0, 4), dt), np.zeros((2, 4, 3), dt), ops.Scalar(1.0, "float32"),
                       ops.Scalar(1.0, "float32"), np.zeros((2, 0, 3), dt), 0).shape == (2, 0, 3)


def _foreach_add_list(name):
    shapes = [(3, 4), (5,), (), (2, 1, 3)]
    x1, x2 = [rand(sh, name) for sh in shapes], [rand(sh, name) for sh in shapes]
    for alpha in ([0.3, -2.0] if name in ("float32", "float16", "bfloat16") else [3, -1]):
        out = [pyaclnn.zeros(sh, name) for sh in shapes]
        scalar = ops.Scalar(alpha, "float32" if isinstance(alpha, float) else "int64")
        ops.ForeachAddListV2([strided(x1[0])] + x1[1:], x2, scalar, out)
        for o, a, b in zip(out, x1, x2):
            if isinstance(alpha, float):   # Muls then Add in fp32, one rounding to the dtype
                want = R.cast(_f32(a) + _f32(b) * F32(alpha), name)
            else:   # wrapping in the dtype
                want = (a.astype(np.int64) + alpha * b.astype(np.int64)).astype(R.np_dtype(name))
            assert np.array_equal(np.atleast_1d(o.numpy()).view(np.uint8), np.atleast_1d(want).view(np.uint8)), name
    ops.ForeachAddListV2([], [], ops.Scalar(1.0, "float32"), [])   # nothing to do


def _unique(name):
    from pyaclnn.ops._select_ops import view_shape
    x = rand((4, 6), name, -3, 3)
    if name in ("float32", "float64", "float16"):
        x.flat[[1, 7]] = np.nan
        x.flat[[2, 9]] = [-0.0, 0.0]
    for ri, rc, view in [(True, True, True), (False, True, False), (True, False, False), (False, False, True)]:
        v, inv, c = pyaclnn.zeros((24,), name), pyaclnn.zeros((4, 6) if ri or rc else (0,), "int64"), \
            pyaclnn.zeros((24,) if rc else (0,), "int64")
        ops.Unique2(strided(x) if view else x, True, ri, rc, v, inv, c)
        n = view_shape(v)[0]
        wv, wi, wc = np.unique(x.astype(np.float64) if name == "bfloat16" else x, return_inverse=True, return_counts=True,
                               equal_nan=False)
        got = v.numpy()[:n].astype(np.float64)
        assert np.array_equal(got, np.asarray(wv, np.float64), equal_nan=True), (name, got, wv)
        if ri:   # NaNs: each its own value, in their order in self (NumPy's sort of them is not stable)
            gi, nan = inv.numpy().reshape(-1), np.isnan(x.astype(np.float64).reshape(-1))
            assert gi[~nan].tolist() == wi.reshape(-1)[~nan].tolist(), name
            assert gi[nan].tolist() == list(range(n - nan.sum(), n)), name
        if rc:
            assert c.numpy()[:n].tolist() == wc.tolist(), name
    e = pyaclnn.zeros((3,), name)
    ops.Unique2(np.zeros((0, 2), R.np_dtype(name)), True, False, False, e, np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert view_shape(e) == (3,)   # nothing launched: valueOut keeps its shape


UNIQUE = ["bool", "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float64", "float32",
          "float16", "bfloat16"]
ADD_LIST = ["float32", "float16", "bfloat16", "int32", "int16", "int8", "uint8"]
ONE_HOT_SELF = ["int32", "int64", "uint8"]
ONE_HOT_VALUE = ["float16", "float32", "int32", "int64", "int8", "uint8"]
EYE = ["float32", "int32", "float16", "int8", "int16", "uint8", "int64", "bool", "bfloat16"]
def _aminmax(name):
    x = rand((3, 4, 5), name)
    if name in ("float32", "float16"):
        x[1, 2, 3] = np.nan
    for dims, keep, view in [([1], False, True), ([0, 2], True, False), ([], False, False), ([-1], True, True)]:
        # an empty dim list: all dims (as Amax)
        ax = tuple(dims) if dims else None
        want_min, want_max = np.min(x, axis=ax, keepdims=keep), np.max(x, axis=ax, keepdims=keep)
        mn, mx = ops.Aminmax(strided(x) if view else x, dims, keep, np.zeros(np.shape(want_min), x.dtype),
                             np.zeros(np.shape(want_max), x.dtype))
        assert np.array_equal(np.asarray(mn, np.float64), np.asarray(want_min, np.float64), equal_nan=True), (name, dims)
        assert np.array_equal(np.asarray(mx, np.float64), np.asarray(want_max, np.float64), equal_nan=True), (name, dims)
    z = np.asarray(x.flat[0])   # 0-d: copied to both
    assert [float(v) for v in ops.Aminmax(z, [0], False, np.zeros((), x.dtype), np.zeros((), x.dtype))] == [float(z)] * 2


def _kth64(x, k, dim):
    """The k-th smallest along dim with NaN largest, ties in input order (a stable ascending sort's k-th)."""
    xs = np.moveaxis(np.asarray(x, np.float64), dim, -1)
    order = np.argsort(np.where(np.isnan(xs), np.inf, xs) + 0.0, axis=-1, kind="stable")
    nan_last = np.argsort(np.isnan(np.take_along_axis(xs, order, -1)), axis=-1, kind="stable")
    order = np.take_along_axis(order, nan_last, -1)
    idx = order[..., k - 1]
    return np.take_along_axis(xs, idx[..., None], -1)[..., 0], idx


def _kthvalue(name):
    x = rand((3, 6, 4), name, -4, 4)   # repeats: ties take the first in input order
    if name in ("float32", "float16", "bfloat16"):
        x[0, 2, 1] = np.nan
    for k, dim, keep, view in [(1, 1, False, True), (3, -1, True, False), (6, 1, False, False), (2, 0, True, True)]:
        v64, i64 = _kth64(x, k, dim)
        oshape = list(v64.shape)
        if keep:
            oshape.insert(dim % 3, 1)
        v, i = ops.Kthvalue(strided(x) if view else x, k, dim, keep, np.zeros(oshape, x.dtype), np.zeros(oshape, np.int64))
        assert np.array_equal(np.asarray(v, np.float64).reshape(v64.shape), v64, equal_nan=True), (name, k, dim)
        assert np.asarray(i).reshape(i64.shape).tolist() == i64.tolist(), (name, k, dim)
    z = np.asarray(x.flat[5])
    assert [float(a) for a in ops.Kthvalue(z, 1, -1, False, np.zeros((), x.dtype), np.zeros((), np.int64))] == [float(z), 0.0]


def _median(name):
    x = rand((3, 7, 4), name, -4, 4)
    floating = name in ("float32", "float16", "bfloat16")
    if floating:
        x[2, 3, 1] = x[2, 5, 1] = np.nan
    for dim, keep, view in [(1, False, True), (-1, True, False), (0, False, False)]:
        n = x.shape[dim]
        v64, i64 = _kth64(x, (n - 1) // 2 + 1, dim)
        if floating:   # a line with a NaN: NaN and its first NaN's index
            xs = np.moveaxis(x.astype(np.float64), dim, -1)
            has = np.isnan(xs).any(-1)
            v64, i64 = np.where(has, np.nan, v64), np.where(has, np.argmax(np.isnan(xs), -1), i64)
        oshape = list(v64.shape)
        if keep:
            oshape.insert(dim % 3, 1)
        v, i = ops.MedianDim(strided(x) if view else x, dim, keep, np.zeros(oshape, x.dtype), np.zeros(oshape, np.int64))
        assert np.array_equal(np.asarray(v, np.float64).reshape(v64.shape), v64, equal_nan=True), (name, dim)
        assert np.asarray(i).reshape(i64.shape).tolist() == i64.tolist(), (name, dim)
    flat = np.sort(x[:2].astype(np.float64).reshape(-1))
    assert float(ops.Median(strided(x[:2]), np.zeros((), x.dtype))) == flat[(flat.size - 1) // 2]
    if floating:
        assert np.isnan(ops.Median(x, np.zeros((), x.dtype)))
    fill = {"int64": -2 ** 63, "int32": -2 ** 31}.get(name, np.nan if floating else 0)
    got = float(ops.Median(np.zeros((0, 3), x.dtype), np.full((), 7, x.dtype)))
    assert got == fill or (np.isnan(got) and np.isnan(fill)), name


MEDIAN = ["float32", "float16", "bfloat16", "uint8", "int8", "int16", "int32", "int64"]
KTHVALUE = ["float16", "float32", "bfloat16", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]
KTHVALUE_A2 = ["float32", "int32", "int64", "float16", "int16", "int8", "uint8", "bfloat16"]
AMINMAX = ["float32", "float16", "int32", "uint8", "bool", "bfloat16", "int8", "int16", "int64", "float64"]
ARG_MIN = ["float32", "float16", "bfloat16", "float64", "int8", "int16", "int32", "int64", "uint8"]
VALUES = [
    ("ArgMin", ARG_MIN, _argmin),
    ("ArgMin", ["float32"], _argmin_edges),
    ("Aminmax", AMINMAX, _aminmax),
    ("Kthvalue", KTHVALUE, _kthvalue),
    ("MedianDim", MEDIAN, _median),
    ("L1Loss", ["float32", "float16", "bfloat16", "int64"], _l1),
    ("L1LossBackward", ["float32", "float16", "bfloat16"], _l1_backward),
    ("L1Loss", ["float32"], _l1_edges),
    ("Glu", ["float32", "float16", "bfloat16", "float64"], _glu),
    ("Glu", ["float32"], _glu_edges),
    ("Eye", EYE, _eye),
    ("OneHot", ["int64", "int32", "uint8", "float32", "float16"], _one_hot),
    ("OneHot", ONE_HOT_VALUE, _one_hot_values),
    ("Baddbmm", ["float32", "float16", "bfloat16"], _baddbmm),
    ("ForeachAddListV2", ADD_LIST, _foreach_add_list),
    ("Unique2", UNIQUE, _unique),
]


@pytest.mark.parametrize("op,names,check", VALUES, ids=[f"{v[0]}-{i}" for i, v in enumerate(VALUES)])
def test_values_match_the_reference(op, names, check):
    for name in names:
        check(name)


# ---- dtype lists per SoC: (operator, builder(dtype) -> args, 950 list, A2 list) ---------------------------

def t(name, shape, fill=1):
    return ("t", name, list(shape), fill)


L1 = ["float32", "float16", "bfloat16", "int64"]
GLU = ["float32", "float16", "bfloat16", "float64"]
L1_F32 = ["float32", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool"]   # beside FLOAT
DTYPE_ROWS = [
    ("ArgMin", lambda d: [t(d, (2, 3)), 1, False, t("int64", (2,))], ARG_MIN, ARG_MIN),
    ("Aminmax", lambda d: [t(d, (2, 3)), [1], False, t(d, (2,)), t(d, (2,))], AMINMAX, AMINMAX),
    ("Median", lambda d: [t(d, (2, 3)), t(d, ())], MEDIAN, MEDIAN),
    ("MedianDim", lambda d: [t(d, (2, 3)), 1, False, t(d, (2,)), t("int64", (2,))], MEDIAN, MEDIAN),
    ("Kthvalue", lambda d: [t(d, (2, 3)), 2, 1, False, t(d, (2,)), t("int64", (2,))], KTHVALUE, KTHVALUE_A2),
    ("L1Loss", lambda d: [t(d, (2, 3)), t(d, (3,)), 2, t("float64", ())], L1, L1),   # the promoted dtype's list
    ("L1Loss", lambda d: [t(d, (2, 3)), t("float32", (3,)), 2, t("float64", ())], L1_F32, L1_F32),
    ("L1LossBackward", lambda d: [t(d, ()), t(d, (2, 3)), t(d, (3,)), 1, t(d, (2, 3))], L1[:3], L1[:3]),
    ("Glu", lambda d: [t(d, (2, 4)), 1, t(d, (2, 2))], GLU, GLU),
    ("Eye", lambda d: [2, 3, t(d, (2, 3))], EYE, EYE),
    ("Unique2", lambda d: [t(d, (2, 3)), True, True, True, t(d, (6,)), t("int64", (2, 3)), t("int64", (6,))],
     UNIQUE, UNIQUE),
    ("Baddbmm", lambda d: [t(d, (2, 2, 3)), t(d, (2, 2, 4)), t(d, (2, 4, 3)), ("s", 1.0, "float32"),
                           ("s", 1.0, "float32"), t(d, (2, 2, 3)), 0], GLU[:3], GLU[:3]),
    ("OneHot", lambda d: [t(d, (2,)), 3, t("int64", (1,)), t("int64", (1,)), -1, t("int64", (2, 3))],
     ONE_HOT_SELF, ONE_HOT_SELF[:2]),
    ("OneHot", lambda d: [t("int64", (2,)), 3, t(d, (1,)), t(d, (1,)), -1, t(d, (2, 3))],
     ONE_HOT_VALUE, ONE_HOT_VALUE[:4]),
    ("GluBackward", lambda d: [t(d, (2, 2)), t(d, (2, 4)), 1, t(d, (2, 4))], GLU, GLU),
]


def _dtype_calls():
    return [(op, build(name)) for op, build, _, _ in DTYPE_ROWS for name in ALL]


def _dtype_want(soc_index):
    return [0 if name in row[2 + soc_index] else INVALID for row in DTYPE_ROWS for name in ALL]


# Tensor-list operators (the call rows hold no lists): their codes per dtype, run by `run` in the child too.
LIST_DTYPES = """
def list_codes(names):
    res = {}
    for d in names:
        x = lambda: [pyaclnn.from_numpy(arg(("t", d, [2])))]
        s = ops.Scalar(1, "int32" if d.startswith(("int", "uint")) else "float64")
        try:
            ops.ForeachAddListV2(x(), x(), s, x()); res[d] = 0
        except AclError as exc:
            res[d] = exc.code
    return res
"""
LIST_WANT = {"ForeachAddListV2": (ADD_LIST, ADD_LIST)}


def test_dtype_lists_950():
    assert status_codes(_dtype_calls(), "Ascend950PR") == _dtype_want(0)
    ns = {}
    exec(CALL_SOURCE + LIST_DTYPES, ns)
    assert ns["list_codes"](ALL) == {d: 0 if d in LIST_WANT["ForeachAddListV2"][0] else INVALID for d in ALL}


def test_dtype_lists_a2():
    codes, extra = status_codes(_dtype_calls(), "Ascend910B4", LIST_DTYPES + f"EXTRA.update(list_codes({ALL!r}))")
    assert codes == _dtype_want(1)
    assert extra == {d: 0 if d in LIST_WANT["ForeachAddListV2"][1] else INVALID for d in ALL}


# ---- refusals: (operator, args, code, message) -------------------------------------------------------------

X23 = np.zeros((2, 3), F32)
I23 = np.zeros((2, 3), np.int64)
X24, X22 = np.zeros((2, 4), F32), np.zeros((2, 2), F32)
I2, I1 = np.int64([0, 1]), np.int64([1])
B1, B2, ONE = np.zeros((2, 4, 5), F32), np.zeros((2, 5, 3), F32), ops.Scalar(1.0, "float32")
L1F, L1H = [np.float32([1, 2])], [np.float16([1, 2])]
OUT_F2, OUT_D1 = ("out list", (2,), "float32"), ("out list", (1,), "float64")   # made in the test (device memory)
F2 = np.zeros(2, F32)
INVALID_CALLS = [
    ("Median", (X23.astype(np.float64), np.zeros((), np.float64)), "Tensor self not implemented for DOUBLE"),
    ("Median", (X23, np.zeros((), np.float16)), "Tensor valuesOut expected dtype is FLOAT but found FLOAT16."),
    ("Median", (np.zeros((3, 1), R.BF16), np.zeros((), R.BF16)),
     "The last axis value is not support 1 when input type is BF16."),
    ("Median", (X23, F2), "valuesOut should hold one element, but its shape is [2]"),
    ("MedianDim", (X23, 1, False, F2, np.zeros(2, np.int32)),
     "indicesOut dtype INT32 should be in dtype support list [op::DataType::DT_INT64]."),
    ("MedianDim", (X23, 2, False, F2, np.zeros(2, np.int64)), "dim should be in range [-2, 1]."),
    ("MedianDim", (X23, 1, True, F2, np.zeros(2, np.int64)), "Expected 2 dimension input, but got valuesOut with sizes [2]."),
    ("MedianDim", (X23, 1, False, np.zeros(3, F32), np.zeros(3, np.int64)), "Shape of valuesOut should be [2]"),
    ("MedianDim", (np.zeros((2, 1), R.BF16), 1, False, np.zeros(2, R.BF16), np.zeros(2, np.int64)),
     "The dim axis value is not support 1 when input type is BF16."),
    ("Kthvalue", (F32(1), 1, 1, False, np.zeros((), F32), np.zeros((), np.int64)), "The shape of input is invalid"),
    ("Kthvalue", (X23, 1, 2, False, F2, np.zeros(2, np.int64)),
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("Kthvalue", (X23, 4, 1, False, F2, np.zeros(2, np.int64)),
     "Selected index k out or range (max num of self.size(2) is 3, but k is 4)"),
    ("Kthvalue", (X23.astype(np.float64), 1, 1, False, F2.astype(np.float64), np.zeros(2, np.int64)),
     "Tensor self not implemented for DOUBLE"),
    ("Kthvalue", (X23, 1, 1, False, F2, np.zeros(2, np.int32)), "Tensor indicesOut expected dtype is INT64 but found INT32."),
    ("Kthvalue", (X23, 1, 1, True, F2, np.zeros(2, np.int64)), "Shape of valuesOut should be [2, 1]"),
    ("Aminmax", (X23.astype(np.uint16), [1], False, F2.astype(np.uint16), F2.astype(np.uint16)),
     "Tensor self not implemented for UINT16"),
    ("Aminmax", (X23, [1], False, F2.astype(np.float16), F2), "Tensor minOut expected dtype is FLOAT but found FLOAT16."),
    ("Aminmax", (np.zeros((0, 3), F32), [0, 1], False, np.zeros((), F32), np.zeros((), F32)),
     "Expected self to be not empty tensor."),
    ("Aminmax", (F32(1), [1], False, np.zeros((), F32), np.zeros((), F32)), "Expected dim to be in range of [-1, 0], but got 1."),
    ("Aminmax", (X23, [2], False, F2, F2), "Expected dim to be in range of [-2, 1], but got 2."),
    ("Aminmax", (np.zeros((2, 0), F32), [1], False, F2, F2),
     "Expected reduction dim 1 to have non-zero size, but check failed."),
    ("Aminmax", (X23, [1], True, F2, F2), "[2, 1]"),
    ("Unique2", (X23, True, True, True, np.zeros(6, F32), I23.astype(np.int32), np.zeros(6, np.int64)),
     "Tensor inverseOut expected dtype is INT64 but found INT32."),
    ("Unique2", (X23, True, True, True, np.zeros(6, F32), I23, np.zeros(6, np.int32)),
     "Tensor countsOut expected dtype is INT64 but found INT32."),
    ("Unique2", (np.zeros((1,) * 9, F32), True, False, False, np.zeros(1, F32), np.zeros(0, np.int64),
                 np.zeros(0, np.int64)), "The self tensor cannot be larger than 8 dimensions."),
    ("Unique2", (X23, True, False, True, np.zeros(6, F32), np.zeros(6, np.int64), np.zeros(6, np.int64)),
     "Expected tensor for self to have same size as tensor for inverseOut, but [2, 3] does not equal [6]."),
    ("Unique2", (X23, True, False, True, np.zeros(6, F32), I23, np.zeros(5, np.int64)),
     "Expected tensor for valueOut to have same size as tensor for countsOut, but [6] does not equal [5]."),
    ("ForeachAddListV2", (L1F, L1F * 2, ONE, OUT_F2), "x2 has 2 tensors, x1 has 1"),
    ("ForeachAddListV2", (L1F, L1H, ONE, OUT_F2), "x2[0] dtype FLOAT16 should be the same"),
    ("ForeachAddListV2", (L1F, L1F, ops.Scalar(1, "int32"), OUT_F2),
     "alpha dtype INT32 is not supported for a FLOAT tensor list"),
    ("ForeachAddListV2", ([np.float64([1])], [np.float64([1])], ONE, OUT_D1),
     "x1 dtype DOUBLE is not supported"),
    ("ForeachAddListV2", (L1F, [np.float32([1, 2, 3])], ONE, OUT_F2),
     "Shape of x2[0] should be [2]"),
    ("Baddbmm", (F32(0), B1, B2, ONE, ONE, np.zeros((2, 4, 3), np.float64), 0), "out dtype DOUBLE is not supported"),
    ("Baddbmm", (F32(0), B1[0], B2, ONE, ONE, np.zeros((2, 4, 3), F32), 0),
     "Expected 3 dimension input, but got batch1 with sizes [4, 5]."),
    ("Baddbmm", (F32(0), B1, B2[:, :4], ONE, ONE, np.zeros((2, 4, 3), F32), 0),
     "batch1's last dim and batch2's penultimate dim shoule be same, batch1 [5], batch2 [4]."),
    ("Baddbmm", (F32(0), B1, np.zeros((3, 5, 3), F32), ONE, ONE, np.zeros((2, 4, 3), F32), 0),
     "mat1's batch dim and mat2's batch dim can not broadcast"),
    ("Baddbmm", (np.zeros((0,), F32), B1, B2, ONE, ONE, np.zeros((2, 4, 3), F32), 0),
     "self and batch1@batch2 should be both empty tensors, or not, self is [1], batch1@batch2 is [0]."),
    ("Baddbmm", (np.zeros((4, 2), F32), B1, B2, ONE, ONE, np.zeros((2, 4, 3), F32), 0),
     "Shape of self and batch1@batch2 can't broadcast."),
    ("Baddbmm", (F32(0), B1, B2, ONE, ONE, np.zeros((2, 3, 4), F32), 0), "Shape of out should be [2, 4, 3], but current is [2, 3, 4]."),
    ("Baddbmm", (np.zeros((2, 4, 3), F32), B1[:1], B2[:1], ONE, ONE, np.zeros((2, 4, 3), F32), 0),
     "batch1@batch2's shape should be same with broadcastShape, broadcastShape [[2, 4, 3]], bmmShape [[1, 4, 3]]"),
    ("OneHot", (I2.astype(np.int16), 3, I1, I1, -1, np.zeros((2, 3), np.int64)), "Tensor self not implemented for INT16"),
    ("OneHot", (I2, 3, I1, I1, -1, np.zeros((2, 3), np.float64)), "Tensor out not implemented for DOUBLE"),
    ("OneHot", (I2, 3, I1.astype(np.int32), I1, -1, np.zeros((2, 3), np.int64)),
     "Tensor onValue expected dtype is INT64 but found INT32."),
    ("OneHot", (np.zeros((1,) * 8, np.int64), 3, I1, I1, -1, np.zeros((1,) * 8, np.int64)),
     "The self tensor cannot be larger than 7 dimensions."),
    ("OneHot", (I2, -2, I1, I1, -1, np.zeros((2, 3), np.int64)), "NumClasses should be greater and equal than 0, but got -2."),
    ("OneHot", (np.zeros(0, np.int64), 0, I1, I1, -1, np.zeros((0, 0), np.int64)),
     "NumClasses should be greater than 0, but got 0."),
    ("OneHot", (I2, 3, I1, I1, -2, np.zeros((2, 3), np.int64)), "The axis should be greater and equal than -1, but got -2."),
    ("OneHot", (I2, 3, I1, I1, 2, np.zeros((2, 3), np.int64)), "The axis should be lower and equal than 1, but got 2."),
    ("OneHot", (I2, 3, I1, I1, -1, np.zeros(6, np.int64)), "Expected 2 dimension input, but got out with sizes [6]."),
    ("OneHot", (I2, 3, I1, I1, 0, np.zeros((2, 3), np.int64)), "Expected tensor for out to have same size as [3, 2]"),
    ("Eye", (2, 2, np.zeros(4, F32)), "Expected out to be 2-D tensor, but the dimension of out is 1."),
    ("Eye", (-1, 2, np.zeros((0, 2), F32)), "n must be greater or equal to 0, got -1"),
    ("Eye", (2, -2, np.zeros((2, 0), F32)), "m must be greater or equal to 0, got -2"),
    ("Eye", (2, 3, np.zeros((3, 2), F32)), "Expected out shape to be (2, 3), but got [3, 2]."),
    ("Eye", (2, 2, np.zeros((2, 2), np.float64)), "Tensor out not implemented for DOUBLE"),
    ("Glu", (X24.astype(np.int32), 1, X22), "Tensor self not implemented for INT32"),
    ("Glu", (X24, 1, X22.astype(np.int32)), "Tensor out not implemented for INT32"),
    ("Glu", (F32(1), 0, F32(1)), "The self tensor must have at least 1 dimensions."),
    ("Glu", (X24, 2, X22), "Input dimension out of range (expected to be in range of [-2, 1], but got 2)."),
    ("Glu", (X23, -1, X22), "Split dimension must be even, but dimension -1 is size 3."),
    ("Glu", (X24, 1, np.zeros((2, 4), F32)), "The shape of out must be [2, 2], but get [2, 4]."),
    ("GluBackward", (X22, X24.astype(np.int64), 1, X24), "Tensor self not implemented for INT64"),
    ("GluBackward", (X22.astype(np.float16), X24, 1, X24), "Tensor gradOut expected dtype is FLOAT but found FLOAT16."),
    ("GluBackward", (X22, X24, 1, X24.astype(np.float16)), "Tensor out expected dtype is FLOAT but found FLOAT16."),
    ("GluBackward", (X22, X24, -3, X24), "Dimension out of range (expected to be in range of [-2, 1], but got -3)."),
    ("GluBackward", (X22, X23, 1, X23), "Halving dimension must be even, but dimension 1 is size 3."),
    ("GluBackward", (X24, X24, 1, X24), "The shape of gradOut must be [2, 2], but got [2, 4]."),
    ("GluBackward", (X22, X24, 1, X22), "Expected tensor for out to have same size as tensor for self"),
    ("L1Loss", (X23, X23, 3, np.zeros((), F32)), "Expected reduction to be 0 or 1 or 2, but got 3."),
    ("L1Loss", (I23, X23, 0, X23), "Input dtype should be either floating point or complex dtypes. Got INT64 instead."),
    ("L1Loss", (I23, I23, 1, np.zeros((), F32)), "Got self INT64 and target INT64 instead."),
    ("L1Loss", (I23.astype(np.int32), I23.astype(np.int32), 2, np.zeros((), F32)),
     "promoteType dtype INT32 should be in dtype support list"),
    ("L1Loss", (X23, X23, 2, np.zeros((), np.int64)), "Result type FLOAT can't be cast to the desired output type INT64."),
    ("L1Loss", (X23, np.zeros((3, 3), F32), 2, np.zeros((), F32)), "can not broadcast"),
    ("L1Loss", (X23, X23, 0, np.zeros(3, F32)), "Expected out tensor shape to be [2, 3], but got [3]."),
    ("L1Loss", (X23, X23, 1, np.zeros(1, F32)), "Expected a 0-dimensional tensor, but Shape of out is [1]."),
    ("L1LossBackward", (X23, X23, X23, -1, X23), "Expected reduction to be 0 or 1 or 2, but got -1."),
    ("L1LossBackward", (X23, X23, X23, 0, np.zeros((2, 3), np.int32)),
     "Result type FLOAT can't be cast to the desired output type INT32."),
    ("L1LossBackward", (I23, I23, I23, 0, I23), "promoteType dtype INT64 should be in dtype support list [FLOAT"),
    ("L1LossBackward", (X23, X23, np.zeros((3, 1, 2), F32), 0, X23),
     "GradOutput tensor shape:[2, 3] self tensor shape:[2, 3] target tensor shape:[3, 1, 2] can't broadcast."),
    ("L1LossBackward", (X23, X23, F32(0), 0, np.zeros((3, 2), F32)), "Shape of out should be [2, 3], but current is [3, 2]."),
    ("ArgMin", (X23, 2, False, np.zeros(2, np.int64)), "dim must be within the range of [-2, 1], but it is 2."),
    ("ArgMin", (F32(1), 1, False, np.zeros((), np.int64)), "dim must be within the range of [-1, 0], but it is 1."),
    ("ArgMin", (X23.astype(bool), 9, False, np.zeros(2, np.int64)), "dim must be within the range"),   # dim first
    ("ArgMin", (X23.astype(bool), 1, False, np.zeros(2, np.int64)), "self dtype BOOL is not supported"),
    ("ArgMin", (X23, 1, False, np.zeros(2, F32)), "out dtype FLOAT is not supported"),
    ("ArgMin", (np.zeros((2, 0), F32), 1, False, np.zeros(2, np.int64)),
     "Excepted reduction dim 1 to have non-zero size."),
    ("ArgMin", (X23, 1, True, np.zeros(2, np.int64)), "[2, 1]"),
]


@pytest.mark.parametrize("op,args,text", INVALID_CALLS, ids=[f"{c[0]}-{i}" for i, c in enumerate(INVALID_CALLS)])
def test_invalid_arguments_return_161002(op, args, text):
    args = [[pyaclnn.zeros(a[1], a[2])] if isinstance(a, tuple) and a[:1] == ("out list",) else a for a in args]
    err = pytest.raises(AclError, getattr(ops, op), *args).value
    assert (err.code, text in str(err)) == (INVALID, True), str(err)


NULL_STATUS = {"ArgMin": 4, "L1Loss": 4, "L1LossBackward": 5, "Glu": 3, "GluBackward": 4, "OneHot": 6, "Baddbmm": 7, "ForeachAddListV2": 4, "Unique2": 7, "Aminmax": 5, "Kthvalue": 6, "Median": 2, "MedianDim": 5}
NULL_OUT = {"Eye": (3, {0: 2, 1: 2})}   # integer arguments passed, out NULL


@pytest.mark.parametrize("op", list(NULL_STATUS))
def test_null_arguments(op):
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", NULL_STATUS[op]) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


@pytest.mark.parametrize("op", list(NULL_OUT))
def test_null_out(op):
    n, ints = NULL_OUT[op]
    import ctypes
    assert raw_null_status(f"aclnn{op}GetWorkspaceSize", n, {k: ctypes.c_int64(v) for k, v in ints.items()}) == NULLPTR
    assert "out is NULL" in (pyaclnn.errors.recent_error_message() or "")


# ---- torch_npu: the torch calls reach the operators and match torch CPU -------------------------------------

TORCH_BODY = """
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(4, 6); x[1, 2] = float('nan')
CASES = {
    "argmin": (lambda a: a.argmin(dim=0), (x,)),
    "argmin_all": (lambda a: a.argmin(), (x,)),
    "argmin_keep_int": (lambda a: a.argmin(dim=1, keepdim=True), ((x * 5).int(),)),
    "aminmax": (lambda a: torch.stack(torch.aminmax(a)), (x,)),
    "aminmax_dim": (lambda a: torch.stack(torch.aminmax(a, dim=1, keepdim=True)), ((x * 5).int(),)),
    "kthvalue": (lambda a: torch.stack([t.double() for t in torch.kthvalue(a, 3, dim=1)]), (torch.randn(4, 6),)),
    "median": (lambda a: torch.median(a), (x,)),
    "median_finite": (lambda a: torch.median(a), (torch.randn(5, 3),)),
    "median_dim": (lambda a: torch.stack([t.double() for t in torch.median(a, dim=0)]), (torch.randn(5, 3),)),
}
tgt = torch.tensor([1, 0, 3, 5, 2])
OUT["one_hot"] = [str(F.one_hot(tgt.npu(), 6).device), bool(torch.equal(F.one_hot(tgt.npu(), 6).cpu(), F.one_hot(tgt, 6)))]
OUT["eye"] = [str(torch.eye(4, device="npu").device), bool(torch.equal(torch.eye(4, device="npu").cpu(), torch.eye(4)))]
OUT["eye_nm_int"] = [str(torch.eye(3, 5, dtype=torch.int32, device="npu").device),
                     bool(torch.equal(torch.eye(3, 5, dtype=torch.int32, device="npu").cpu(), torch.eye(3, 5, dtype=torch.int32)))]
for key, (fn, args) in CASES.items():
    got = fn(*[a.npu() for a in args]); want = fn(*args)
    OUT[key] = [str(got.device), bool(torch.equal(got.cpu().nan_to_num(99), want.nan_to_num(99)))]


def grads(fn, *args):   # the value and the gradients, on npu and on the CPU: max differences
    res = []
    for dev in ("npu", "cpu"):
        ts = [a.detach().to(dev).requires_grad_(True) for a in args]
        out = fn(*ts); out.backward(torch.ones_like(out))
        res.append([out.detach().cpu()] + [t.grad.cpu() for t in ts])
    return [float((a - b).abs().max()) if a.numel() else 0.0 for a, b in zip(*res)]


x, y = torch.randn(4, 6), torch.randn(6)
for red in ["none", "mean", "sum"]:
    OUT["l1 " + red] = grads(lambda a, b: F.l1_loss(a, b.expand(4, 6), reduction=red), x, y)
bm, bm2 = torch.randn(2, 4, 6), torch.randn(2, 6, 3)
OUT["baddbmm"] = grads(lambda s, a, b: torch.baddbmm(s, a, b, beta=0.5, alpha=1.5), torch.randn(2, 4, 1), bm, bm2)
p = torch.nn.Parameter(x.clone()); q = torch.nn.Parameter(x.clone().npu())
for par in (p, q):
    opt = torch.optim.SGD([par], lr=0.1, momentum=0.9)
    for _ in range(3):
        par.grad = torch.ones_like(par) * 0.5; opt.step()
OUT["sgd_momentum"] = [float((q.detach().cpu() - p.detach()).abs().max())]
OUT["foreach_add"] = [float(max((a.cpu() - b).abs().max() for a, b in zip(
    torch._foreach_add([x.npu(), x[0].npu()], [y.expand(4, 6).contiguous().npu(), y.npu()], alpha=0.7),
    torch._foreach_add([x, x[0]], [y.expand(4, 6).contiguous(), y], alpha=0.7))))]
xu = torch.tensor([3., 1., float('nan'), 3., -0.0, 0.0, 2.]); iu = torch.randint(0, 10, (4, 6))
for key, arg in (("unique_f", xu), ("unique_i", iu)):
    got, want = torch.unique(arg.npu(), return_inverse=True, return_counts=True), torch.unique(arg, return_inverse=True, return_counts=True)
    OUT[key] = [str(got[0].device), all(torch.equal(a.cpu().nan_to_num(99), b.nan_to_num(99)) for a, b in zip(got, want))]
OUT["glu"] = grads(lambda a: F.glu(a, dim=1), x)
OUT["glu 3d"] = grads(lambda a: F.glu(a, dim=0), torch.randn(4, 3, 2))
"""


def test_torch_npu_reaches_the_operators():
    from _math_ops import torch_npu_run
    out = torch_npu_run(TORCH_BODY, {})
    exact = {k: v for k, v in out.items() if isinstance(v[0], str)}
    assert exact and all(dev.startswith("npu") and ok for dev, ok in exact.values()), out
    close = {k: v for k, v in out.items() if k not in exact}
    assert len(close) == 8 and all(max(v) <= 1e-5 for v in close.values()), close
