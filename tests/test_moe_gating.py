"""MoE gating (native_stubs/src/ops/moe/gating.toml): aclnnMoeGatingTopKSoftmax, aclnnMoeGatingTopKSoftmaxV2,
aclnnMoeGatingTopK and aclnnMoeGatingTopKV2 (hicann/ops-transformer moe/moe_gating_top_k_softmax, moe_gating_top_k_softmax_v2,
moe_gating_top_k). Data-driven: an operator call is a row of CASES / TOPK_CASES, checked against a float64 NumPy
definition written from the vendor's docs and kernels (softmax over the experts, the top k in descending order with
equal values in expert order as the kernels' sorts keep them; V1's fp16 off the perf template ranks the fp16 softmax,
as its SoftMax<half> / TopK<half> do). Class c: y and V2's softmax result within 8 ulp (fp32) / 1 ulp (fp16, bf16) of
the float64 value rounded to the dtype (measured over logits uniform in [-4, 4], 4 to 1280 experts: fp32 y 4,
softmax result 6, fp16/bf16 0); expert indices and rowIdx exact. Every row runs in-process on Ascend 950 (V1 too: its definition lists
no Ascend 950 configuration, but op-plugin's test_autograd_error_fallback runs it there) and again in the one Atlas
A2 subprocess. MoeGatingTopK (groups of experts, softmax, sigmoid or sqrt-softplus, bias, renorm, routed scaling): y and
outOut within 6 ulp (fp32) / 1 ulp (measured 3 and 0; sqrt-softplus's outOut 16, measured 12), indices exact; V2's hash
mode (experts from tid2eid at inputIds, each int32 / int64 pair) against the same float64 definition. One torch_npu child (Atlas A2: npu_moe_gating_top_k_softmax,
npu_moe_gating_top_k_softmax_v2, npu_moe_gating_top_k with and without input_ids / tid2eid)."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from reference import elementwise as R
from _op_helpers import INVALID
import _fused_ops as F

TILING = 561002
F32 = np.float32
A2 = F.ON_A2
Y_ULPS = {"float32": 8, "float16": 1, "bfloat16": 1}
MGK = "Parameter {} of operator MoeGatingTopK has incorrect {} {}."   # the EZ formats of OP_LOGE_FOR_INVALID_*


def mgk_value(param, actual, expected):
    return MGK.format(param, "value", actual) + f" The correct one should be {expected}."


# ---- float64 definition --------------------------------------------------------------------------------------------

def softmax64(a):
    a = F.f64(a)
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def perf_template(col, k):
    """V1's MoeGatingTopKSoftmaxPerfTiling::IsCapable (its fp32 templates; the others run fp16 as fp16)."""
    return (col <= 1024 and col % 8 == 0 and k <= 8) or col < 8


def gating64(x, k, finished=None, renorm=0, v1=False):
    """y (float64), expert indices, rowIdx of the vendor's definition."""
    x = np.asarray(x)
    col = x.shape[-1]
    xr = F.f64(x).reshape(-1, col)
    if renorm:
        idx = np.argsort(-xr, axis=-1, kind="stable")[:, :k]
        y = softmax64(np.take_along_axis(xr, idx, axis=-1))
    else:
        p = softmax64(xr)
        key = F.f64(R.cast(p, "float16")) if v1 and x.dtype == np.float16 and not perf_template(col, k) else p
        idx = np.argsort(-key, axis=-1, kind="stable")[:, :k]
        y = np.take_along_axis(p, idx, axis=-1)
    if finished is not None:
        idx = np.where(np.asarray(finished).reshape(-1, 1), col, idx)
    rows = xr.shape[0]
    row_idx = np.arange(rows * k).reshape(k, rows).T
    shape = x.shape[:-1] + (k,)
    return y.reshape(shape), idx.astype(np.int32).reshape(shape), row_idx.astype(np.int32).reshape(shape)


# ---- cases ---------------------------------------------------------------------------------------------------------

def logits(shape, name, seed):
    """Router logits in [-4, 4] with well separated values per row (a permutation of a grid), so that the fp32
    softmax the kernels rank and the float64 one order them alike; bf16 / fp16 rounding may make exact ties."""
    rng = np.random.default_rng(seed)
    col = shape[-1]
    rows = int(np.prod(shape[:-1]))
    grid = np.linspace(-4, 4, col)
    x = np.stack([rng.permutation(grid) for _ in range(rows)]).reshape(shape)
    return R.cast(x, name)


# op, shape, k, renorm, softmax flag, finished: one row per call (dtypes: all three per row)
CASES = [
    ("V1", (6, 16), 2, 0, False, False),         # perf template
    ("V1", (5, 200), 9, 0, False, True),         # e_k full load (k > 8)
    ("V1", (2, 3, 1280), 4, 0, False, True),     # col > 1024, 3-D
    ("V1", (4, 5), 5, 0, False, False),          # col < 8
    ("V2", (6, 16), 2, 0, True, False),
    ("V2", (5, 200), 9, 1, False, True),
    ("V2", (2, 3, 1280), 4, 0, True, True),
    ("V2", (3, 37), 37, 1, True, False),         # renorm 1 ignores the softmax flag
]


def run_case(op, x, k, renorm, flag, finished):
    out_shape = x.shape[:-1] + (k,)
    y0, i0 = np.zeros(out_shape, x.dtype), np.zeros(out_shape, np.int32)
    if op == "V1":
        return ops.MoeGatingTopKSoftmax(x, finished, k, y0, i0, np.zeros(out_shape, np.int32))
    sm = np.zeros(x.shape, F32) if flag else np.zeros(0, F32)
    return ops.MoeGatingTopKSoftmaxV2(x, finished, k, renorm, flag, y0, i0, sm)


def check_case(case, name):
    op, shape, k, renorm, flag, fin = case
    x = logits(shape, name, hash((op, shape, k, name)) % 1000)
    finished = (np.arange(int(np.prod(shape[:-1]))) % 3 == 1).reshape(shape[:-1]) if fin else None
    y, idx, third = run_case(op, x, k, renorm, flag, finished)
    y64, idx64, row64 = gating64(x, k, finished, renorm, v1=op == "V1")
    assert np.array_equal(idx, idx64), (case, name)
    assert F.ulps(y, y64, name) <= Y_ULPS[name], (case, name, F.ulps(y, y64, name))
    if op == "V1":
        assert np.array_equal(third, row64)
    elif flag and not renorm:
        assert F.ulps(third, softmax64(x), "float32") <= 8
    return F.ulps(y, y64, name)


@pytest.mark.skipif(A2, reason="Ascend 950 in-process")
@pytest.mark.parametrize("name", F.DTYPES)
def test_against_float64(name):
    """V1 too: its definition lists no Ascend 950 configuration, but op-plugin's test_autograd_error_fallback runs it
    on Ascend950 and expects it to succeed."""
    for case in CASES:
        check_case(case, name)


def test_ties_keep_expert_order():
    """Equal softmax values: the lower expert first (Sort32 / MrgSort / TopK). V1's fp16 off the perf template ranks
    the fp16 SoftMax, so 2^-11 above its neighbours ties with them there; V2 ranks the fp32 softmax."""
    x = np.zeros((1, 16), np.float16)
    x[0, 7] = 2.0 ** -11
    y0, i0 = np.zeros((1, 9), np.float16), np.zeros((1, 9), np.int32)
    _, idx, _ = ops.MoeGatingTopKSoftmax(x, None, 9, y0, i0, np.zeros((1, 9), np.int32))
    assert idx.tolist() == [[0, 1, 2, 3, 4, 5, 6, 7, 8]]
    _, idx, _ = ops.MoeGatingTopKSoftmax(x, None, 8, y0[:, :8], i0[:, :8], np.zeros((1, 8), np.int32))
    assert idx.tolist() == [[7, 0, 1, 2, 3, 4, 5, 6]]   # perf template: fp32 ranking
    _, idx, _ = ops.MoeGatingTopKSoftmaxV2(x, None, 9, 0, False, y0, i0, None)
    assert idx.tolist() == [[7, 0, 1, 2, 3, 4, 5, 6, 8]]
    _, idx, _ = ops.MoeGatingTopKSoftmaxV2(np.ones((1, 6), F32), None, 3, 1, False, np.zeros((1, 3), F32),
                                           np.zeros((1, 3), np.int32), None)
    assert idx.tolist() == [[0, 1, 2]]


def test_documented_example():
    """The docs' example call (x 3 x 4 = 0.1 .. 11.1, k 2; V2 renorm 0 with the softmax result)."""
    x = (np.arange(12, dtype=F32) + F32(0.1)).reshape(3, 4)
    y, idx, sm = ops.MoeGatingTopKSoftmaxV2(x, None, 2, 0, True, np.zeros((3, 2), F32), np.zeros((3, 2), np.int32),
                                            np.zeros((3, 4), F32))
    y64, idx64, _ = gating64(x, 2)
    assert idx.tolist() == [[3, 2]] * 3 and F.ulps(y, y64, "float32") <= 8
    assert F.ulps(sm, softmax64(x), "float32") <= 8


# ---- MoeGatingTopK -------------------------------------------------------------------------------------------------

def norm64(x, norm):
    """normOut of the docs: softmax (0), sigmoid (1) or sqrt(softplus) (2), float64."""
    xr = F.f64(x)
    return softmax64(xr) if norm == 0 else 1 / (1 + np.exp(-xr)) if norm == 1 else np.sqrt(np.log1p(np.exp(xr)))


def finish64(n, idx, norm, renorm, factor, eps):
    """y of the docs' Step 5: the experts' normOut, renormalised (every norm but softmax with renorm 0), scaled."""
    y = np.take_along_axis(n, idx, axis=-1)
    if norm != 0 or renorm == 1:
        y = y / (y.sum(axis=-1, keepdims=True) + eps)
    return y * factor


def gating_top_k64(x, k, bias=None, k_group=1, group_count=1, mode=0, norm=0, out_flag=False, factor=1.0, eps=1e-20,
                   renorm=0):
    """The docs' TopK mode: y, indices, normOut."""
    n = norm64(x, norm)
    score = n + F.f64(bias) if bias is not None else n
    rows, e = n.shape
    g = score.reshape(rows, group_count, -1)
    top = -np.sort(-g, axis=-1)
    gscore = top[..., 0] if mode == 0 else top[..., 0] + top[..., 1]
    groups = np.argsort(-gscore, axis=-1, kind="stable")[:, :k_group]
    keep = np.zeros((rows, group_count), bool)
    keep[np.arange(rows)[:, None], groups] = True
    masked = np.where(np.repeat(keep, e // group_count, axis=1), score, -np.inf)
    idx = np.argsort(-masked, axis=-1, kind="stable")[:, :k]
    return finish64(n, idx, norm, renorm, factor, eps), idx.astype(np.int32), n


def gating_hash64(x, ids, tid2eid, norm=0, renorm=0, factor=1.0, eps=1e-20):
    """The docs' Hash mode: expertIdx = tid2eid[inputIds], y their renormalised normOut."""
    n = norm64(x, norm)
    idx = np.asarray(tid2eid).astype(np.int64)[np.asarray(ids).astype(np.int64)]
    return finish64(n, idx, norm, renorm, factor, eps), idx.astype(np.int32), n


# (rows, E), k, bias, k_group, group_count, mode, norm, out_flag, factor: DeepSeek-V3's routing (256 experts in 8
# groups, 4 groups, top-2 sums, sigmoid), the generalized and without-group templates, softmax
TOPK_CASES = [
    ((4, 256), 8, True, 4, 8, 1, 1, True, 2.5, 0),
    ((3, 96), 5, True, 2, 6, 0, 1, False, 1.0, 0),
    ((5, 40), 6, False, 1, 1, 0, 0, True, 1.0, 0),
    ((2, 64), 4, True, 8, 8, 1, 0, True, 0.5, 0),
    ((3, 96), 5, True, 2, 6, 1, 0, True, 1.0, 1),     # softmax + renorm, generalized template (Muls)
    ((4, 48), 3, False, 4, 4, 0, 0, True, 1.5, 1),    # softmax + renorm, without-group template (Div)
    ((4, 72), 6, True, 1, 1, 0, 2, True, 2.0, 0),     # sqrt-softplus (groupCount 1)
]


def check_top_k_case(case, name, seed=0):
    shape, k, has_bias, kg, gc, mode, norm, out_flag, factor, renorm = case
    rng = np.random.default_rng(seed)
    x = logits(shape, name, seed)
    bias = R.cast(rng.permutation(np.linspace(-0.5, 0.5, shape[1])), name) if has_bias else None
    out = np.zeros(shape, F32)
    y, idx, n = ops.MoeGatingTopK(x, bias, k, kg, gc, mode, renorm, norm, out_flag, factor, 1e-20,
                                  np.zeros((shape[0], k), x.dtype), np.zeros((shape[0], k), np.int32), out)
    y64, idx64, n64 = gating_top_k64(x, k, bias, kg, gc, mode, norm, out_flag, factor, renorm=renorm)
    assert np.array_equal(idx, idx64), (case, name, idx, idx64)
    assert F.ulps(y, y64, name) <= TOPK_ULPS[name], (case, name, F.ulps(y, y64, name))
    if out_flag:
        bound = SOFTPLUS_NORM_ULPS if norm == 2 else TOPK_ULPS["float32"]
        assert F.ulps(n, n64, "float32") <= bound, (case, F.ulps(n, n64, "float32"))
    else:
        assert not n.any()
    return F.ulps(y, y64, name), F.ulps(n, n64, "float32") if out_flag else 0


TOPK_ULPS = {"float32": 6, "float16": 1, "bfloat16": 1}
# sqrt-softplus's fp32 steps: Exp(x) + 1 rounds away the digits Ln then needs (x = -4: about 64 ulp of the Ln, 16 of
# the Sqrt); measured 12 over these logits in [-4, 4]; its renormalised fp32 y (the hash mode's experts include
# small logits) within twice that, measured 11
SOFTPLUS_NORM_ULPS = 16


@pytest.mark.parametrize("name", F.DTYPES)
def test_gating_top_k_against_float64(name):
    for case in TOPK_CASES:
        check_top_k_case(case, name)


# ---- MoeGatingTopKV2: the hash mode -----------------------------------------------------------------------------------

# (rows, E), k, inputIds dtype, tid2eid dtype, norm, renorm, factor
HASH_CASES = [
    ((6, 64), 4, np.int32, np.int32, 1, 0, 2.5),
    ((5, 40), 3, np.int64, np.int32, 0, 0, 1.0),
    ((4, 48), 8, np.int32, np.int64, 0, 1, 1.0),
    ((3, 72), 6, np.int64, np.int64, 2, 0, 0.5),
]


def hash_inputs(case, seed=0):
    (rows, e), k, ids_dt, tid_dt = case[:4]
    rng = np.random.default_rng(seed)
    keys = rows + 3
    tid = np.stack([rng.permutation(e)[:k] for _ in range(keys)]).astype(tid_dt)   # distinct experts per key
    return rng.integers(0, keys, rows).astype(ids_dt), tid


def run_v2(x, bias, ids, tid, k, kg=1, gc=1, mode=0, renorm=0, norm=1, flag=True, factor=1.0, eps=1e-20):
    rows, e = x.shape
    return ops.MoeGatingTopKV2(x, bias, ids, tid, k, kg, gc, mode, renorm, norm, flag, factor, eps,
                               np.zeros((rows, k), x.dtype),
                               np.zeros((rows, k), np.int32), np.zeros((rows, e), F32))


def check_hash_case(case, name):
    (rows, e), k, _, _, norm, renorm, factor = case
    x = logits((rows, e), name, 1)
    ids, tid = hash_inputs(case)
    bias = R.cast(np.linspace(-0.5, 0.5, e), name)       # not used by the hash mode
    y, idx, n = run_v2(x, bias, ids, tid, k, norm=norm, renorm=renorm, factor=factor)
    y64, idx64, n64 = gating_hash64(x, ids, tid, norm, renorm, factor)
    assert np.array_equal(idx, idx64), (case, name)
    y_bound = 2 * SOFTPLUS_NORM_ULPS if norm == 2 and name == "float32" else TOPK_ULPS[name]   # n / sum(n)
    assert F.ulps(y, y64, name) <= y_bound, (case, name, F.ulps(y, y64, name))
    assert F.ulps(n, n64, "float32") <= (SOFTPLUS_NORM_ULPS if norm == 2 else TOPK_ULPS["float32"])


@pytest.mark.parametrize("name", F.DTYPES)
def test_v2_hash_mode_against_float64(name):
    for case in HASH_CASES:
        check_hash_case(case, name)


def test_v2_topk_mode_is_moe_gating_top_k():
    """Without both inputIds and tid2eid, V2 ranks as MoeGatingTopK (one of the two alone: TopK mode too)."""
    x = logits((4, 256), "float32", 2)
    bias = np.linspace(-0.5, 0.5, 256).astype(F32)
    ids, _ = hash_inputs(((4, 256), 8, np.int32, np.int32))
    for given in [(None, None), (ids, None)]:
        y, idx, n = run_v2(x, bias, *given, 8, kg=4, gc=8, mode=1, norm=1, factor=2.5)
        y64, idx64, n64 = gating_top_k64(x, 8, bias, 4, 8, 1, 1, True, 2.5)
        assert np.array_equal(idx, idx64) and F.ulps(y, y64, "float32") <= TOPK_ULPS["float32"]


X8 = np.ones((3, 8), F32)
IDS = np.array([0, 2, 1], np.int32)
TID = np.array([[0, 1], [2, 3], [4, 5]], np.int32)

V2_HASH_INVALID = [   # (inputIds, tid2eid, k, kGroup, groupCount), code, message text
    ((IDS.astype(np.int8), TID, 2, 1, 1), INVALID, "Tensor inputIdsOptional not implemented for INT8"),
    ((IDS, TID.astype(F32), 2, 1, 1), INVALID, "Tensor tid2eidOptional not implemented for FLOAT"),
    ((IDS, np.zeros((3, 65), np.int32), 65, 1, 1), TILING,
     mgk_value("k", 65, "less than or equal to 64 for hash mode")),
    ((IDS, np.zeros((3, 3), np.int32), 2, 1, 1), TILING, MGK.format("tid2eid", "shape", "[3, 3]")
     + " Reason: The 1st axis of input tid2eid must be equal to the value of attribute k, which is 2."),
    ((IDS[:2], TID, 2, 1, 1), TILING, MGK.format("input_ids", "shape", "[2]")
     + " Reason: The 0th axis of input input_ids must be equal to the 0th axis of input x [3, 8]."),
    ((IDS, TID, 2, 1, 2), TILING, "Parameter hash mode of operator MoeGatingTopK has incorrect value hash mode only "
     "supports simplified path. Reason: k_group must equal group_count or group_count must equal expert_count."),
]


@pytest.mark.parametrize("args,code,text", V2_HASH_INVALID)
def test_v2_hash_invalid_arguments(args, code, text):
    ids, tid, k, kg, gc = args
    F.expect_error(run_v2, (X8, None, ids, tid, k, kg, gc), code, text)


@pytest.mark.parametrize("ids,tid,text", [
    (np.array([0, 3, 1], np.int64), TID, "inputIds[1] = 3 is not a row of tid2eid (0 .. 2)"),
    (IDS, np.array([[0, 1], [2, 8], [4, 5]], np.int64), "tid2eid[1][1] = 8 is not an expert (0 .. 7)"),
    (IDS, np.array([[0, 1], [2, 3], [-1, 5]], np.int32), "tid2eid[2][0] = -1 is not an expert (0 .. 7)"),
])
def test_v2_hash_indices_outside_are_a_device_fault(ids, tid, text):
    """The kernel reads tid2eid at inputIds[r] * k and gathers the norm at its values unchecked: the emulator fails
    the task (ACL_ERROR_RT_AICORE_EXCEPTION at the synchronisation)."""
    from pyaclnn.errors import AclError
    err = pytest.raises(AclError, run_v2, X8, None, ids, tid, 2).value
    assert err.code == 507015 and text in str(err), str(err)


# ---- validation ----------------------------------------------------------------------------------------------------

X = np.ones((2, 8), F32)
Z2, I2 = np.zeros((2, 2), F32), np.zeros((2, 2), np.int32)
B = np.zeros(2, bool)
V2 = "MoeGatingTopKSoftmaxV2"
PRE = "Tiling4MoeGatingTopKSoftmaxV2"

V2_INVALID = [   # arguments, code, message text
    ((X.astype(np.float64), None, 2, 0, False, Z2, I2, None), INVALID, "dtype combination x DOUBLE"),
    ((X, None, 2, 0, False, Z2.astype(np.float16), I2, None), INVALID, "yOut FLOAT16"),
    ((X, B.astype(np.int8), 2, 0, False, Z2, I2, None), INVALID, "finishedOptional INT8"),
    ((X, None, 2, 0, True, Z2, I2, np.zeros((2, 8), np.float16)), INVALID, "softmaxResultOutOptional FLOAT16"),
    ((np.ones((2, 2, 2, 8), F32), None, 2, 0, False, Z2, I2, None), TILING, f"{PRE} get x shape dim(=4) is not 2 or 3"),
    ((np.ones((2, 0), F32), None, 2, 0, False, Z2, I2, None), TILING, f"{PRE} x shape last dim is zero"),
    ((X, np.zeros(3, bool), 2, 0, False, Z2, I2, None), TILING, f"{PRE} finished and x shape not equal"),
    ((X, np.zeros((2, 1), bool), 2, 0, False, Z2, I2, None), TILING,
     f"{PRE} get finished dim num (=2) error, should be (=1)"),
    ((X, None, 0, 0, False, Z2, I2, None), TILING, f"{PRE} attr k(=0) is wrong, please check. col=8"),
    ((X, None, 9, 0, False, Z2, I2, None), TILING, f"{PRE} attr k(=9) is wrong"),
    ((X, None, 2, 0, False, np.zeros((3, 2), F32), I2, None), TILING, f"{PRE} y and x dim 0 not equal"),
    ((X, None, 2, 0, False, np.zeros((2, 3), F32), I2, None), TILING, f"{PRE} y or expertIdx last dim and k not equal"),
    ((X, None, 2, 0, False, Z2, np.zeros((2, 2, 1), np.int32), None), TILING,
     f"{PRE} expertIdx and x shape num not equal"),
    ((X, None, 2, 2, False, Z2, I2, None), TILING, f"{PRE} attr renorm(=2) is wrong"),
    ((X, None, 2, 0, True, Z2, I2, None), TILING, f"{PRE} softmax is nullptr"),
    ((X, None, 2, 0, True, Z2, I2, np.zeros((2, 4), F32)), TILING, f"{PRE} softmax and x last dim not equal"),
]

V1_OUT = (np.zeros((2, 2), F32), I2, I2)
P1 = "Tiling4MoeGatingTopKSoftmax"
V1_INVALID = [
    ((X.astype(np.float16), None, 2) + V1_OUT, INVALID, "dtype combination x FLOAT16"),
    ((X, None, 2, Z2, I2, np.zeros((2, 2), np.int64)), INVALID, "rowIdxOut INT64"),
    ((np.ones(8, F32), None, 2) + V1_OUT, TILING, f"{P1} get x shape dim(=1) is not 2 or 3"),
    ((np.ones((0, 8), F32), None, 2, Z2, I2, I2), TILING, f"{P1} x shape contain zero"),
    ((X, np.zeros((2, 1), bool), 2) + V1_OUT, TILING, f"{P1} get finish dim num (=2) error, should be (=1)"),
    ((X, None, 2, np.zeros((3, 2), F32), I2, I2), TILING, f"{P1} out and x dim 1 not equal"),
    ((X, None, 2, Z2, I2, np.zeros((2, 2, 1), np.int32)), TILING, f"{P1} out and x shape num not equal"),
    ((X, None, 9) + V1_OUT, TILING, f"{P1} attr k(=9) is wrong, please check. col=8"),
    ((np.ones((2, 2000), F32), None, 1025, np.zeros((2, 1025), F32), np.zeros((2, 1025), np.int32),
      np.zeros((2, 1025), np.int32)), TILING, f"{P1} attr k(=1025) is too large"),
    ((X, None, 2, np.zeros((2, 3), F32), I2, I2), INVALID, "yOut [2, 3]: its last dim must be k (2)"),
]


XK = np.ones((2, 64), F32)
BK = np.zeros(64, F32)
YK, IK, OK = np.zeros((2, 4), F32), np.zeros((2, 4), np.int32), np.zeros((2, 64), F32)


def topk_args(**kw):
    a = dict(x=XK, bias=BK, k=4, kg=2, gc=4, mode=1, renorm=0, norm=1, flag=True, factor=1.0, eps=1e-20,
             y=YK, i=IK, o=OK)
    a.update(kw)
    return tuple(a.values())


TOPK_INVALID = [   # arguments, code, message text (the op_api's dtype checks, then the tiling's in its order)
    (topk_args(x=XK.astype(np.float16), y=YK.astype(np.float16)), INVALID,
     "Expected both tensors to have same dtype, but found x FLOAT16 and biasOptional FLOAT."),
    (topk_args(y=YK.astype(np.float16)), INVALID, "found x FLOAT and yOut FLOAT16"),
    (topk_args(i=IK.astype(np.int64)), INVALID, "Tensor expertIdxOut not implemented for INT64"),
    (topk_args(o=OK.astype(np.float16)), INVALID, "Tensor outOut not implemented for FLOAT16"),
    (topk_args(x=np.ones((2, 2, 64), F32)), TILING, MGK.format("x", "shape dim", 3) + " The correct one should be 2."),
    (topk_args(bias=np.zeros((1, 64), F32)), TILING, MGK.format("bias", "shape dim", 2)),
    (topk_args(bias=np.zeros(32, F32)), TILING, mgk_value("bias dim[0]", 32, 64)),
    (topk_args(k=65), TILING, mgk_value("k", 65, "less than or equal to expert num")),
    (topk_args(y=np.zeros((2, 4, 1), F32)), TILING, MGK.format("y", "shape dim", 3)),
    (topk_args(i=np.zeros((3, 4), np.int32)), TILING, mgk_value("expert_idx dim[0]", 3, 2)),
    (topk_args(o=np.zeros((2, 8), F32)), TILING, mgk_value("out dim[1]", 8, 64)),
    (topk_args(y=np.zeros((2, 5), F32)), TILING, mgk_value("y dim[1]", 5, 4)),
    (topk_args(x=np.ones((2, 4096), F32), bias=None, o=np.zeros((2, 4096), F32)), TILING,
     mgk_value("expert_count", 4096, "less than or equal to 2048")),
    (topk_args(k=0, y=np.zeros((2, 0), F32), i=np.zeros((2, 0), np.int32)), TILING,
     mgk_value("k", 0, "greater than 0")),
    (topk_args(kg=5), TILING, mgk_value("k_group", 5, "less than or equal to group_count")),
    (topk_args(norm=3), TILING, mgk_value("norm_type", 3, "0, 1 or 2")),
    (topk_args(norm=2), TILING, MGK.format("group_count", "value", 4)
     + " Reason: The attr group_count must be 1 when the attr norm_type is 2 (softplus)."),
    (topk_args(mode=2), TILING, mgk_value("group_select_mode", 2, "0 or 1")),
    (topk_args(renorm=2), TILING, mgk_value("renorm", 2, "0 or 1")),
    (topk_args(gc=3), TILING, MGK.format("expert_count", "value", 64)
     + " Reason: expert_count must be divisible by group_count."),
    (topk_args(gc=64, kg=2), TILING, MGK.format("group_expert_count", "value", 1)
     + " Reason: group expert count should be greater than 1."),
    (topk_args(k=40, y=np.zeros((2, 40), F32), i=np.zeros((2, 40), np.int32)), TILING,
     mgk_value("k", 40, "less than or equal to k_group * group_expert_count")),
    (topk_args(x=np.ones((2, 2040), F32), bias=None, o=np.zeros((2, 2040), F32), gc=120, kg=2), TILING,
     mgk_value("group_count * group_expert_count_align", 3840, "less than or equal to 2048")),
]


@pytest.mark.parametrize("args,code,text", TOPK_INVALID)
def test_gating_top_k_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeGatingTopK, args, code, text)


@pytest.mark.parametrize("args,code,text", V2_INVALID)
def test_v2_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeGatingTopKSoftmaxV2, args, code, text)


@pytest.mark.parametrize("args,code,text", V1_INVALID)
def test_v1_invalid_arguments(args, code, text):
    F.expect_error(ops.MoeGatingTopKSoftmax, args, code, text)


def check_v1_empty_outputs_run_nothing():
    e = np.zeros((0, 2), F32)
    y, idx, _ = ops.MoeGatingTopKSoftmax(np.ones((0, 8), F32), None, 2, e, e.astype(np.int32), e.astype(np.int32))
    assert y.shape == (0, 2)


@pytest.mark.parametrize("op,n", [("MoeGatingTopKSoftmax", 6), ("MoeGatingTopKSoftmaxV2", 8), ("MoeGatingTopK", 14),
                                  ("MoeGatingTopKV2", 16)])
def test_null_arguments(op, n):
    F.null_status_is_nullptr(op, n)


# ---- Atlas A2: V1 and V2 in one subprocess -------------------------------------------------------------------------

A2_CALLS = """
for name in ["float32", "float16", "bfloat16"]:
    for case in T.CASES:
        T.check_case(case, name)
    for case in T.TOPK_CASES:
        T.check_top_k_case(case, name)
    for case in T.HASH_CASES:
        T.check_hash_case(case, name)
for args, code, text in T.V1_INVALID[:3]:
    T.test_v1_invalid_arguments(args, code, text)
for args, code, text in T.TOPK_INVALID[:6]:
    T.test_gating_top_k_invalid_arguments(args, code, text)
T.check_v1_empty_outputs_run_nothing()
T.test_ties_keep_expert_order()
T.test_documented_example()
T.test_v2_topk_mode_is_moe_gating_top_k()
"""


def test_atlas_a2_v1_and_v2():
    F.run_on_a2("test_moe_gating", A2_CALLS)


# ---- torch_npu -----------------------------------------------------------------------------------------------------

TORCH_BODY = """
torch.manual_seed(0)
for dt in [torch.float32, torch.float16, torch.bfloat16]:
    x = (torch.randperm(6 * 40).reshape(6, 40).float() / 30 - 4).to(dt)
    fin = torch.tensor([False, True, False, False, True, False])
    y, idx, row = torch_npu.npu_moe_gating_top_k_softmax(x.npu(), fin.npu(), 3)
    OUT["v1 " + str(dt)] = [enc(to_np(v)) for v in (x, fin, y, idx, row)]
    y2, idx2, sm = torch_npu.npu_moe_gating_top_k_softmax_v2(x.npu(), k=3, output_softmax=True)
    OUT["v2 " + str(dt)] = [enc(to_np(v)) for v in (y2, idx2, sm)]
    y3, idx3, _ = torch_npu.npu_moe_gating_top_k_softmax_v2(x.npu(), k=3, finished=fin.npu(), renorm=1)
    OUT["v2r " + str(dt)] = [enc(to_np(v)) for v in (y3, idx3)]
    xk = (torch.randperm(4 * 256).reshape(4, 256).float() / 128 - 4).to(dt)
    bk = (torch.randperm(256).float() / 512 - 0.25).to(dt)
    yk, ik, nk = torch_npu.npu_moe_gating_top_k(xk.npu(), 8, bias=bk.npu(), k_group=4, group_count=8,
                                                group_select_mode=1, norm_type=1, out_flag=True,
                                                routed_scaling_factor=2.5)
    OUT["topk " + str(dt)] = [enc(to_np(v)) for v in (xk, bk, yk, ik, nk)]
    ids = torch.tensor([2, 0, 1, 2], dtype=torch.int32)
    tid = torch.tensor([[0, 5, 9, 200], [1, 2, 3, 4], [255, 128, 64, 32]], dtype=torch.int64)
    yh, ih, nh = torch_npu.npu_moe_gating_top_k(xk.npu(), 4, input_ids=ids.npu(), tid2eid=tid.npu(), norm_type=1,
                                                out_flag=True, routed_scaling_factor=2.5)
    OUT["hash " + str(dt)] = [enc(to_np(v)) for v in (ids, tid, yh, ih, nh)]
"""


def test_torch_npu_reaches_the_operators():
    if A2:
        return
    out = F.torch_npu_arrays(TORCH_BODY, soc="Ascend910B4")   # V1 has no Ascend 950 configuration
    for dt, name in F.TORCH_NAMES.items():
        x, fin, y, idx, row = out["v1 " + dt]
        y64, idx64, row64 = gating64(x, 3, fin, v1=True)
        assert np.array_equal(idx, idx64) and np.array_equal(row, row64) and F.ulps(y, y64, name) <= Y_ULPS[name]
        y2, idx2, sm = out["v2 " + dt]
        y64, idx64, _ = gating64(x, 3)
        assert np.array_equal(idx2, idx64) and F.ulps(y2, y64, name) <= Y_ULPS[name]
        assert F.ulps(sm, softmax64(x), "float32") <= 8
        y3, idx3 = out["v2r " + dt]
        y64, idx64, _ = gating64(x, 3, fin, renorm=1)
        assert np.array_equal(idx3, idx64) and F.ulps(y3, y64, name) <= Y_ULPS[name]
        xk, bk, yk, ik, nk = out["topk " + dt]
        y64, idx64, n64 = gating_top_k64(xk, 8, bk, 4, 8, 1, 1, True, 2.5)
        assert np.array_equal(ik, idx64) and F.ulps(yk, y64, name) <= TOPK_ULPS[name]
        assert F.ulps(nk, n64, "float32") <= TOPK_ULPS["float32"]
        ids, tid, yh, ih, nh = out["hash " + dt]     # aclnnMoeGatingTopKV2's hash mode
        y64, idx64, n64 = gating_hash64(xk, ids, tid, norm=1, factor=2.5)
        assert np.array_equal(ih, idx64) and F.ulps(yh, y64, name) <= TOPK_ULPS[name]
        assert F.ulps(nh, n64, "float32") <= TOPK_ULPS["float32"]
