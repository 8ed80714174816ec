"""The gather / scatter family (native_stubs/src/ops/index/gather_scatter.toml): Gather, Scatter, ScatterValue and
their in-place forms, ScatterAdd, IndexAdd, IndexFill / IndexFillTensor and their in-place forms,
InplaceMaskedScatter, EmbeddingRenorm -- against NumPy references written from the definitions (moves bit for bit;
additions one at a time in fp32, rounded to the dtype, in index order) and torch CPU: every dtype of the vendor's
lists (Ascend 950 here, Atlas A2 in one child), strided views, repeated targets, the validation codes and
messages, and torch_npu's calls on the emulator.

Adding an operator adds a row to OPS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _op_helpers import raw_null_status, strided
from _shape_helpers import (A2, ALL, INVALID, NULLPTR, check_lists, dec, enc, names, npdt,
                            register_torch, same_bits, sample, torch_results)
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R

RNG = np.random.default_rng(4242)
F = np.float32


# ---- references (written from the definitions) -----------------------------------------------------

def combine(a, b, name, reduce):
    """a (op) b as the engine does it: fp32 (DOUBLE in double, integers in int64 wrapping), rounded to name."""
    if reduce == 0:
        return b
    if name == "bool":
        return (a or b) if reduce == 1 else (a and b)
    if name in ("float16", "bfloat16", "float32"):
        x, y = F(a), F(b)
        r = x + y if reduce == 1 else x * y
        return R.cast(np.array([r], F), name)[0]
    if name == "float64":
        return a + b if reduce == 1 else a * b
    r = int(a) + int(b) if reduce == 1 else int(a) * int(b)
    return np.array([r]).astype(np.int64).astype(npdt(name))[0]


def gather_ref(x, dim, idx):
    x = x[tuple(slice(0, idx.shape[d]) if d != dim else slice(None) for d in range(x.ndim))]
    return np.take_along_axis(x, idx % x.shape[dim], axis=dim)


def scatter_ref(x, dim, idx, src, reduce, name):
    out = x.copy()
    for pos in np.ndindex(*idx.shape):
        t = list(pos)
        t[dim] = idx[pos] % x.shape[dim]
        t = tuple(t)
        b = src[pos] if isinstance(src, np.ndarray) else src
        out[t] = combine(out[t], b, name, reduce)
    return out


def index_add_ref(x, dim, idx, source, alpha, name):
    a = R.cast(np.array([alpha], np.float64), name)[0] if name != "bool" else bool(alpha)
    out = x.copy()
    for pos in np.ndindex(*source.shape):
        t = list(pos)
        t[dim] = idx[pos[dim]] % x.shape[dim]
        b = source[pos]
        if name in ("float16", "bfloat16", "float32"):
            b = F(F(b) * F(a))
        elif name == "float64":
            b = b * a
        elif name == "bool":
            b = b and a
        else:
            b = int(b) * int(a)
        out[tuple(t)] = combine(out[tuple(t)], b, name, 1)
    return out


def index_fill_ref(x, dim, idx, value):
    out = x.copy()
    sl = [slice(None)] * x.ndim
    for i in np.asarray(idx).reshape(-1):
        sl[dim] = i % x.shape[dim]
        out[tuple(sl)] = value
    return out


def masked_scatter_ref(x, mask, src):
    out = x.copy()
    m = np.broadcast_to(mask.astype(bool), x.shape)
    out[m] = src.reshape(-1)[:m.sum()]
    return out


# ---- the operators ------------------------------------------------------------------------------------

def value_of(name):
    return {"bool": True, "float64": -2.5}.get(name, 3.5 if name in ("float32", "float16", "bfloat16") else 7)


def scalar_dtype(name):
    return np.float64 if name in ("float32", "float16", "bfloat16", "float64") else (np.bool_ if name == "bool"
                                                                                      else np.int64)


def run_gather(name):
    x = sample(name, (4, 5, 3))
    idx = RNG.integers(-5, 5, (4, 3, 2))
    got = ops.Gather(strided(x), 1, idx, np.zeros(idx.shape, npdt(name)))
    return got, gather_ref(x, 1, idx)


def run_scatter(name, op="Scatter"):
    x = sample(name, (4, 5))
    idx = RNG.integers(0, 4, (3, 5))
    src = sample(name, (3, 6))
    reduce = 0 if name == "bool" else 1
    if op == "Scatter":
        got = ops.Scatter(strided(x), 0, idx, src, reduce, np.zeros_like(x))
    elif op == "ScatterValue":
        src = value_of(name)
        got = ops.ScatterValue(x, 0, idx, ops.Scalar(src, scalar_dtype(name)), reduce, np.zeros_like(x))
        src = R.cast(np.array([src]), name)[0] if name != "bool" else src
    elif op == "InplaceScatter":
        t = strided(x)
        ops.InplaceScatter(t, 0, idx, src, reduce)
        got = t.numpy()
    elif op == "InplaceScatterValue":
        t = pyaclnn.from_numpy(x.copy())
        src = value_of(name)
        ops.InplaceScatterValue(t, 0, idx, ops.Scalar(src, scalar_dtype(name)), reduce)
        src = R.cast(np.array([src]), name)[0] if name != "bool" else src
        got = t.numpy()
    else:   # ScatterAdd
        got = ops.ScatterAdd(x, 0, idx, strided(src), np.zeros_like(x))
        reduce = 1
    return got, scatter_ref(x, 0, idx, src, reduce, name)


def run_index_add(name):
    x = sample(name, (5, 4))
    idx = np.array([3, 0, 3, -1])
    src = sample(name, (5, 4))
    alpha = 2 if name not in FLOATS_NAMES else 1.5
    got = ops.IndexAdd(strided(x), 1, idx, src, ops.Scalar(alpha, np.float64 if alpha == 1.5 else np.int64),
                       np.zeros_like(x))
    return got, index_add_ref(x, 1, idx, src, alpha, name)


def run_index_fill(name, op="IndexFill"):
    x = sample(name, (3, 5, 2))
    idx = [4, 0, -2]
    v = value_of(name)
    want = index_fill_ref(x, 1, idx, R.cast(np.array([v]), name)[0] if name != "bool" else v)
    s = ops.Scalar(v, scalar_dtype(name))
    ix = idx if op.endswith("Tensor") else np.array(idx)
    if op.startswith("Inplace"):
        t = strided(x)
        getattr(ops, op)(t, 1, ix, s)
        return t.numpy(), want
    return getattr(ops, op)(strided(x), 1, ix, s, np.zeros_like(x)), want


def run_masked_scatter(name):
    x = sample(name, (3, 4))
    mask = RNG.integers(0, 2, (4,)).astype(bool)
    src = sample(name, (13,))
    t = strided(x)
    ops.InplaceMaskedScatter(t, mask, src)
    return t.numpy(), masked_scatter_ref(x, mask, src)


def run_renorm(name):
    w = R.cast(RNG.standard_normal((6, 8)) * 2, name)
    idx = np.array([0, 3, 3, 5])
    t = pyaclnn.from_numpy(w.copy())
    ops.EmbeddingRenorm(t, idx, 1.0, 2.0)
    want = w.copy()
    for i in (0, 3, 5):
        row = w[i].astype(F)
        norm = max(F(np.sqrt(np.sum(row.astype(np.float64) ** 2))), F(1e-12))
        scale = F(min(norm, F(1.0)) / norm)
        want[i] = R.cast((row * scale).astype(F), name)
    return t.numpy(), want


FLOATS_NAMES = ("float32", "float16", "bfloat16", "float64")


@dataclass
class Op:
    dtypes_950: list[str]
    dtypes_a2: list[str]
    run: Callable          # name -> (got, want)
    exact: bool = True     # False: compare within 1 ulp of the fp32 model (EmbeddingRenorm's norm order)


GATHER = "FLOAT INT32 FLOAT16 INT8 DOUBLE INT16 INT64 UINT64 UINT32 UINT16 UINT8 BOOL BF16"
SCATTER = "UINT8 INT8 INT16 INT32 INT64 BOOL FLOAT16 FLOAT DOUBLE BF16"
INDEX_ADD = "FLOAT INT32 FLOAT16 DOUBLE INT16 INT8 UINT8 INT64 BOOL BF16"
FILL_A2, FILL_950 = "INT32 FLOAT16 FLOAT INT64 BOOL BF16", "INT32 FLOAT16 FLOAT INT64 BOOL BF16 INT8 UINT8 INT16 DOUBLE"
MASKED = "FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE BOOL BF16"
OPS = {
    "Gather": Op(names(GATHER), names(GATHER), run_gather),
    "Scatter": Op(names(SCATTER), names(SCATTER), run_scatter),
    "ScatterValue": Op(names(SCATTER), names(SCATTER), lambda n: run_scatter(n, "ScatterValue")),
    "InplaceScatter": Op(names(SCATTER), names(SCATTER), lambda n: run_scatter(n, "InplaceScatter")),
    "InplaceScatterValue": Op(names(SCATTER), names(SCATTER), lambda n: run_scatter(n, "InplaceScatterValue")),
    "ScatterAdd": Op(names(SCATTER), names(SCATTER), lambda n: run_scatter(n, "ScatterAdd")),
    "IndexAdd": Op(names(INDEX_ADD), names(INDEX_ADD), run_index_add),
    "IndexFill": Op(names(FILL_950), names(FILL_A2), run_index_fill),
    "InplaceIndexFill": Op(names(FILL_950), names(FILL_A2), lambda n: run_index_fill(n, "InplaceIndexFill")),
    "IndexFillTensor": Op(names(FILL_950), names(FILL_A2), lambda n: run_index_fill(n, "IndexFillTensor")),
    "InplaceIndexFillTensor": Op(names(FILL_950), names(FILL_A2),
                                 lambda n: run_index_fill(n, "InplaceIndexFillTensor")),
    "InplaceMaskedScatter": Op(names(MASKED), names(MASKED), run_masked_scatter),
    "EmbeddingRenorm": Op(names("FLOAT FLOAT16 BF16"), names("FLOAT FLOAT16 BF16"), run_renorm, exact=False),
}
CASES = [(op, d) for op, o in OPS.items() for d in o.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_against_the_reference(op, name):
    got, want = OPS[op].run(name)
    if OPS[op].exact:
        same_bits(got, want)
    else:
        assert np.all(R.ulp_distance(got, want, name) <= 1)


# ---- the status codes of every dtype on both SoCs ------------------------------------------------------

def list_calls(op, name):
    t = lambda shape, dt=name: ["t", dt, shape]               # noqa: E731
    i64 = ["t", "int64", [2, 3]]
    s = ["s", 1, "int64"]
    return {
        "Gather": [t([2, 3]), 1, i64, t([2, 3])],
        "Scatter": [t([2, 3]), 1, i64, t([2, 3]), 0, t([2, 3])],
        "ScatterValue": [t([2, 3]), 1, i64, s, 0, t([2, 3])],
        "InplaceScatter": [t([2, 3]), 1, i64, t([2, 3]), 0],
        "InplaceScatterValue": [t([2, 3]), 1, i64, s, 0],
        "ScatterAdd": [t([2, 3]), 1, i64, t([2, 3]), t([2, 3])],
        "IndexAdd": [t([2, 3]), 1, ["t", "int64", [3]], t([2, 3]), s, t([2, 3])],
        "IndexFill": [t([2, 3]), 1, ["t", "int64", [2]], s, t([2, 3])],
        "InplaceIndexFill": [t([2, 3]), 1, ["t", "int64", [2]], s],
        "IndexFillTensor": [t([2, 3]), 1, [0, 2], s, t([2, 3])],
        "InplaceIndexFillTensor": [t([2, 3]), 1, [0, 2], s],
        "InplaceMaskedScatter": [t([2, 3]), ["t", "bool", [3]], t([6])],
        "EmbeddingRenorm": [t([3, 3]), ["t", "int64", [2]], 1.0, 2.0],
    }[op]


# Atlas A2's IndexFillTensor runs IndexFillD (x * 1 + 0, filled x * 0 + value): -0.0 becomes +0.0, a filled inf
# NaN; IndexFill (a tensor index) moves. Checked in the A2 child.
ASSIST_X = [-0.0, np.inf, 2.0, np.nan, -0.0, -1.0]
ASSIST = [("=IndexFillTensor", [["t", "float32", [2, 3], ASSIST_X], 1, [1], ["s", 5.0, "float32"],
                                ["t", "float32", [2, 3], 0]]),
          ("=IndexFill", [["t", "float32", [2, 3], ASSIST_X], 1, ["t", "int64", [1]], ["s", 5.0, "float32"],
                          ["t", "float32", [2, 3], 0]])]


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    cases = [(op, n, list_calls(op, n), 0 if n in (o.dtypes_950 if soc != A2 else o.dtypes_a2) else INVALID)
             for op, o in OPS.items() for n in ALL]
    results = check_lists(cases, soc, ASSIST)
    if soc == A2:
        assist, move = [np.array(r, np.uint8).view(F).reshape(2, 3) for r in results]
        same_bits(assist, F([[0.0, np.nan, 2.0], [np.nan, 5.0, -1.0]]))
        same_bits(move, F([[-0.0, 5.0, 2.0], [np.nan, 5.0, -1.0]]))


def known(acl_names) -> str:
    """The dtypes the tests hold (the 8-bit floats of the 950 lists are moved as bytes, tested by Cast's tests)."""
    return " ".join(n for n in acl_names if not n.startswith(("FLOAT8", "HIFLOAT8")))


def test_catalog_lists_are_the_vendor_lists():
    from pyaclnn import _catalog
    cat = _catalog.operators()
    for op, o in OPS.items():
        d = next(iter(cat[f"aclnn{op}"]["dtypes"].values()))
        assert names(known(d["950"])) == o.dtypes_950 and names(known(d["A2"])) == o.dtypes_a2, op


# ---- arithmetic and semantics ------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int32", "int8"])
def test_scatter_reduce_modes_and_repeated_targets(name):
    x = sample(name, (3, 4))
    idx = np.array([[0, 0, 2, 1], [0, 0, 2, 2], [1, 0, 2, 1]])          # repeated targets along dim 0
    src = sample(name, (3, 4))
    for reduce in (0, 1, 2, 7):                                       # 7: any other code assigns
        got = ops.Scatter(x, 0, idx, src, reduce, np.zeros_like(x))
        same_bits(got, scatter_ref(x, 0, idx, src, reduce if reduce < 3 else 0, name))
    got = ops.ScatterValue(x, 1, idx % 4, ops.Scalar(2, np.int64), 2, np.zeros_like(x))
    same_bits(got, scatter_ref(x, 1, idx % 4, R.cast(np.array([2.0]), name)[0], 2, name))


def test_scatter_add_and_index_add_against_torch_and_float64():
    torch = pytest.importorskip("torch")
    x = RNG.standard_normal((8, 16)).astype(F)
    idx = RNG.integers(0, 8, (64, 16))                                # ~8 additions per target
    src = RNG.standard_normal((64, 16)).astype(F)
    got = ops.ScatterAdd(x, 0, idx, src, np.zeros_like(x))
    same_bits(got, torch.from_numpy(x).scatter_add(0, torch.from_numpy(idx), torch.from_numpy(src)).numpy())
    exact, mag = x.astype(np.float64), np.abs(x.astype(np.float64))
    cols = np.arange(16)[None, :].repeat(64, 0)
    np.add.at(exact, (idx, cols), src.astype(np.float64))
    np.add.at(mag, (idx, cols), np.abs(src.astype(np.float64)))
    count = np.zeros(x.shape)
    np.add.at(count, (idx, cols), 1)
    # class c: each addition rounds once in fp32: |got - exact| <= additions * 2^-24 * sum |terms|
    assert np.all(np.abs(got - exact) <= count * 2.0 ** -24 * mag)
    ii = RNG.integers(-8, 8, 40)
    source = RNG.standard_normal((40, 16)).astype(F)
    got = ops.IndexAdd(x, 0, ii, source, ops.Scalar(0.5, np.float64), np.zeros_like(x))
    want = torch.from_numpy(x).index_add(0, torch.from_numpy(ii % 8), torch.from_numpy(source), alpha=0.5).numpy()
    same_bits(got, want)                                              # alpha 0.5: exact products


def test_zero_d_and_empty_tensors():
    x = np.float32(3.0).reshape(())
    same_bits(ops.Gather(x, 0, np.array(0), np.zeros((), F)), x)
    same_bits(ops.ScatterAdd(x, 0, np.array(0), np.float32(2).reshape(()), np.zeros((), F)), np.float32(5).reshape(()))
    same_bits(ops.IndexAdd(x, 0, np.array([0]), np.float32(2).reshape(()), ops.Scalar(1, np.int64), np.zeros((), F)),
              np.float32(5).reshape(()))
    y = sample("float32", (3, 4))
    same_bits(ops.Scatter(y, 0, np.zeros((0,), np.int64), y, 1, np.zeros_like(y)), y)    # empty index: a copy
    same_bits(ops.IndexFill(y, 0, np.zeros((0,), np.int64), ops.Scalar(1.0, F), np.zeros_like(y)), y)
    assert ops.Gather(np.zeros((0, 3), F), 1, np.zeros((0, 2), np.int64), np.zeros((0, 2), F)).shape == (0, 2)


def test_out_of_range_index_is_a_device_fault():
    x = sample("float32", (3, 4))
    for call in (lambda: ops.Gather(x, 0, np.array([[3, 0, 0, 0]]), np.zeros((1, 4), F)),
                 lambda: ops.ScatterAdd(x, 1, np.array([[0, 4]]), x, np.zeros_like(x)),
                 lambda: ops.IndexAdd(x, 0, np.array([-4]), x[:1], ops.Scalar(1, np.int64), np.zeros_like(x)),
                 lambda: renorm_synced(pyaclnn.from_numpy(x.copy()), np.array([3]))):
        with pytest.raises(AclError) as e:
            call()
        assert "out of" in str(e.value)


def renorm_synced(t, idx):
    ops.EmbeddingRenorm(t, idx, 1.0, 2.0)
    return t.numpy()


# ---- validation: codes and messages -------------------------------------------------------------------

def message(fn, *args):
    with pytest.raises(AclError) as info:
        fn(*args)
    return info.value.code, info.value.message or ""


X = np.zeros((2, 3), F)
I = np.zeros((2, 3), np.int64)
VALIDATION = [
    ("Gather", (X, 1, I.astype(np.int16), X), "index dtype INT16 is not supported"),
    ("Gather", (X, 1, I[0], X[0]), "Index tensor must have the same number of dimensions as input tensor."),
    ("Gather", (X, 2, I, X), "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    ("Gather", (X, 1, np.zeros((3, 3), np.int64), np.zeros((3, 3), F)), "Size does not match at dimension 0"),
    ("Gather", (X, 1, I, X.astype(np.float16)), "self dtype FLOAT should be the same as out dtype FLOAT16."),
    ("Scatter", (X, 0, I, X.astype(np.float16), 0, X), "should be the same"),
    ("Scatter", (X, 0, I[0], X, 0, X), "expect self, index, src have same number of dimensions."),
    ("Scatter", (X, 0, np.zeros((2, 4), np.int64), np.zeros((2, 4), F), 0, X),
     "Apart from dimension 0, index shape [2, 4] should be smaller than self shape [2, 3] in each dimension."),
    ("Scatter", (X, 0, I, X[:, :2], 0, X), "should be smaller than src shape"),
    ("Scatter", (X, -3, I, X, 0, X), "dim must be in range [-2, 1]."),
    ("ScatterAdd", (X, 0, I, X, np.zeros((3, 2), F)), "Shape of out should be [2, 3]"),
    ("IndexAdd", (X, 0, np.zeros(2, np.int16), X, ops.Scalar(1, np.int64), X), "index dtype INT16 should be in"),
    ("IndexAdd", (X, 2, np.zeros(2, np.int64), X, ops.Scalar(1, np.int64), X), "dim should be in [-self.dims()"),
    ("IndexAdd", (X, 0, np.zeros(3, np.int64), X, ops.Scalar(1, np.int64), X), "Number of index should be equal"),
    ("IndexAdd", (X, 0, np.zeros(2, np.int64), X[:, :2], ops.Scalar(1, np.int64), X), "The size of self must match"),
    ("IndexAdd", (X, 0, np.zeros(2, np.int64), X, ops.Scalar(1, np.int64), X.astype(np.float16)), "must same."),
    ("IndexFill", (X, 2, np.zeros(1, np.int64), ops.Scalar(1, F), X), "Dim value error, input dim[2]"),
    ("IndexFill", (X, -3, np.zeros(1, np.int64), ops.Scalar(1, F), X), "Dim value error, abs(input dim[-3])"),
    ("IndexFill", (X, 0, np.zeros(1, np.float32), ops.Scalar(1, F), X), "index dtype FLOAT is not supported"),
    ("IndexFillTensor", (X, 1, [3], ops.Scalar(1, F), X), "Index value[3] is out of range"),
    ("InplaceMaskedScatter", (X, np.zeros((2, 2), bool), X), "can not broadcast"),
    ("InplaceMaskedScatter", (X, np.zeros(3, np.int32), X), "mask dtype INT32 is not supported"),
    ("EmbeddingRenorm", (np.zeros(3, F), np.zeros(1, np.int64), 1.0, 2.0),
     "Embedding_Renorm: Except 2-dimension Tensor but got [[3]]-dimension Tensor."),
]


@pytest.mark.parametrize("op,args,text", VALIDATION, ids=[f"{v[0]}-{i}" for i, v in enumerate(VALIDATION)])
def test_validation_codes_and_messages(op, args, text):
    code, msg = message(getattr(ops, op), *args)
    assert code == INVALID and text in msg, (code, msg)


@pytest.mark.parametrize("func,n", [("aclnnGatherGetWorkspaceSize", 4), ("aclnnScatterGetWorkspaceSize", 6),
                                    ("aclnnScatterAddGetWorkspaceSize", 5), ("aclnnIndexAddGetWorkspaceSize", 6),
                                    ("aclnnIndexFillTensorGetWorkspaceSize", 5),
                                    ("aclnnInplaceMaskedScatterGetWorkspaceSize", 3),
                                    ("aclnnEmbeddingRenormGetWorkspaceSize", 4)])
def test_null_arguments(func, n):
    assert raw_null_status(func, n) == NULLPTR


# ---- torch_npu on the emulator ----------------------------------------------------------------------------

TX = sample("float32", (4, 6))
TI = RNG.integers(0, 4, (3, 6))
register_torch("gather_scatter", """
x, i = T(dec(SPEC["x"])), T(dec(SPEC["i"]))
j = torch.tensor([3, 0, 3])
for dev in ("cpu", "npu"):
    X, I, J = x.to(dev), i.to(dev), j.to(dev)
    run_array(f"gather-{dev}", lambda: torch.gather(X, 0, I))
    run_array(f"scatter-{dev}", lambda: X.scatter(0, I, X[:3] * 2))
    run_array(f"scatter_-{dev}", lambda: X.clone().scatter_(1, I % 4, 1.5))
    run_array(f"scatter_add-{dev}", lambda: X.scatter_add(0, I, X[:3]))
    run_array(f"scatter_add_-{dev}", lambda: X.clone().scatter_add_(0, I, X[:3]))
    run_array(f"index_add-{dev}", lambda: X.index_add(0, J, X[:3], alpha=2))
    run_array(f"index_fill-{dev}", lambda: X.index_fill(1, J, -1.0))
    run_array(f"index_fill_t-{dev}", lambda: X.clone().index_fill_(1, J, torch.tensor(2.0)))
    run_array(f"masked_scatter-{dev}", lambda: X.masked_scatter(X > 0, X * 10))
    run_array(f"embedding_max_norm-{dev}", lambda: torch.nn.functional.embedding(J, X.clone(), max_norm=1.0))
""", {"x": enc(TX), "i": enc(TI)})


@pytest.mark.parametrize("call", ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "index_add",
                                  "index_fill", "index_fill_t", "masked_scatter", "embedding_max_norm"])
def test_torch_npu_calls(call):
    res = torch_results("gather_scatter")
    npu, cpu = res[f"{call}-npu"], res[f"{call}-cpu"]
    assert "error" not in npu, npu
    if call == "embedding_max_norm":
        assert np.all(R.ulp_distance(dec(npu), dec(cpu), "float32") <= 2)
    else:
        same_bits(dec(npu), dec(cpu))
