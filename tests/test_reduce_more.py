"""The reductions of native_stubs/src/ops/reduce/any_all.toml, moments.toml, prod.toml,
bincount.toml, norm/vector_norm.toml): Any, All, VarCorrection, VarMean, Std, StdMeanCorrection, LogSumExp,
Prod, ProdDim, Cumprod, InplaceCumprod, LinalgVectorNorm, Norm, Bincount -- against float64 NumPy references
(exact operators bit for bit; class-c ones within one ulp of the exactly rounded result), every dtype of the
vendor's lists (Ascend 950 here, Atlas A2 statuses in one subprocess), strided views, empty reductions,
the validation codes and messages, and torch_npu's calls on the emulator against torch CPU.

Adding an operator adds a row to one of the tables."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from _math_ops import A2, INVALID, code, dec, names, same_bits
from _gen_ops import assert_null_checks, codes_on, message, torch_pairs
from _op_helpers import strided
from pyaclnn import capi, ops
from reference import elementwise as R

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(2828)
FLOATS = ("float32", "float16", "bfloat16", "float64")
ACL = {"float32": capi.ACL_FLOAT, "float16": capi.ACL_FLOAT16, "bfloat16": capi.ACL_BF16, "float64": capi.ACL_DOUBLE,
       "int32": capi.ACL_INT32, "int64": capi.ACL_INT64, "int8": capi.ACL_INT8, "int16": capi.ACL_INT16,
       "uint8": capi.ACL_UINT8, "bool": capi.ACL_BOOL, "uint16": capi.ACL_UINT16, "uint32": capi.ACL_UINT32,
       "uint64": capi.ACL_UINT64}


def values(name, shape, scale=2.0, zeros=0.3):
    """Samples of dtype `name` with some zeros (for any / all / prod)."""
    if name == "bool":
        return RNG.random(shape) > zeros
    if name in FLOATS:
        x = RNG.standard_normal(shape) * scale
    else:
        info = np.iinfo(R.np_dtype(name))
        x = RNG.integers(max(int(info.min), -5), min(int(info.max), 6), shape)
    x = np.where(RNG.random(shape) < zeros, 0, x)
    return R.cast(x, name)


def reduced(shape, dims, keep):
    dims = [d % len(shape) for d in dims] if dims else list(range(len(shape)))
    return tuple(1 if i in dims else s for i, s in enumerate(shape) if keep or i not in dims)


def within_ulp(got, exact, name, ulps=1):
    """got within `ulps` of the float64 `exact` rounded to `name` (NaN where NaN, infinities equal)."""
    want = R.cast(np.asarray(exact, np.float64), name)
    assert got.shape == want.shape, (got.shape, want.shape)
    d = R.ulp_distance(got, want, name)
    assert d.max(initial=0) <= ulps, (d.max(), got.reshape(-1)[:4], want.reshape(-1)[:4])


# ---- Any / All: exact ---------------------------------------------------------------------------------------

LOGICAL = names("FLOAT FLOAT16 UINT8 INT8 INT16 INT32 INT64 BOOL DOUBLE BF16")


@pytest.mark.parametrize("name", LOGICAL)
def test_any_all_every_dtype(name):
    x = values(name, (3, 4, 5), zeros=0.85)
    if name in FLOATS:
        x.reshape(-1)[7] = np.nan
    truth = np.asarray(x, np.float64) != 0
    for op, fn in (("Any", np.any), ("All", np.all)):
        for dims, keep, out in (([1], False, "bool"), ([0, 2], True, "uint8"), ([], False, "bool"),
                                ([-1], True, "bool")):
            shape = reduced(x.shape, dims, keep)
            got = getattr(ops, op)(strided(x), dims, keep, np.zeros(shape, out))
            axis = tuple(d % 3 for d in dims) or None
            same_bits(got.reshape(shape), np.asarray(fn(truth, axis=axis, keepdims=keep)).astype(out).reshape(shape))


def test_any_all_empty_and_0d():
    e = np.zeros((0, 3), np.float32)
    same_bits(ops.Any(e, [0], False, np.ones(3, bool)), np.zeros(3, bool))
    same_bits(ops.All(e, [0], False, np.zeros(3, bool)), np.ones(3, bool))
    assert ops.Any(np.float32(2.0).reshape(()), [], False, np.zeros((), bool)).tolist() is True
    assert ops.All(np.float32(0.0).reshape(()), [0], False, np.zeros((), bool)).tolist() is False


# ---- Var / Std / their means, LogSumExp: class c ---------------------------------------------------------

MOMENTS = {  # operator -> (take the square root, outputs the mean)
    "VarCorrection": (False, False), "VarMean": (False, True), "Std": (True, False), "StdMeanCorrection": (True, True)}


def var_ref(x, dims, correction, keep):
    axis = tuple(d % x.ndim for d in dims) if dims else None
    x = np.asarray(x, np.float64)
    n = x.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    mean = x.mean(axis=axis, keepdims=True)
    ss = ((x - mean) ** 2).sum(axis=axis, keepdims=keep)
    div = n - correction
    v = ss / div if div > 0 else np.full(ss.shape, np.nan if n <= 1 else np.inf)
    return v, mean if keep else np.squeeze(mean, axis=axis)


def call_moment(op, x, dims, corr, keep, out_dtype):
    shape = reduced(x.shape, dims or [], keep)
    outs = [np.zeros(shape, R.np_dtype(out_dtype)) for _ in range(2 if MOMENTS[op][1] else 1)]
    res = getattr(ops, op)(x, dims, corr, keep, *outs)
    return res if isinstance(res, tuple) else (res,)


@pytest.mark.parametrize("op", list(MOMENTS))
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_moments(op, name):
    if op == "VarMean" and name == "bfloat16":
        name = "float32"                              # BF16 is Ascend 950's (tested there below)
    x = values(name, (4, 5, 6), zeros=0)
    for dims, corr, keep in (([1], 1, False), ([0, 2], 0, True), (None, 1, False), ([-1], 2, True)):
        got = call_moment(op, strided(x, transpose=True), dims, corr, keep, name)
        v, mean = var_ref(x, dims or [], corr, keep)
        within_ulp(got[0], np.sqrt(v) if MOMENTS[op][0] else v, name)
        if MOMENTS[op][1]:
            within_ulp(got[1], mean, name)


def test_moments_fills_and_empty():
    one = np.float32([[3.0], [4.0]])
    assert np.isnan(ops.VarCorrection(one, [1], 1, False, np.zeros(2, np.float32))).all()     # n = 1 <= correction
    assert np.isinf(ops.Std(np.ones((2, 3), np.float32), [1], 4, False, np.zeros(2, np.float32))).all()   # 3 <= 4
    v, m = ops.VarMean(np.zeros((0, 3), np.float32), [0], 1, False, np.zeros(3, np.float32), np.zeros(3, np.float32))
    assert np.isnan(v).all() and np.isnan(m).all()
    got = ops.Std(np.float16([1, 2, 3, 4]), [0], 1, False, np.zeros((), np.float32))     # fp16 self, FLOAT out
    within_ulp(np.float32(got), R.cast(np.float64(np.std([1, 2, 3, 4], ddof=1)), "float16"), "float32")


LSE_SELF = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 BOOL BF16")


@pytest.mark.parametrize("name", LSE_SELF)
def test_logsumexp_every_dtype(name):
    x = values(name, (3, 7), scale=6.0, zeros=0)
    out = name if name in FLOATS else "float32"
    got = ops.LogSumExp(strided(x), [1], False, np.zeros(3, R.np_dtype(out)))
    xd = np.asarray(x, np.float64)
    m = xd.max(axis=1, keepdims=True)
    exact = (np.log(np.exp(xd - m).sum(axis=1, keepdims=True)) + m)[:, 0]
    within_ulp(got, R.cast(exact, "float32"), out)                   # fp32 first, then cast to out


def test_logsumexp_infinities_and_empty():
    x = np.float32([[-np.inf, -np.inf], [np.inf, 1.0], [np.nan, 1.0]])
    got = ops.LogSumExp(x, [1], False, np.zeros(3, np.float32))
    assert got[0] == -np.inf and got[1] == np.inf and np.isnan(got[2])
    assert (ops.LogSumExp(np.zeros((0, 2), np.float32), [0], False, np.zeros(2, np.float32)) == -np.inf).all()


# ---- Prod, ProdDim, Cumprod: floats class c, integers exact ------------------------------------------------

PROD = names("FLOAT FLOAT16 DOUBLE INT8 UINT8 INT16 INT32 INT64 BOOL BF16")


def int_prod(x, axis, name):
    """The wrapped product of integers (Python ints, then the dtype's wrap)."""
    ints = np.asarray(x, object)
    p = np.multiply.reduce(ints, axis=axis) if axis is not None else np.multiply.reduce(ints.reshape(-1))
    wrapped = np.vectorize(lambda v: (int(v) + 2 ** 63) % 2 ** 64 - 2 ** 63, otypes=[np.int64])(p)
    return R.cast(np.asarray(wrapped), name) if name != "bool" else np.asarray(p).astype(bool)


@pytest.mark.parametrize("name", PROD)
def test_prod_every_dtype(name):
    x = values(name, (3, 5), scale=1.5, zeros=0.1 if name != "bool" else 0.1)
    compute = "float32" if name in ("float16", "bfloat16") else name
    got = ops.ProdDim(strided(x), 1, False, ACL[name], np.zeros(3, R.np_dtype(name)))
    whole = ops.Prod(x, ACL[name], np.zeros((), R.np_dtype(name)))
    if name in FLOATS:
        xd = np.asarray(x, np.float64)
        within_ulp(got, R.cast(xd.prod(axis=1), compute), name)
        within_ulp(np.asarray(whole).reshape(()), R.cast(xd.prod(), compute), name)
    else:
        same_bits(got, int_prod(x, 1, name))
        same_bits(np.asarray(whole).reshape(()), int_prod(x, None, name).reshape(()))


def test_prod_casts_to_dtype_and_empty():
    x = np.float16([[2, 3], [4, 0.5]])
    same_bits(ops.ProdDim(x, 0, True, capi.ACL_FLOAT, np.zeros((1, 2), np.float32)), np.float32([[8, 1.5]]))
    same_bits(ops.Prod(np.zeros((0, 4), np.float32), capi.ACL_FLOAT, np.zeros((), np.float32)).reshape(()),
              np.float32(1.0).reshape(()))
    same_bits(ops.Prod(np.int32([1 << 20, 1 << 20]), capi.ACL_INT32, np.zeros((), np.int32)).reshape(()),
              np.int32(0).reshape(()))                                                          # wraps


CUMPROD = names("FLOAT FLOAT16 BF16 DOUBLE INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64")


@pytest.mark.parametrize("name", CUMPROD)
def test_cumprod_every_dtype(name):
    x = values(name, (3, 6), scale=1.5, zeros=0.05)
    dim = ops.Scalar(1, "int64")
    got = ops.Cumprod(strided(x), dim, ACL[name], np.zeros(x.shape, R.np_dtype(name)))
    if name in FLOATS:
        exact = np.cumprod(np.asarray(x, np.float64), axis=1)
        within_ulp(got, exact if name == "float64" else R.cast(exact, "float32"), name)
    else:
        want = np.stack([int_prod(x[:, :k + 1], 1, "int64") for k in range(6)], axis=1)
        same_bits(got, R.cast(want, name))
    t = pyaclnn.from_numpy(x.copy())
    ops.InplaceCumprod(t, ops.Scalar(-1, "int32"))
    same_bits(t.numpy(), got)


def test_cumprod_casts_input_to_dtype():
    x = np.int32([[1, 2, 3], [4, 5, 6]])
    same_bits(ops.Cumprod(x, ops.Scalar(0, "int32"), capi.ACL_FLOAT, np.zeros((2, 3), np.float32)),
              np.float32([[1, 2, 3], [4, 10, 18]]))


# ---- norms: class c ------------------------------------------------------------------------------------------

def norm_ref(x, p, axis, keep):
    a = np.abs(np.asarray(x, np.float64))
    if p == 0:
        return (a != 0).sum(axis=axis, keepdims=keep).astype(np.float64)
    if np.isinf(p):
        return a.max(axis=axis, keepdims=keep) if p > 0 else a.min(axis=axis, keepdims=keep)
    return (a ** p).sum(axis=axis, keepdims=keep) ** (1 / p)


@pytest.mark.parametrize("op", ["LinalgVectorNorm", "Norm"])
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_norms(op, name):
    x = values(name, (4, 9), zeros=0.1)
    for p, dims, keep in ((2.0, [1], False), (1.0, [0], True), (0.0, [], False), (np.inf, [1], False),
                          (-np.inf, [1], True), (3.0, [0, 1], False), (0.5, [-1], False)):
        shape = reduced(x.shape, dims, keep)
        ordv = ops.Scalar(float(p), "float32")
        if op == "Norm":
            got = ops.Norm(strided(x), ordv, dims, keep, np.zeros(shape, R.np_dtype(name)))
        else:
            got = ops.LinalgVectorNorm(strided(x), ordv, dims, keep, ACL[name], np.zeros(shape, R.np_dtype(name)))
        axis = tuple(d % 2 for d in dims) or None
        exact = R.cast(np.asarray(norm_ref(x, p, axis, keep)).reshape(shape), "float32")
        within_ulp(got.reshape(shape), exact, name)


def test_norm_dtype_conversion_and_empty():
    x = values("float16", (3, 4))
    got = ops.LinalgVectorNorm(x, ops.Scalar(2.0, "float32"), [1], False, capi.ACL_FLOAT, np.zeros(3, np.float32))
    within_ulp(got, norm_ref(x, 2.0, 1, False), "float32")
    assert code(ops.LinalgVectorNorm, x.astype(np.float32), ops.Scalar(2.0, "float32"), [1], False, capi.ACL_FLOAT16,
                np.zeros(3, np.float16)) == INVALID          # FLOAT self: dtype must be FLOAT (Ascend 950)
    same_bits(ops.Norm(np.zeros((0, 3), np.float32), ops.Scalar(2.0, "float32"), [0], False, np.ones(3, np.float32)),
              np.zeros(3, np.float32))


# ---- Bincount --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", names("INT8 INT16 INT32 INT64 UINT8"))
def test_bincount(name):
    x = RNG.integers(0, 9, 40).astype(name)
    same_bits(ops.Bincount(strided(x), None, 0, np.zeros(9, np.int64)), np.bincount(x, minlength=9).astype(np.int64))
    for wname, out in (("float32", "float32"), ("float64", "float64"), ("int32", "float64"), ("bool", "float64")):
        w = values(wname, (40,))
        got = ops.Bincount(x, w, 3, np.zeros(9, R.np_dtype(out)))
        within_ulp(got, np.bincount(x, np.asarray(w, np.float64), minlength=9), out)
    same_bits(ops.Bincount(np.zeros(0, np.int32), None, 3, np.ones(3, np.int32)), np.zeros(3, np.int32))


# ---- validation: codes and messages, per SoC ---------------------------------------------------------------

def test_validation_codes_and_messages():
    x = np.zeros((2, 3), np.float32)
    b2 = np.zeros(2, bool)
    assert "Dimension out of range." in message(ops.Any, x, [2], False, b2)
    assert "Dimension out of range (expected to be in range of [-2, 1], but got 2)" in message(ops.All, x, [2], False,
                                                                                               b2)
    assert "Dim 1 appears multiple times in the list of dims." in message(ops.All, x, [1, -1], False, b2)
    assert "Expect out shape [[2]], but got: [[3]]." in message(ops.All, x, [1], False, np.zeros(3, bool))
    assert code(ops.Any, x, [1], False, np.zeros(2, np.int32)) == INVALID                      # out BOOL / UINT8
    assert code(ops.Any, x.astype(np.uint16), [1], False, b2) == INVALID
    f2 = np.zeros(2, np.float32)
    assert "Provided dim 3 must be in the range of [-2, 1]." in message(ops.VarCorrection, x, [3], 1, False, f2)
    assert code(ops.VarCorrection, x.astype(np.float64), [1], 1, False, f2) == INVALID
    assert code(ops.Std, x, [1], 1, False, np.zeros(3, np.float32)) == INVALID
    assert code(ops.StdMeanCorrection, x, [1], 1, False, f2, f2.astype(np.float16)) == INVALID  # dtypes must match
    assert "provided dim 5 not in the range of input tensor size 2." in message(ops.LogSumExp, x, [5], False, f2)
    assert code(ops.LogSumExp, x, [1], False, np.zeros(2, np.int32)) == INVALID
    assert "Expected dim to be in range of [-2, 1], but got 2." in message(ops.ProdDim, x, 2, False, capi.ACL_FLOAT, f2)
    assert code(ops.ProdDim, x, 1, False, capi.ACL_FLOAT16, f2) == INVALID                    # out != dtype
    assert "input dim(2) out of range(-2,1)" in message(ops.Cumprod, x, ops.Scalar(2, "int64"), capi.ACL_FLOAT, x)
    assert code(ops.Cumprod, x, ops.Scalar(1.0, "float32"), capi.ACL_FLOAT, x) == INVALID     # dim INT32 / INT64
    assert code(ops.Cumprod, x, ops.Scalar(1, "int64"), capi.ACL_FLOAT16, x) == INVALID
    assert "appears multiple times" in message(ops.LinalgVectorNorm, x, ops.Scalar(2.0, "float32"), [0, -2], False,
                                               capi.ACL_FLOAT, np.zeros(3, np.float32))
    assert code(ops.Norm, x.astype(np.int32), ops.Scalar(2.0, "float32"), [1], False, f2) == INVALID   # 950 list
    assert code(ops.Bincount, x.astype(np.int32), None, 0, np.zeros(3, np.int64)) == INVALID          # 2-d self
    assert code(ops.Bincount, x[0].astype(np.float32), None, 0, np.zeros(3, np.int64)) == INVALID
    assert_null_checks((
        ("aclnnAnyGetWorkspaceSize", 4), ("aclnnAllGetWorkspaceSize", 4), ("aclnnVarMeanGetWorkspaceSize", 6),
                 ("aclnnLogSumExpGetWorkspaceSize", 4), ("aclnnProdGetWorkspaceSize", 3),
                 ("aclnnCumprodGetWorkspaceSize", 4), ("aclnnNormGetWorkspaceSize", 5),
                 ("aclnnLinalgVectorNormGetWorkspaceSize", 6), ("aclnnBincountGetWorkspaceSize", 4)))


# The calls whose status differs between the SoCs' lists.
SOC_CALLS = """[
    code(ops.VarMean, np.ones((2, 3), ml_dtypes.bfloat16), [1], 1, False, np.ones(2, ml_dtypes.bfloat16),
         np.ones(2, ml_dtypes.bfloat16)),
    code(ops.Norm, np.ones((2, 3), np.int32), ops.Scalar(2.0, "float32"), [1], False, np.ones(2, np.float32)),
    code(ops.LinalgVectorNorm, np.ones((2, 3), np.float32), ops.Scalar(2.0, "float32"), [1], False, capi.ACL_FLOAT16,
         np.ones(2, np.float16)),
    code(ops.Any, np.ones((2, 3), ml_dtypes.bfloat16), [1], False, np.ones(2, bool)),
]"""
SOC_CODES = {"Ascend950PR": [0, INVALID, INVALID, 0], A2: [INVALID, 0, 0, 0]}


@pytest.mark.parametrize("soc", list(SOC_CODES))
def test_status_per_soc(soc):
    assert codes_on(soc, SOC_CALLS) == SOC_CODES[soc]


# ---- torch_npu on the emulator -----------------------------------------------------------------------------

TORCH_X = values("float32", (6, 10), zeros=0.2)
CALLS = """{
    "any": lambda t: (t > 0.5).any(dim=1), "all": lambda t: (t != 0).all(), "var": lambda t: t.var(dim=1),
    "var_mean": lambda t: torch.stack(torch.var_mean(t, dim=0, correction=0)), "std": lambda t: t.std(),
    "std_mean": lambda t: torch.stack(torch.std_mean(t, dim=1)), "logsumexp": lambda t: torch.logsumexp(t, 1),
    "prod": lambda t: t.prod(dim=1), "prod_all": lambda t: t.prod(), "cumprod": lambda t: t.cumprod(1),
    "vnorm": lambda t: torch.linalg.vector_norm(t, 2, dim=1), "norm_inf": lambda t: t.norm(float("inf"), dim=0),
    "norm1": lambda t: torch.norm(t, p=1), "bincount": lambda t: torch.bincount((t.abs() * 3).long().flatten()),
    "cummax": lambda t: torch.stack([r.float() for r in torch.cummax(t, 1)]),
    "cummin": lambda t: torch.stack([r.float() for r in torch.cummin(t.int(), 0)]),
    "amin": lambda t: t.amin(dim=1), "aminmax": lambda t: torch.stack(torch.aminmax(t, dim=0)),
    "aminmax_all": lambda t: torch.stack(torch._aminmax(t)),
    "sinc": lambda t: torch.sinc(t), "sinc_": lambda t: (t * 0.5).sinc_(),
    "gcd": lambda t: torch.gcd((t * 7).int(), (t * 5).int().flip(0)),
    "add_relu": lambda t: torch._VF._add_relu(t, t.flip(0), alpha=0.5),
    "add_relu_": lambda t: torch._VF._add_relu_(t.clone(), t.flip(1)),
    "prelu": lambda t: torch.prelu(t.reshape(2, 3, 10), torch.tensor([0.25, -0.5, 2.0], device=t.device)),
    "nansum": lambda t: torch.where(t > 2, float("nan"), t).nansum(dim=1),
    "nanmean": lambda t: torch.where(t < -2, float("nan"), t).nanmean(),
    "take": lambda t: torch.take(t, torch.tensor([[0, -1, 7], [59, 3, -60]], device=t.device)),
    "soft_margin": lambda t: torch.nn.functional.soft_margin_loss(t, t.flip(1).sign()),
    "lerp": lambda t: torch.lerp(t, t.flip(1), t.sigmoid()), "lerp_": lambda t: t.clone().lerp_(t.flip(0), t.tanh()),
}
"""
# Calls compared to torch CPU within an absolute bound (sinc: its zeros; lerp: the kernel's fused multiply-adds
# against torch's two roundings, |values| < 8).
ABS_BOUND = {"sinc": 4 * 2.0 ** -24, "sinc_": 4 * 2.0 ** -24, "lerp": 2.0 ** -20, "lerp_": 2.0 ** -20}


@pytest.fixture(scope="module")
def on_npu():
    return torch_pairs(CALLS, TORCH_X)


@pytest.mark.parametrize("call", ["any", "all", "var", "var_mean", "std", "std_mean", "logsumexp", "prod", "prod_all",
                                  "cumprod", "vnorm", "norm_inf", "norm1", "bincount", "cummax",
                                  "cummin", "amin", "aminmax", "aminmax_all", "sinc", "sinc_", "gcd",
                                  "lerp", "lerp_", "add_relu", "add_relu_", "prelu",
                                  "soft_margin", "nansum", "nanmean", "take"])
def test_torch_npu_calls(on_npu, call):
    res = on_npu[call]
    assert "error" not in res, res
    got, want = dec(res[0]), dec(res[1])
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind in "bi":
        same_bits(got, want)
    elif call in ABS_BOUND:
        assert np.abs(got.astype(np.float64) - want).max() <= ABS_BOUND[call]
    else:
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-30)
