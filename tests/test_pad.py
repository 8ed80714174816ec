"""The pad family (native_stubs/src/ops/pad/pad.toml): ConstantPadNd, ReflectionPad1d/2d/3d, ReplicationPad1d/2d/3d
and their backwards -- forwards bit for bit against NumPy's np.pad (an independent reference), backwards against
fp32 sums of gradOutput over the forward's maps and torch CPU; every dtype of the vendor's lists (Ascend 950 here,
Atlas A2 in one child), strided views, negative pads, the validation codes and messages, torch_npu's F.pad and its
autograd on the emulator.

Adding an operator adds a row to PADS."""
from __future__ import annotations

import numpy as np
import pytest

from _op_helpers import raw_null_status, strided
from _shape_helpers import (A2, ALL, INVALID, NULLPTR, check_lists, dec, enc, names, npdt,
                            register_torch, same_bits, sample, torch_results)
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R

RNG = np.random.default_rng(5151)
F = np.float32

CONSTANT = "FLOAT INT32 FLOAT16 INT8 DOUBLE INT16 INT64 UINT64 UINT32 UINT16 UINT8 BOOL BF16"
REFLECTION_A2 = "FLOAT INT32 INT64 FLOAT16 INT16 DOUBLE INT8 UINT8 BOOL BF16"
REFLECTION_950 = "FLOAT INT32 FLOAT16 INT8 DOUBLE INT16 INT64 UINT64 UINT32 UINT16 UINT8 BOOL BF16"
REPLICATION_A2 = "FLOAT INT32 INT64 FLOAT16 INT16 DOUBLE INT8 UINT8 BF16"
REPLICATION_950 = "INT64 UINT64 DOUBLE INT32 UINT32 FLOAT INT16 UINT16 FLOAT16 BF16 INT8 UINT8 BOOL"
GRAD = "FLOAT FLOAT16 BF16 DOUBLE"

# name -> (K padded dims, np.pad mode, 950 list, A2 list); the backward of each: "<name>Backward".
PADS = {
    "ReflectionPad1d": (1, "reflect", REFLECTION_950, REFLECTION_A2),
    "ReflectionPad2d": (2, "reflect", REFLECTION_950, REFLECTION_A2),
    "ReflectionPad3d": (3, "reflect", REFLECTION_950, REFLECTION_A2),
    "ReplicationPad1d": (1, "edge", REPLICATION_950, REPLICATION_A2),
    "ReplicationPad2d": (2, "edge", REPLICATION_950, REPLICATION_A2),
    "ReplicationPad3d": (3, "edge", REPLICATION_950, REPLICATION_A2),
}
PADDING = [2, 1, 1, 2, 0, 1]


def np_pad(x, padding, mode, value=0):
    """torch's padding list (from the last dim backwards, negative values crop) through np.pad."""
    k = len(padding) // 2
    widths = [(0, 0)] * (x.ndim - k) + [(padding[2 * i], padding[2 * i + 1]) for i in reversed(range(k))]
    crop = tuple(slice(-lo if lo < 0 else 0, x.shape[d] + hi if hi < 0 else None) for d, (lo, hi) in enumerate(widths))
    x = x[crop]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    if x.dtype == R.BF16:
        v16 = np.array(value).astype(R.BF16).view(np.uint16)
        return np_pad(x.view(np.uint16), [w for p in reversed(widths[x.ndim - k:]) for w in p], mode, v16).view(R.BF16)
    return np.pad(x, widths, mode, **({"constant_values": value} if mode == "constant" else {}))


def pad_backward_ref(grad, shape, padding, mode):
    """gradInput: gradOutput's elements summed (fp32, row-major order) where the forward read them."""
    ids = np_pad(np.arange(int(np.prod(shape))).reshape(shape), padding, mode)
    acc = np.zeros(int(np.prod(shape)), np.float64)
    g = grad.astype(np.float64).reshape(-1)
    dbl = grad.dtype == np.float64
    for j, i in enumerate(ids.reshape(-1)):
        acc[i] = acc[i] + g[j] if dbl else F(acc[i] + g[j])
    return R.cast(acc.reshape(shape), "bfloat16" if grad.dtype == R.BF16 else grad.dtype.name)


def shape_for(k):
    return (2, 3, 4, 5, 4)[-(k + 2):]


# ---- every dtype ----------------------------------------------------------------------------------------

CONSTANT_CASES = names(CONSTANT)


@pytest.mark.parametrize("name", CONSTANT_CASES)
def test_constant_pad_every_dtype(name):
    x = sample(name, (3, 4, 5))
    pad = [1, 2, -1, 2, 0, 1]
    v = {"bool": True}.get(name, 3)
    want = np_pad(x, pad, "constant", np.array(v).astype(npdt(name)))
    got = ops.ConstantPadNd(strided(x, transpose=True), pad, ops.Scalar(v, np.int64 if name != "bool" else np.bool_),
                            np.zeros(want.shape, npdt(name)))
    same_bits(got, want)


CASES = [(op, n) for op, (_, _, l950, _) in PADS.items() for n in names(l950)[::2] + ["float32", "bfloat16"]]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{n}" for o, n in CASES])
def test_mirror_pads_every_dtype(op, name):
    k, mode, _, _ = PADS[op]
    x = sample(name, shape_for(k) if k < 3 else (1, 3, 4, 5))      # 3d: a tensor of K + 1 dims
    want = np_pad(x, PADDING[:2 * k], mode)
    same_bits(getattr(ops, op)(strided(x), PADDING[:2 * k], np.zeros(want.shape, npdt(name))), want)


BWD = [(op, n) for op in PADS for n in names(GRAD)]


@pytest.mark.parametrize("op,name", BWD, ids=[f"{o}Backward-{n}" for o, n in BWD])
def test_mirror_pad_backwards(op, name):
    k, mode, _, _ = PADS[op]
    shape = shape_for(k)
    x = np.zeros(shape, npdt(name))
    grad = R.cast(RNG.standard_normal(np_pad(x, PADDING[:2 * k], mode).shape), name)
    got = getattr(ops, op + "Backward")(strided(grad), x, PADDING[:2 * k], np.zeros(shape, npdt(name)))
    same_bits(got, pad_backward_ref(grad, shape, PADDING[:2 * k], mode))


def test_backwards_against_torch():
    torch = pytest.importorskip("torch")
    F_ = torch.nn.functional
    for op, (k, mode, _, _) in PADS.items():
        x = torch.zeros(shape_for(k), requires_grad=True)
        y = F_.pad(x, PADDING[:2 * k], mode="reflect" if mode == "reflect" else "replicate")
        g = torch.from_numpy(RNG.standard_normal(y.shape).astype(F))
        y.backward(g)
        got = getattr(ops, op + "Backward")(g.numpy(), x.detach().numpy(), PADDING[:2 * k], np.zeros(x.shape, F))
        # the same additions, perhaps in another order: within 1 ulp per addition of the sum
        assert np.allclose(got, x.grad.numpy(), rtol=4 * 2.0 ** -23, atol=1e-6), op


# ---- status codes of every dtype on both SoCs ------------------------------------------------------------

def list_cases(soc):
    cases = []
    for n in ALL:
        cases.append(("ConstantPadNd", n, [["t", n, [2, 3]], [1, 1], ["s", 0, "int64"], ["t", n, [2, 5]]],
                      0 if n in names(CONSTANT) else INVALID))
        for op, (k, _, l950, la2) in PADS.items():
            shape = list(shape_for(k))
            out = shape[:-k] + [s + PADDING[2 * i] + PADDING[2 * i + 1] for i, s in enumerate(shape[-k:][::-1])][::-1]
            ok = n in names(l950 if soc != A2 else la2)
            cases.append((op, n, [["t", n, shape], PADDING[:2 * k], ["t", n, out]], 0 if ok else INVALID))
            cases.append((op + "Backward", n, [["t", n, out], ["t", n, shape], PADDING[:2 * k], ["t", n, shape]],
                          0 if n in names(GRAD) else INVALID))
    return cases


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    check_lists(list_cases(soc), soc)


def test_catalog_lists_are_the_vendor_lists():
    from pyaclnn import _catalog
    cat = _catalog.operators()
    known = lambda ns: " ".join(n for n in ns if "FLOAT8" not in n)   # noqa: E731 (the 8-bit floats: bytes)
    for op, (_, _, l950, la2) in PADS.items():
        d = next(iter(cat[f"aclnn{op}"]["dtypes"].values()))
        assert names(known(d["950"])) == names(l950) and names(known(d["A2"])) == names(la2), op


# ---- semantics: crops, empties, 0-d ----------------------------------------------------------------------

def test_constant_pad_crops_fills_and_empties():
    x = sample("float32", (2, 3))
    same_bits(ops.ConstantPadNd(x, [-1, -1], ops.Scalar(0, np.int64), np.zeros((2, 1), F)), x[:, 1:2])
    same_bits(ops.ConstantPadNd(x, [], ops.Scalar(0, np.int64), np.zeros((2, 3), F)), x)
    e = np.zeros((0, 3), F)                                   # an empty self: out is all value
    same_bits(ops.ConstantPadNd(e, [0, 0, 1, 1], ops.Scalar(2.5, np.float64), np.zeros((2, 3), F)),
              np.full((2, 3), 2.5, F))
    same_bits(ops.ConstantPadNd(np.float32(4).reshape(()), [], ops.Scalar(0, np.int64), np.zeros((), F)),
              np.float32(4).reshape(()))
    assert ops.ReflectionPad2d(np.zeros((0, 2, 3, 4), F), [1, 1, 1, 1], np.zeros((0, 2, 5, 6), F)).shape == (0, 2, 5, 6)


# ---- validation ---------------------------------------------------------------------------------------------

X3 = np.zeros((2, 3, 4), F)
VALIDATION = [
    ("ConstantPadNd", (X3, [1, 1, 1], ops.Scalar(0, np.int64), X3), "Pad len must be divisible by 2"),
    ("ConstantPadNd", (X3, [1] * 8, ops.Scalar(0, np.int64), X3), "not be greater than twice of [3]"),
    ("ConstantPadNd", (X3, [-3, -2], ops.Scalar(0, np.int64), X3), "resulted in a negative output size"),
    ("ConstantPadNd", (X3, [1, 1], ops.Scalar(0, np.int64), X3), "output shape at dim 2 check failed"),
    ("ConstantPadNd", (X3, [1, 1], ops.Scalar(0, np.int64), np.zeros((2, 3), F)), "can't be different"),
    ("ConstantPadNd", (X3, [-5, 1], ops.Scalar(0, np.int64), np.zeros((2, 3, 0), F)), None),
    ("ConstantPadNd", (X3, [-4, 1], ops.Scalar(0, np.int64), np.zeros((2, 3, 1), F)), "ok"),
    ("ConstantPadNd", (np.zeros((2, 0), F), [1, 0], ops.Scalar(0, np.int64), np.zeros((2, 1), F)), "ok"),
    ("ConstantPadNd", (X3, [0, 0, 0, -3], ops.Scalar(0, np.int64), np.zeros((2, 0, 4), F)), "ok"),
    ("ConstantPadNd", (X3, [1, 0, 0, -3], ops.Scalar(0, np.int64), np.zeros((2, 0, 5), F)), "with zero element"),
    ("ReflectionPad1d", (X3, [4, 0], np.zeros((2, 3, 8), F)), "padding size should be less than the corresponding"),
    ("ReflectionPad1d", (X3, [1, 1, 1, 1], X3), "padding length should be 2, but got 4."),
    ("ReflectionPad1d", (X3, [1, 1], X3), "wrong out shape."),
    ("ReflectionPad2d", (X3[0], [1, 1, 1, 1], X3), "at least 3 are needed"),
    ("ReflectionPad2d", (np.zeros((1,) * 5, F), [0, 0, 0, 0], np.zeros((1,) * 5, F)), "at most 4 are supported"),
    ("ReplicationPad2d", (X3, [1, 1, 1, 1], X3), "Shape of out should be [2, 5, 6]"),
    ("ReplicationPad1d", (X3, [1, 1], np.zeros((2, 3, 6), np.float16)), "should be the same"),
    ("ReplicationPad1d", (np.zeros((2, 0, 4), F), [1, 1], np.zeros((2, 0, 6), F)),
     "Expected 2D or 3D tensor with possibly 0 batch size and other non-zero dimensions for input."),
    ("ReflectionPad1dBackward", (np.zeros((2, 3, 6), F), X3, [1, 1], np.zeros((2, 3, 5), F)), "Shape of gradInput"),
    ("ReflectionPad1dBackward", (np.zeros((2, 3, 7), F), X3, [1, 1], X3), "wrong gradOutput shape."),
    ("ReplicationPad2dBackward", (np.zeros((2, 5, 6), np.int32), X3.astype(np.int32), [1, 1, 1, 1],
                                  X3.astype(np.int32)), "gradOutput dtype INT32 is not supported"),
]


@pytest.mark.parametrize("op,args,text", VALIDATION, ids=[f"{v[0]}-{i}" for i, v in enumerate(VALIDATION)])
def test_validation_codes_and_messages(op, args, text):
    try:
        getattr(ops, op)(*args)
        code, msg = 0, ""
    except AclError as exc:
        code, msg = exc.code, exc.message or ""
    if text == "ok":
        assert code == 0, msg
    elif text is None:
        assert code == INVALID, msg
    else:
        assert code == INVALID and text in msg, (code, msg)


@pytest.mark.parametrize("func,n", [("aclnnConstantPadNdGetWorkspaceSize", 4),
                                    ("aclnnReflectionPad2dGetWorkspaceSize", 3),
                                    ("aclnnReplicationPad3dBackwardGetWorkspaceSize", 4)])
def test_null_arguments(func, n):
    assert raw_null_status(func, n) == NULLPTR


# ---- torch_npu on the emulator -------------------------------------------------------------------------------

TX = sample("float32", (2, 3, 4, 5))
TX[0, 0, 0, :4] = [1.0, 2.0, 3.0, 4.0]                      # no NaN where autograd would spread it
TX = np.nan_to_num(TX, posinf=7.0, neginf=-7.0)
register_torch("pad", """
Fn = torch.nn.functional
x = T(dec(SPEC["x"]))
calls = {"constant": lambda t: Fn.pad(t, (1, 2, 0, -1), value=-1.5),
         "reflect1": lambda t: Fn.pad(t[0], (2, 1), mode="reflect"),
         "reflect2": lambda t: Fn.pad(t, (2, 1, 1, 2), mode="reflect"),
         "reflect3": lambda t: Fn.pad(t, (1, 1, 1, 2, 1, 0), mode="reflect"),
         "replicate1": lambda t: Fn.pad(t[0], (2, 3), mode="replicate"),
         "replicate2": lambda t: Fn.pad(t, (2, 1, 1, 2), mode="replicate"),
         "replicate3": lambda t: Fn.pad(t, (1, 1, 2, 0, 0, 1), mode="replicate")}
for dev in ("cpu", "npu"):
    for name, f in calls.items():
        run_array(f"{name}-{dev}", lambda: f(x.to(dev)))
        def grad():
            t = x.detach().clone().to(dev).requires_grad_()
            f(t).square().sum().backward()
            return t.grad
        run_array(f"{name}_grad-{dev}", grad)
""", {"x": enc(TX)})


@pytest.mark.parametrize("call", ["constant", "reflect1", "reflect2", "reflect3", "replicate1", "replicate2",
                                  "replicate3"])
def test_torch_npu_pads_and_their_autograd(call):
    res = torch_results("pad")
    assert "error" not in res[f"{call}-npu"], res[f"{call}-npu"]
    same_bits(dec(res[f"{call}-npu"]), dec(res[f"{call}-cpu"]))
    g_npu, g_cpu = res[f"{call}_grad-npu"], res[f"{call}_grad-cpu"]
    assert "error" not in g_npu, g_npu
    assert np.allclose(dec(g_npu), dec(g_cpu), rtol=1e-6, atol=1e-6)
