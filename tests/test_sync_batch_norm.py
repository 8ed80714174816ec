"""The sync-batch-norm pieces (native_stubs/src/ops/norm/sync_batch_norm.toml): aclnnBatchNormStats,
aclnnBatchNormElemt, aclnnBatchNormElemtBackward, aclnnBatchNormReduce, aclnnBatchNormReduceBackward,
aclnnBatchNormGatherStatsWithCounts, aclnnSyncBatchNormGatherStats against references written from the vendor's
definitions (float64 statistics; the fp32 steps where the vendor's kernel publishes them); every dtype of the
vendor's lists (A2 in one child), strided views, empty inputs, validation codes and messages; torch_npu's
sync-batch-norm calls on the emulator against the same computation in torch CPU operations (torch has the
sync-batch-norm operators for CUDA only; one child)."""
from __future__ import annotations

import numpy as np
import pytest

import pyaclnn
from _cnn_ops import A2, INVALID, NULLPTR, dec, enc, error_of, f64, status_codes, torch_npu_run  # noqa: F401
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
RNG = np.random.default_rng(3301)
F32 = np.float32


def z(shape, name="float32"):
    return np.zeros(shape, R.np_dtype(name))


def close(got, want64, name="float32"):
    """Within one ulp of the float64 value rounded through fp32 to the dtype."""
    want = R.cast(f64(want64).astype(F32), name).astype(np.float64)
    got = f64(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    ulp = np.spacing(np.abs(want).astype(R.np_dtype(name))).astype(np.float64)
    nan = np.isnan(want)
    assert (np.isnan(got) == nan).all() and (np.abs(got - want)[~nan] <= ulp[~nan]).all(), np.abs(got - want).max()


def axes(x):
    return (0,) + tuple(range(2, x.ndim))


def ch(v, x):
    return f64(v).reshape((1, -1) + (1,) * (x.ndim - 2))


# ---- BatchNormStats / BatchNormElemt ------------------------------------------------------------------------

@pytest.mark.parametrize("shape,name", [((2, 3, 4, 5), "float32"), ((5, 4), "float16"), ((2, 3, 2, 2, 3), "bfloat16")])
def test_batch_norm_stats(shape, name):
    x = R.cast(RNG.uniform(-2, 3, shape), name)
    mean, inv = ops.BatchNormStats(strided(x), 1e-5, z(shape[1]), z(shape[1]))
    m = f64(x).mean(axis=axes(x))
    var = ((f64(x) - ch(m, x)) ** 2).mean(axis=axes(x))
    close(mean, m)
    close(inv, 1 / np.sqrt(var + float(F32(1e-5))))


def elemt_ref(x, w, b, mean, inv, eps):
    iv = f64(inv).astype(F32)
    var = F32(1) / (iv * iv) - F32(eps)                      # the op_api's variance recovery in fp32
    scale = 1 / np.sqrt(f64(var) + eps)
    c = x.shape[1]
    w = np.ones(c) if w is None else w
    b = np.zeros(c) if b is None else b
    return (f64(x) - ch(mean, x)) * ch(scale, x) * ch(w, x) + ch(b, x)


@pytest.mark.parametrize("name,affine", [("float32", True), ("float16", False), ("bfloat16", True)])
def test_batch_norm_elemt(name, affine):
    x = R.cast(RNG.standard_normal((3, 4, 5)), name)
    w, b = (R.cast(RNG.uniform(0.5, 1.5, 4), name), R.cast(RNG.uniform(-1, 1, 4), name)) if affine else (None, None)
    mean, inv = R.cast(RNG.standard_normal(4), name), R.cast(RNG.uniform(0.5, 2, 4), name)
    out = ops.BatchNormElemt(strided(x), w, b, mean, inv, 1e-5, z(x.shape, name))[-1]
    close(out, elemt_ref(x, w, b, mean, inv, 1e-5), name)


# ---- the backward halves --------------------------------------------------------------------------------------

def elemt_bw_ref(dy, x, mean, inv, w, sdy, sdyx, counter, a5=True):
    """The vendor kernel's fp32 steps (float32 inputs)."""
    total = F32(f64(counter).sum())
    mdy, mdyx = F32(1) * sdy / total, F32(1) * sdyx / total
    c = lambda v: v.reshape((1, -1) + (1,) * (x.ndim - 2))   # noqa: E731
    m2 = c(mdyx) * (c(inv) * c(inv))
    s3 = (dy - c(mdy)) - (x - c(mean)) * m2
    return s3 * (c(inv) * c(w)) if a5 else (s3 * c(inv)) * c(w)


def bw_inputs(shape=(3, 4, 2, 3)):
    c = shape[1]
    dy, x = (RNG.standard_normal(shape).astype(F32) for _ in range(2))
    mean, w = RNG.standard_normal(c).astype(F32), RNG.uniform(0.5, 1.5, c).astype(F32)
    inv = RNG.uniform(0.5, 2, c).astype(F32)
    return dy, x, mean, inv, w


def test_batch_norm_elemt_backward_is_the_kernels_fp32_steps():
    dy, x, mean, inv, w = bw_inputs()
    sdy, sdyx = RNG.standard_normal(4).astype(F32), RNG.standard_normal(4).astype(F32)
    counter = np.array([18, 18, 20], np.int32)
    got = ops.BatchNormElemtBackward(strided(dy), x, mean, inv, w, sdy, sdyx, counter, z(x.shape))[-1]
    np.testing.assert_array_equal(got, elemt_bw_ref(dy, x, mean, inv, w, sdy, sdyx, counter))
    none_w = ops.BatchNormElemtBackward(dy, x, mean, inv, None, sdy, sdyx, counter.astype(F32), z(x.shape))[-1]
    np.testing.assert_array_equal(none_w, elemt_bw_ref(dy, x, mean, inv, np.ones(4, F32), sdy, sdyx, counter))
    h = [a.astype(np.float16) for a in (dy, x, mean, inv, w, sdy, sdyx)]
    half = ops.BatchNormElemtBackward(*h, counter, z(x.shape, "float16"))[-1]   # all FLOAT16: fp16 operands
    assert half.dtype == np.float16 and np.abs(f64(half) - f64(got)).max() <= 0.05 * np.abs(got).max()


def test_batch_norm_reduce_backward_and_masks():
    dy, x, mean, inv, w = bw_inputs()
    c = 4
    sdy, sdyx, gw, gb = ops.BatchNormReduceBackward(strided(dy), x, mean, inv, w, True, True, True, z(c), z(c), z(c),
                                                    z(c))
    want_sdy = F32(f64(dy).sum(axis=axes(x)))
    want_sx = F32(f64(dy * x).sum(axis=axes(x)))             # fp32 products, summed
    xmu = want_sx - mean * want_sdy
    np.testing.assert_array_equal(sdy, want_sdy)
    np.testing.assert_array_equal(gb, want_sdy)
    np.testing.assert_array_equal(sdyx, xmu)
    np.testing.assert_array_equal(gw, xmu * inv)
    only_gw = ops.BatchNormReduceBackward(dy, x, mean, inv, None, False, True, False, None, None, z(c), None)
    np.testing.assert_array_equal([o for o in only_gw if o is not None][0], gw)
    h16 = ops.BatchNormReduceBackward(dy.astype(np.float16), x.astype(np.float16), mean, inv, w, True, False, False,
                                      z(c, "float16"), z(c, "float16"), None, None)
    assert h16[0].dtype == np.float16


# ---- BatchNormReduce ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt,name", [("NCHW", "float32"), ("NHWC", "float16"), ("NCHW", "bfloat16")])
def test_batch_norm_reduce(fmt, name):
    x = R.cast(RNG.uniform(-3, 3, (2, 3, 4, 5)), name)
    s, q = ops.BatchNormReduce(pyaclnn.from_numpy(x, format=fmt), z(5 if fmt == "NHWC" else 3),
                               z(5 if fmt == "NHWC" else 3))
    ax = (0, 1, 2) if fmt == "NHWC" else (0, 2, 3)
    close(s, f64(x).sum(axis=ax))
    close(q, (f64(x) ** 2).sum(axis=ax))


# ---- gathering ------------------------------------------------------------------------------------------------

def gather_counts_ref(mean, inv, counts, rm, rv, momentum, eps):
    mean, inv, counts = f64(mean), f64(inv), f64(counts)[:, None]
    n = counts.sum()
    mu = (counts * mean).sum(0) / n
    var = (counts * (1 / inv ** 2 - eps + (mean - mu) ** 2)).sum(0)
    return (mu, 1 / np.sqrt(var / n + eps), (1 - momentum) * f64(rm) + momentum * mu,
            (1 - momentum) * f64(rv) + momentum * var / (n - 1))


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_batch_norm_gather_stats_with_counts(name):
    d, c = 4, 3
    mean, inv = R.cast(RNG.uniform(0, 1, (d, c)), name), R.cast(RNG.uniform(0.5, 2, (d, c)), name)
    counts = R.cast(np.array([96, 96, 80, 100]), name)
    rm, rv = R.cast(RNG.uniform(0, 1, c), name), R.cast(RNG.uniform(0.5, 1, c), name)
    x = z((2, c, 3), name)
    new_rm, new_rv, m_all, i_all = ops.BatchNormGatherStatsWithCounts(x, strided(mean), inv, rm.copy(), rv.copy(), 0.1,
                                                                      1e-5, counts, z(c, name), z(c, name))
    for g, want in zip((m_all, i_all, new_rm, new_rv), gather_counts_ref(mean, inv, counts, rm, rv, 0.1, 1e-5)):
        close(g, want, name)
    bare = ops.BatchNormGatherStatsWithCounts(x, mean, inv, None, None, 0.1, 1e-5, counts, z(c, name), z(c, name))
    np.testing.assert_array_equal([o for o in bare if o is not None][0], m_all)


def sync_gather_ref(tsum, tsq, cnt, rm, rv, momentum, eps, t):
    cast = (lambda v: v) if t == "float32" else (lambda v: R.cast(v, t).astype(F32))   # noqa: E731
    n = F32(int(np.trunc(f64(cnt)).sum()))
    reci, mom, eps = F32(1) / n, F32(momentum), F32(eps)
    mean = F32(f64(tsum).sum(0)) * reci
    var = F32(f64(tsq).sum(0)) * reci - mean * mean
    inv = F32(1) / np.sqrt(var + eps)
    rmean = cast(f64(rm).astype(F32)) * (F32(1) - mom) + mean * mom
    rvar = var * (n / (n - F32(1)) * mom) + cast(f64(rv).astype(F32)) * (F32(1) - mom)
    return [cast(v) for v in (rmean, rvar, mean, inv)]


@pytest.mark.parametrize("name,count", [("float32", "int32"), ("float16", "float32"), ("bfloat16", "float16")])
def test_sync_batch_norm_gather_stats_is_the_kernels_fp32_steps(name, count):
    d, c = 3, 5
    tsum, tsq = R.cast(RNG.uniform(0, 8, (d, c)), name), R.cast(RNG.uniform(8, 16, (d, c)), name)
    cnt = R.cast(np.array([16, 12, 16]), count)
    rm, rv = R.cast(RNG.uniform(0, 1, c), name), R.cast(RNG.uniform(0.5, 1, c), name)
    got = ops.SyncBatchNormGatherStats(strided(tsum), tsq, cnt, rm.copy(), rv.copy(), 0.1, 1e-5, z(c, name), z(c, name))
    for g, want in zip(got, sync_gather_ref(tsum, tsq, cnt, rm, rv, 0.1, 1e-5, name)):
        np.testing.assert_array_equal(f64(g), f64(R.cast(want, name)))


# ---- empty inputs -------------------------------------------------------------------------------------------

def test_empty_inputs():
    mean, inv = ops.BatchNormStats(z((0, 3, 2)), 1e-5, np.full(3, 7, F32), np.full(3, 7, F32))
    assert (mean == 0).all() and np.isnan(inv).all()
    s, q = ops.BatchNormReduce(pyaclnn.from_numpy(z((0, 3, 2, 2)), format="NCHW"), np.full(3, 7, F32),
                               np.full(3, 7, F32))
    assert (s == 0).all() and (q == 0).all()
    r = ops.BatchNormGatherStatsWithCounts(z((2, 3)), z((0, 3)), z((0, 3)), None, None, 0.1, 1e-5, z(0),
                                           np.full(3, 7, F32), np.full(3, 7, F32))
    assert (r[-2] == 0).all() and np.isnan(r[-1]).all()
    r = ops.BatchNormReduceBackward(z((0, 3)), z((0, 3)), z(3), z(3), None, True, True, True, *(np.full(3, 7, F32)
                                                                                                for _ in range(4)))
    assert all((o == 0).all() for o in r)                   # Ascend 950 zeroes the asked-for outputs
    assert ops.BatchNormElemt(z((0, 3)), None, None, z(3), z(3), 1e-5, z((0, 3)))[-1].shape == (0, 3)


# ---- validation -----------------------------------------------------------------------------------------------

X = np.ones((2, 3, 4), F32)
C3 = np.ones(3, F32)


@pytest.mark.parametrize("call,code,text", [
    (lambda: ops.BatchNormStats(X, 1e-5, None, C3), NULLPTR, "mean is NULL"),
    (lambda: ops.BatchNormStats(X, 1e-5, C3.astype(np.float16), C3), INVALID,
     "Tensor mean not implemented for FLOAT16, should be in dtype support list [FLOAT]."),
    (lambda: ops.BatchNormStats(np.ones((2, 0, 3), F32), 1e-5, z(0), z(0)), INVALID,
     "Channel size of input should not be zero."),
    (lambda: ops.BatchNormStats(X, 1e-5, np.ones(4, F32), C3), INVALID,
     "Expected tensor for mean to have same size as [3], but got [4]."),
    (lambda: ops.BatchNormStats(pyaclnn.from_numpy(X, format="NC1HWC0"), 1e-5, C3, C3), INVALID,
     "Input format only support ND, NCL, NCHW, NCDHW."),
    (lambda: ops.BatchNormElemt(X, None, None, None, C3, 1e-5, z(X.shape)), INVALID, "mean is NULL"),
    (lambda: ops.BatchNormElemt(X.astype(np.float64), None, None, C3, C3, 1e-5, z(X.shape)), INVALID,
     "input not implemented for DOUBLE, should be in dtype support list [FLOAT, FLOAT16, BFLOAT16]."),
    (lambda: ops.BatchNormElemt(X, np.ones((3, 1), F32), None, C3, C3, 1e-5, z(X.shape)), INVALID,
     "Weight/bias/mean/invstd dim size should be one."),
    (lambda: ops.BatchNormElemt(X, None, np.ones(4, F32), C3, C3, 1e-5, z(X.shape)), INVALID,
     "Weight/bias/mean/invstd shape should be same as the channel size of input."),
    (lambda: ops.BatchNormElemtBackward(X, X, C3, C3, None, C3, C3, C3.astype(np.int64), z(X.shape)), INVALID,
     "Tensor counter not implemented for INT64"),
    (lambda: ops.BatchNormElemtBackward(X, X, C3, C3, None, None, C3, C3, z(X.shape)), NULLPTR, "sumDy is NULL"),
    (lambda: ops.BatchNormElemtBackward(X, X, C3, C3, None, np.ones(2, F32), C3, C3, z(X.shape)), INVALID,
     "Expected tensor for sumDy to have same size as [3], but got [2]."),
    (lambda: ops.BatchNormReduce(pyaclnn.from_numpy(np.ones((2, 3, 2, 2), F32)), C3, C3), INVALID,
     "Format of x only supports [NCHW, NHWC], but format is [ND]."),
    (lambda: ops.BatchNormReduce(pyaclnn.from_numpy(np.ones((2, 3, 2, 2), F32), format="NCHW"), np.ones(4, F32), C3),
     INVALID, "It is expected size of sum equals to input_C(3), but size is 4"),
    (lambda: ops.BatchNormReduceBackward(X, X, C3, C3, None, True, False, False, None, C3, None, None), NULLPTR,
     "expected a proper Tensor but got null for argument sumDy."),
    (lambda: ops.BatchNormReduceBackward(X, X.astype(np.float16), C3, C3, None, False, False, True, None, None, None,
                                         C3), INVALID, "Tensor gradOut expected dtype is FLOAT16 but found FLOAT."),
    (lambda: ops.BatchNormReduceBackward(X, X, C3, C3, None, False, True, False, None, None, np.ones(2, F32), None),
     INVALID, "expected tensor for gradWeight to have same size as [3], but got [2]."),
    # shapes the op_api leaves to its l0 Mul / SyncBatchNormBackwardReduce, which fail on them (nullptr)
    (lambda: ops.BatchNormReduceBackward(X, X, np.ones(1, F32), C3, None, False, False, True, None, None, None, C3),
     561103, "mean must have 3 elements, the channels of input."),
    (lambda: ops.BatchNormReduceBackward(X[:1], X, C3, C3, None, False, False, True, None, None, None, C3),
     561103, "gradOut's shape must be input's."),
    (lambda: ops.BatchNormGatherStatsWithCounts(X, z((4, 3)), z((4, 3)), None, None, 0.1, 1e-5, z(3), C3, C3),
     INVALID, "first dimension of mean, invstd and count should be the same"),
    (lambda: ops.BatchNormGatherStatsWithCounts(X, z((4, 2)), z((4, 2)), None, None, 0.1, 1e-5, z(4), C3, C3),
     INVALID, "second dimension of mean/invstd should be the channel size of input 3"),
    (lambda: ops.SyncBatchNormGatherStats(z((2, 3)), z((2, 3), "float16"), C3[:2], C3, C3, 0.1, 1e-5, C3, C3),
     INVALID, "Expected both tensors to have same dtype, but found totalSum FLOAT and totalSquareSum FLOAT16."),
    (lambda: ops.SyncBatchNormGatherStats(z((2, 3)), z((2, 3)), C3, C3, C3, 0.1, 1e-5, C3, C3), INVALID,
     "totalSumShape dim0 not same sampleCountShape dim0"),
    (lambda: ops.SyncBatchNormGatherStats(z((0, 3)), z((0, 3)), z(0), C3, C3, 0.1, 1e-5, C3, C3), INVALID,
     "totalSumShape dim0 is zero"),
])
def test_validation(call, code, text):
    got, msg = error_of(call)
    assert got == code and text in msg, msg


# ---- dtype lists per SoC (the A2 one in a child) -----------------------------------------------------------

CANDS = ["float32", "float16", "bfloat16", "float64", "int32"]


def calls_of(d):
    t, c, dc = ["t", d, [2, 3, 4]], ["t", d, [3]], ["t", d, [2, 3]]
    f, n2 = ["t", "float32", [3]], ["t", "int32", [2]]
    return [("BatchNormStats", [t, 1e-5, f, f]),
            ("BatchNormElemt", [t, c, c, c, c, 1e-5, t]),
            ("BatchNormElemtBackward", [t, t, c, c, c, c, c, n2, t]),
            ("BatchNormReduceBackward", [t, t, c, c, ["n"], True, True, True, c, c, c, c]),
            ("BatchNormGatherStatsWithCounts", [t, dc, dc, c, c, 0.1, 1e-5, ["t", d, [2]], c, c]),
            ("SyncBatchNormGatherStats", [dc, dc, n2, c, c, 0.1, 1e-5, c, c])]


ACCEPT = {"Ascend950PR": {"BatchNormStats": ["float32", "float16", "bfloat16"]},
          A2: {"BatchNormStats": ["float32", "float16"], "SyncBatchNormGatherStats": ["float32", "float16"]}}


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls = [c for d in CANDS for c in calls_of(d)]
    acc = lambda op: ACCEPT[soc].get(op, ["float32", "float16", "bfloat16"])   # noqa: E731
    want = [0 if c[1][0][1] in acc(c[0]) else INVALID for c in calls]
    got = status_codes(calls, soc)
    assert [(c[0], c[1][0][1], g) for c, g, w in zip(calls, got, want) if g != w] == []


# ---- torch_npu ----------------------------------------------------------------------------------------------

_BODY = """
torch.manual_seed(0)
x = torch.randn(4, 3, 5, 5)
dy = torch.randn(4, 3, 5, 5)
w, b = torch.rand(3) + 0.5, torch.randn(3)
counts = torch.tensor([100., 100.])

def npu_run():
    t = lambda v: v.npu()
    mean, inv = torch.batch_norm_stats(t(x), 1e-5)
    rm, rv = t(torch.zeros(3)), t(torch.ones(3))
    gm, gi = torch.batch_norm_gather_stats_with_counts(t(x), torch.stack([mean, mean]), torch.stack([inv, inv]),
                                                       rm, rv, 0.1, 1e-5, t(counts))
    y = torch.batch_norm_elemt(t(x), t(w), t(b), gm, gi, 1e-5)
    sdy, sdyx, gw, gb = torch.batch_norm_backward_reduce(t(dy), t(x), gm, gi, t(w), True, True, True)
    gx = torch.batch_norm_backward_elemt(t(dy), t(x), gm, gi, t(w), sdy, sdyx, t(torch.tensor([100, 100], dtype=torch.int32)))
    return [mean, inv, gm, gi, rm, rv, y, sdy, sdyx, gw, gb, gx]

def cpu_run():
    xd, dyd = x.double(), dy.double()
    c = lambda v: v.reshape(1, -1, 1, 1)
    mean = xd.mean((0, 2, 3))
    var = xd.var((0, 2, 3), unbiased=False)
    inv = 1 / (var + 1e-5).sqrt()
    n = x.numel() // 3
    rm, rv = 0.1 * mean, 0.9 + 0.1 * var * (2 * n) / (2 * n - 1)
    y = (xd - c(mean)) * c(inv) * c(w) + c(b)
    sdy = dyd.sum((0, 2, 3))
    sdyx = (dyd * (xd - c(mean))).sum((0, 2, 3))
    gx = (dyd - c(sdy / 200) - (xd - c(mean)) * c(inv * inv * sdyx / 200)) * c(inv * w)
    return [mean, inv, mean, inv, rm, rv, y, sdy, sdyx, sdyx * inv, sdy, gx]

cpu = cpu_run()
try:
    npu = npu_run()
    import torch_npu
    s, q = torch_npu.batch_norm_reduce(x.npu(), 1e-5)
    OUT["sbn"] = {"cpu": [enc(to_np(v)) for v in cpu + [x.sum((0, 2, 3)), (x * x).sum((0, 2, 3))]],
                  "npu": [enc(to_np(v)) for v in npu + [s, q]]}
except Exception as exc:
    OUT["sbn"] = {"error": str(exc)[:400]}
"""


def test_torch_npu_sync_batch_norm_calls_match_cpu():
    r = torch_npu_run(_BODY, {})["sbn"]
    assert "error" not in r, r
    for k, (c, n) in enumerate(zip(r["cpu"], r["npu"])):
        c, n = dec(c), dec(n)
        assert c.shape == n.shape and np.abs(f64(c) - f64(n)).max() <= 2e-5 * max(1.0, np.abs(f64(c)).max()), k
