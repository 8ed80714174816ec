"""aclnnDot, Trace, Mv, Addr / InplaceAddr, Addbmm / InplaceAddbmm (src/ops/matmul/blas.toml) against float64
NumPy references with the bounds their notes state (Dot, Trace, Mv, Addbmm: class c), Addr against a NumPy model
of the vendor's steps (class b: bit for bit), integers exact; every dtype of the vendor's lists (Ascend 950 here,
Atlas A2 in one child process, with A2's composite Addr path), strided views, empty operands, the validation codes
and messages, and torch's dot / vdot / mv / addr / addbmm / trace on torch_npu against torch CPU (one child, which also runs
tests/test_distance.py's cdist / pdist / cross calls npu_confusion_transpose and
the dense linear algebra of tests/test_linalg.py)."""
from __future__ import annotations

import numpy as np
import pytest

from pyaclnn import ops
from _cnn_ops import A2, INVALID, NULLPTR, dec, dtype_list_mismatches, error_of, f64, torch_npu_run
import _linalg_cases as C
from _op_helpers import strided
from reference import elementwise as R

RNG = np.random.default_rng(21)
U = {"float32": 2.0 ** -24, "float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float64": 2.0 ** -53}
FLOATS = ["float32", "float16", "bfloat16"]


def rand(shape, name, scale=2.0):
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    dt = R.np_dtype(name)
    if dt.kind in "iu":
        return RNG.integers(-100 if dt.kind == "i" else 0, 100, shape).astype(dt)
    return R.cast(RNG.standard_normal(shape) * scale, name)


def bounded(got, exact, terms, n, name):
    """|got - exact| <= (n + 2) * 2^-24 * terms + u_out * |exact| (an fp32 sum of n terms, one rounding)."""
    err = np.abs(f64(got) - exact)
    tol = (n + 2) * 2.0 ** -24 * terms + U[name] * np.abs(exact)
    assert np.all(err <= tol), float(np.max(err - tol))


# ---- Dot / Trace ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS + ["int8", "uint8", "int32"])
def test_dot_every_dtype(name):
    a, b = rand(37, name), rand(37, name)
    got = ops.Dot(strided(a), b, np.zeros((), R.np_dtype(name)))
    if name in FLOATS:
        bounded(got, f64(a) @ f64(b), np.abs(f64(a)) @ np.abs(f64(b)), 37, name)
    else:   # int32 products and sum, the low byte of it for the 8-bit dtypes
        s = int(np.sum(a.astype(np.int64) * b.astype(np.int64))) & 0xFFFFFFFF
        assert int(got) == int(np.array(s, np.uint32).astype(np.int32).astype(R.np_dtype(name)))


def test_dot_int8_wraps_and_empty_is_zero():
    a = np.full(3, 100, np.int8)
    assert int(ops.Dot(a, a, np.zeros((), np.int8))) == np.int8(np.uint8(30000 & 0xFF).view(np.int8))
    assert float(ops.Dot(np.zeros(0, np.float32), np.zeros(0, np.float32), np.full((), 7, np.float32))) == 0.0


@pytest.mark.parametrize("args,code,text", [
    ((np.ones(3, np.float32), np.ones(3, np.float16), np.zeros((), np.float32)), INVALID, "same dtype"),
    ((np.ones(3, np.float64), np.ones(3, np.float64), np.zeros((), np.float64)), INVALID, "not implemented for DOUBLE"),
    ((np.ones((3, 1), np.float32), np.ones(3, np.float32), np.zeros((), np.float32)), INVALID, "expected 1D input tensors"),
    ((np.ones(3, np.float32), np.ones(4, np.float32), np.zeros((), np.float32)), INVALID, "expected consistent tensor size"),
    ((np.ones(3, np.float32), np.ones(3, np.float32), np.zeros(1, np.float32)), INVALID, "expected 0D output tensor"),
    ((None, np.ones(3, np.float32), np.zeros((), np.float32)), NULLPTR, "")])
def test_dot_validation(args, code, text):
    c, msg = error_of(ops.Dot, *args)
    assert c == code and text in msg, msg


@pytest.mark.parametrize("name", FLOATS + ["float64", "int8", "uint8", "int16", "int32", "int64", "bool"])
def test_trace_every_dtype(name):
    x = rand((5, 7), name)
    integral = R.np_dtype(name).kind in "iub"
    out = np.zeros((), np.int64 if integral else R.np_dtype(name))
    got = ops.Trace(strided(x, transpose=True), out)
    want = np.trace(x.astype(np.int64) if integral else f64(x))
    if integral:
        assert int(got) == int(want)
    elif name == "float64":
        assert abs(float(got) - want) <= 1e-15 * np.trace(np.abs(f64(x)))
    else:
        bounded(got, want, np.trace(np.abs(f64(x))), 5, name)


def test_trace_validation_and_empty():
    assert float(ops.Trace(np.zeros((0, 3), np.float32), np.full((), 5, np.float32))) == 0.0
    c, msg = error_of(ops.Trace, np.ones((2, 2, 2), np.float32), np.zeros((), np.float32))
    assert c == INVALID and "trace: expected a matrix, but got tensor with dim 3" in msg
    c, msg = error_of(ops.Trace, np.ones((2, 2), np.int32), np.zeros((), np.int32))
    assert c == INVALID and "expected dtype is INT64 but found INT32" in msg
    c, msg = error_of(ops.Trace, np.ones((2, 2), np.float32), np.zeros(1, np.float32))
    assert c == INVALID and "expected 0D output tensor" in msg


# ---- Mv / Addbmm (the matmul engine) ---------------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
def test_mv(name):
    a, v = rand((6, 9), name), rand(9, name)
    got = ops.Mv(strided(a, transpose=True), v, np.zeros(6, R.np_dtype(name)), 0)
    bounded(got, f64(a) @ f64(v), np.abs(f64(a)) @ np.abs(f64(v)), 9, name)
    assert (ops.Mv(np.zeros((4, 0), np.float32), np.zeros(0, np.float32), np.full(4, 3, np.float32), 0) == 0).all()


@pytest.mark.parametrize("args,text", [
    ((np.ones((2, 3), np.float32), np.ones(3, np.float16), np.zeros(2, np.float32), 0), "same dtype"),
    ((np.ones((2, 3), np.float32), np.ones(4, np.float32), np.zeros(2, np.float32), 0), "to have same size as [3]"),
    ((np.ones((2, 3), np.float32), np.ones(3, np.float32), np.zeros(3, np.float32), 0), "to have same size as [2]"),
    ((np.ones(3, np.float32), np.ones(3, np.float32), np.zeros(2, np.float32), 0), "self dim should be 2"),
    ((np.ones((2, 3), np.float64), np.ones(3, np.float64), np.zeros(2, np.float64), 0), "DOUBLE"),
    ((np.ones((2, 3), np.float32), np.ones(3, np.float32), np.zeros(2, np.float32), 5), "cubeMathType 5")])
def test_mv_validation(args, text):
    c, msg = error_of(ops.Mv, *args)
    assert c == INVALID and text in msg, msg


@pytest.mark.parametrize("name,bias,alpha,beta", [("float32", (4, 5), 0.5, 2.0), ("float16", (5,), 1.0, 1.0),
                                                  ("bfloat16", (4, 1), 1.0, 0.0), ("float32", (), 0.0, 3.0)])
def test_addbmm(name, bias, alpha, beta):
    b1, b2, c = rand((3, 4, 6), name), rand((3, 6, 5), name), rand(bias, name)
    c[...] = np.nan if beta == 0.0 else c   # beta 0: self is not read
    got = ops.Addbmm(c, strided(b1), b2, ops.Scalar(beta, "float32"), ops.Scalar(alpha, "float32"),
                     np.zeros((4, 5), R.np_dtype(name)), 0)
    prod = np.einsum("bmk,bkn->mn", f64(b1), f64(b2))
    terms = np.einsum("bmk,bkn->mn", np.abs(f64(b1)), np.abs(f64(b2)))
    cb = np.broadcast_to(f64(c), (4, 5)) if beta else 0.0
    exact = beta * cb + alpha * prod if alpha else beta * cb
    bounded(got, exact, np.abs(beta * cb) + abs(alpha) * terms, 18, name)
    ref = c.astype(np.float32).copy() if c.shape == (4, 5) else None
    if ref is not None and beta:
        r = ops.InplaceAddbmm(ref, b1, b2, ops.Scalar(beta, "float32"), ops.Scalar(alpha, "float32"), 0)
        assert np.array_equal(r.astype(np.float64), f64(got)) or name != "float32"


def test_addbmm_validation():
    f = np.float32
    s = ops.Scalar(1.0, "float32")
    c, msg = error_of(ops.Addbmm, np.ones((2, 2), f), np.ones((2, 2), f), np.ones((2, 2, 2), f), s, s, np.zeros((2, 2), f), 0)
    assert c == INVALID and "batch1 dim should be 3" in msg
    c, msg = error_of(ops.Addbmm, np.ones((2, 2), f), np.ones((2, 2, 3), f), np.ones((2, 2, 2), f), s, s, np.zeros((2, 2), f), 0)
    assert c == INVALID and "shoule be same, batch1 [3], batch2 [2]" in msg
    c, msg = error_of(ops.Addbmm, np.ones((3, 2), f), np.ones((2, 2, 2), f), np.ones((2, 2, 2), f), s, s, np.zeros((2, 2), f), 0)
    assert c == INVALID and "can't broadcast" in msg
    c, msg = error_of(ops.Addbmm, np.ones((2, 2), f), np.ones((2, 2, 2), f), np.ones((2, 2, 2), f), s, s, np.zeros((2, 3), f), 0)
    assert c == INVALID and "Shape of out should be [2, 2], but current is [2, 3]" in msg
    c, msg = error_of(ops.Addbmm, np.ones((2, 2), f), np.ones((2, 2, 2), f), np.ones((2, 2, 2), f), None, s, np.zeros((2, 2), f), 0)
    assert c == NULLPTR


# ---- Addr: a NumPy model of the vendor's steps ----------------------------------------------------------

def name_of(x) -> str:
    return "bfloat16" if x.dtype == R.np_dtype("bfloat16") else str(x.dtype)


def addr_model(s, v1, v2, beta, alpha, out_name, fused):
    """beta * self + (alpha * vec1) outer vec2 as the vendor's kernels round it (blas.c addr_kernel)."""
    names = [name_of(x) for x in (s, v1, v2)]
    high = R.promote(names[0], R.promote(names[2], names[1]))
    S, A, B = (np.broadcast_to(R.cast(f64(x), high) if high != "bool" else x.astype(bool), shp)
               for x, shp in ((s, (len(v1), len(v2))), (v1[:, None], (len(v1), 1)), (v2[None, :], (1, len(v2)))))
    if high == "bool":
        r = (bool(beta) & S) | (bool(alpha) & A & B) if beta != 0 else (bool(alpha) & A & B)
        return R.cast(r.astype(np.float64), out_name)
    if fused and high in FLOATS:   # fp32 steps, one RINT
        f = np.float32
        a32, b32 = f(R.cast(np.float64(alpha), high)), f(R.cast(np.float64(beta), high))
        prod = (A.astype(f) * a32) * B.astype(f)
        r = prod if beta == 0 else (S.astype(f) * b32 if alpha == 0 else S.astype(f) * b32 + prod)
        return R.cast(R.cast(r.astype(np.float64), high).astype(np.float64), out_name)

    def rnd(x):
        return R.cast(x, high).astype(np.float64)
    a_h, b_h = float(rnd(np.float64(alpha))), float(rnd(np.float64(beta)))
    prod = rnd((rnd(a_h * f64(A)) if alpha != 1 else f64(A)) * f64(B))
    r = prod if beta == 0 else rnd((f64(S) if beta == 1 else rnd(f64(S) * b_h)) + prod)
    return R.cast(r, out_name)


ADDR_CASES = [("float32", "float32", 0.5, 2.0), ("float16", "float16", 1.5, 1.0), ("bfloat16", "bfloat16", 3.0, 0.0),
              ("float64", "float64", 0.25, 1.5), ("float16", "float32", 2.0, 0.5)]


@pytest.mark.parametrize("name,out_name,alpha,beta", ADDR_CASES)
def test_addr_floats_bit_exact(name, out_name, alpha, beta):
    s, v1, v2 = rand((4, 6), name), rand(4, name), rand(6, name)
    got = ops.Addr(strided(s), v1, strided(v2), ops.Scalar(beta, "float32"), ops.Scalar(alpha, "float32"),
                   np.zeros((4, 6), R.np_dtype(out_name)))
    want = addr_model(s, v1, v2, beta, alpha, out_name, fused=name != "float64")
    assert np.array_equal(f64(got), f64(want), equal_nan=True), np.max(np.abs(f64(got) - f64(want)))


def test_addr_integers_bool_broadcast_inplace():
    v1, v2 = np.array([100, -7, 3], np.int8), np.array([90, 5], np.int8)
    s = np.array([[1, 2]], np.int8)    # broadcast over rows
    got = ops.Addr(s, v1, v2, ops.Scalar(3, "int64"), ops.Scalar(2, "int64"), np.zeros((3, 2), np.int8))
    want = (3 * s.astype(np.int64) + 2 * np.outer(v1.astype(np.int64), v2)) & 0xFF
    assert np.array_equal(got, want.astype(np.uint8).view(np.int8))
    b = np.array([True, False]), np.array([True, True, False])
    got = ops.Addr(np.zeros((2, 3), bool), b[0], b[1], None, None, np.zeros((2, 3), bool))
    assert np.array_equal(got, np.outer(b[0], b[1]))
    i32 = ops.Addr(np.ones((2, 2), np.int32), np.array([2**30, 1], np.int32), np.array([4, 1], np.int32), None, None,
                   np.zeros((2, 2), np.int32))
    assert i32[0, 0] == 1 and i32[1, 1] == 2      # int32 wrap
    x = rand((3, 4), "float32")
    v1, v2 = rand(3, "float32"), rand(4, "float32")
    r = ops.InplaceAddr(x.copy(), v1, v2, ops.Scalar(2.0, "float32"), None)
    assert np.array_equal(r, addr_model(x, v1, v2, 2.0, 1.0, "float32", True))


def test_addr_validation():
    f = np.float32
    c, msg = error_of(ops.Addr, np.ones((2, 3), f), np.ones(2, f), np.ones(3, f), ops.Scalar(True, "bool"), None,
                      np.zeros((2, 3), f))
    assert c == INVALID and "Boolean beta only supported for Boolean results." in msg
    i = np.int32
    c, msg = error_of(ops.Addr, np.ones((2, 3), i), np.ones(2, i), np.ones(3, i), None, ops.Scalar(0.5, "float32"),
                      np.zeros((2, 3), i))
    assert c == INVALID and "argument alpha must not be a floating point number" in msg
    c, msg = error_of(ops.Addr, np.ones((3, 3), f), np.ones(2, f), np.ones(3, f), None, None, np.zeros((2, 3), f))
    assert c == INVALID and "the size of tensor self [3, 3] must match the size of tensor outer [2, 3]." in msg
    c, msg = error_of(ops.Addr, np.ones((2, 3), f), np.ones((2, 1), f), np.ones(3, f), None, None, np.zeros((2, 3), f))
    assert c == INVALID and "vec1 dim should be 1" in msg
    c, msg = error_of(ops.InplaceAddr, np.ones(3, f), np.ones(2, f), np.ones(3, f), None, None)
    assert c == INVALID and "self dim should be 2" in msg
    c, msg = error_of(ops.Addr, np.ones((2, 3), f), np.ones(2, f), np.ones(3, f), None, None, np.zeros((3, 2), f))
    assert c == INVALID and "to have same size as [2, 3]" in msg
    assert error_of(ops.Addr, np.ones((2, 3), f), None, np.ones(3, f), None, None, np.zeros((2, 3), f))[0] == NULLPTR


# ---- dtype lists per SoC (Atlas A2 in one child, which also returns its composite Addr's bytes) -----------

CANDS = ["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]


def _calls(d):
    t1, t23, t0 = ["t", d, [3]], ["t", d, [2, 3]], ["t", d, []]
    tr_out = ["t", "int64" if d in ("int8", "uint8", "int16", "int32", "int64", "bool") else d, []]
    one = ["s", 1, "int64"]
    return [("Dot", [t1, t1, t0]), ("Trace", [t23, tr_out]), ("Mv", [t23, t1, ["t", d, [2]], 0]),
            ("Addr", [t23, ["t", d, [2]], t1, one, one, t23]),
            ("Addbmm", [t23, ["t", d, [2, 2, 2]], ["t", d, [2, 2, 3]], one, one, t23, 0])]


OK = {"Dot": "float32 float16 bfloat16 int8 int32 uint8", "Trace": " ".join(CANDS), "Mv": "float32 float16 bfloat16",
      "Addr": " ".join(CANDS), "Addbmm": "float32 float16 bfloat16"}

_A2_ADDR = """
s = np.array([[1.5, -2.25, 3.0], [0.1, 7.0, -0.3]], np.float16)
v1, v2 = np.array([1.1, -2.3], np.float16), np.array([0.7, 3.3, -1.9], np.float16)
r = ops.Addr(s, v1, v2, ops.Scalar(0.3, "float32"), ops.Scalar(1.7, "float32"), np.zeros((2, 3), np.float16))
EXTRA["addr"] = r.astype(np.float64).tolist()
"""


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    ok = {op: names.split() for op, names in OK.items()}
    ok.update(C.DIST_OK)
    ok.update(C.LA_OK)

    def calls(d):   # this file's operators, and the distance and linear algebra ones (one A2 child for all)
        return _calls(d) + (C.dist_calls(d) if d in C.DIST_CANDS else []) + (C.la_calls(d) if d in C.LA_CANDS else [])
    if soc == A2:
        bad, extra = dtype_list_mismatches(calls, CANDS, ok, soc, extra=_A2_ADDR)
        s = np.array([[1.5, -2.25, 3.0], [0.1, 7.0, -0.3]], np.float16)
        v1, v2 = np.array([1.1, -2.3], np.float16), np.array([0.7, 3.3, -1.9], np.float16)
        model = addr_model(s, v1, v2, 0.3, 1.7, "float16", fused=False)   # every l0 step rounded to fp16
        assert np.array_equal(np.array(extra["addr"]), f64(model))
        assert not np.array_equal(f64(model), f64(addr_model(s, v1, v2, 0.3, 1.7, "float16", fused=True)))
    else:
        bad = dtype_list_mismatches(calls, CANDS, ok, soc)
    assert bad == []


# ---- torch_npu --------------------------------------------------------------------------------------------

_BODY = """
torch.manual_seed(0)
a, b = torch.randn(33), torch.randn(33)
m, v = torch.randn(5, 33), torch.randn(5)
b1, b2, c = torch.randn(3, 5, 4), torch.randn(3, 4, 6), torch.randn(5, 6)
y1, y2 = torch.randn(2, 5, 4), torch.randn(2, 3, 4)
sq = torch.randn(2, 4, 4) + 4 * torch.eye(4)


def svd_parts(t):   # what is unique: the values, the reconstruction, |u| of distinct values
    u, sv, vh = torch.linalg.svd(t(y1), full_matrices=False)
    return torch.cat([sv.reshape(-1), (u @ torch.diag_embed(sv) @ vh).reshape(-1), u.abs().reshape(-1)])


def confusion(t, first):
    x = t(b1).detach().requires_grad_()
    if x.is_cpu:   # the reference: reshape / permute as torch_npu documents them
        y = x.permute(1, 0, 2).reshape(5, 12) if first else x.reshape(4, 5, 3).permute(2, 0, 1)
    else:
        y = torch_npu.npu_confusion_transpose(x, [1, 0, 2], [5, 12], True) if first else \
            torch_npu.npu_confusion_transpose(x, [2, 0, 1], [4, 5, 3], False)
    y.backward(t(torch.linspace(-1, 1, 60).reshape(y.shape)))
    return torch.cat([y.reshape(-1), x.grad.reshape(-1)])


def cdist_grad(t, p):
    x = t(y1).detach().requires_grad_()
    torch.cdist(x, t(y2), p).backward(t(torch.linspace(-1, 1, 30).reshape(2, 5, 3)))
    return x.grad
calls = {
    "dot": lambda t: torch.dot(t(a), t(b)),
    "vdot": lambda t: torch.vdot(t(a), t(b)),
    "mv": lambda t: torch.mv(t(m), t(a)),
    "mv-t": lambda t: torch.mv(t(m).t(), t(v)),
    "addr": lambda t: torch.addr(t(c), t(c[:, 0]), t(c[0]), beta=0.5, alpha=2.0),
    "addr-int": lambda t: torch.addr(t(c).int(), t(c[:, 0]).int(), t(c[0]).int(), beta=2, alpha=3),
    "addbmm": lambda t: torch.addbmm(t(c), t(b1), t(b2), beta=0.5, alpha=1.5),
    "addbmm_": lambda t: t(c).clone().addbmm_(t(b1), t(b2)),
    "trace": lambda t: torch.trace(t(m)),
    "trace-int": lambda t: torch.trace(t(m).long()),
    "cdist": lambda t: torch.cdist(t(y1), t(y2)),
    "cdist-p1": lambda t: torch.cdist(t(y1), t(y2), p=1.0),
    "cdist-inf": lambda t: torch.cdist(t(y1), t(y2), p=float("inf")),
    "cdist-grad-p3": lambda t: cdist_grad(t, 3.0),
    "pdist": lambda t: torch.nn.functional.pdist(t(m), p=1.5),
    "cross": lambda t: torch.cross(t(c[:3]), t(c[2:5]), dim=0),
    "linalg.cross-int": lambda t: torch.linalg.cross(t(b1[..., :3] * 9).int(), t(b1[:1, :, 1:] * 9).int()),
    "confusion_transpose": lambda t: confusion(t, True),
    "confusion_transpose-reshape-first": lambda t: confusion(t, False),
    "solve_triangular": lambda t: torch.linalg.solve_triangular(t(sq), t(y1[:, :4, :]), upper=True),
    "solve_triangular-right-unit": lambda t: torch.linalg.solve_triangular(t(sq), t(y1[:, :, :4]), upper=False,
                                                                           left=False, unitriangular=True),
    "inverse": lambda t: torch.inverse(t(sq)),
    "slogdet": lambda t: torch.stack(torch.linalg.slogdet(t(sq))),
    "qr": lambda t: torch.cat([x.reshape(-1) for x in torch.linalg.qr(t(y1))]),
    "svd": svd_parts,
    "svdvals": lambda t: torch.linalg.svdvals(t(y2)),
}
for name, f in calls.items():
    try:
        OUT[name] = {"cpu": [enc(to_np(f(lambda x: x)))], "npu": [enc(to_np(f(lambda x: x.npu())))]}
    except Exception as exc:
        OUT[name] = {"error": str(exc)[:400]}
"""

# the distance family's, ConfusionTranspose's and the dense linear algebra's torch calls (tests/test_distance.py,
# test_confusion_transpose.py, test_linalg.py) share this child
TORCH_CALLS = ["dot", "vdot", "mv", "mv-t", "addr", "addr-int", "addbmm", "addbmm_", "trace", "trace-int", "cdist",
               "cdist-p1", "cdist-inf", "cdist-grad-p3", "pdist", "cross", "linalg.cross-int", "confusion_transpose",
               "confusion_transpose-reshape-first", "solve_triangular", "solve_triangular-right-unit", "inverse",
               "slogdet", "qr", "svd", "svdvals"]


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {})


@pytest.mark.parametrize("call", TORCH_CALLS)
def test_torch_npu_matches_cpu(on_npu, call):
    r = on_npu[call]
    assert "error" not in r, r
    c, n = dec(r["cpu"][0]), dec(r["npu"][0])
    assert c.shape == n.shape and np.abs(f64(c) - f64(n)).max() <= 2e-6 * max(1.0, np.abs(f64(c)).max())
