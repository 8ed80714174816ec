"""The pair family (native_stubs/src/ops/math/pairwise.toml): Minimum, Maximum, Fmod (Tensor / Scalar, in
place), Remainder (TensorTensor / TensorScalar / ScalarTensor, in place), FloorDivide / FloorDivides (in place),
bit for bit against NumPy references written from the vendor's kernels (hicann/ops-math op_kernel/arch35) and
against torch CPU: every dtype of the vendor's lists, each op_api's own promotion (per SoC for the scalar forms),
broadcasting, strided views, zero divisors, NaN/inf/-0.0, the validation codes (Ascend 950 here, Atlas A2 in a
subprocess), and torch_npu's calls on the emulator.

Adding an operator adds a row to OPS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytest

import pyaclnn
from _math_ops import (A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, status_codes, torch_npu_run)
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(4242)
F = np.float32
FLOATS = ("float32", "float16", "bfloat16", "float64")


def dtype_name(a) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


# ---- references (written from the kernels), on values already in the compute dtype -------------------------

def wrap(v, c):
    return R.cast(np.asarray(v, np.int64), c) if c != "bool" else np.asarray(v, bool)


def minmax_ref(is_min):
    def ref(a, b, c):
        if c == "bool":
            return (a & b) if is_min else (a | b)
        if c in FLOATS:
            x, y = a.astype(np.float64), b.astype(np.float64)
            pick_a = np.isnan(x) | (~np.isnan(y) & ((x < y) if is_min else (x > y)))
            return np.where(pick_a, a, b)
        return np.where((a < b) if is_min else (a > b), a, b)
    return ref


def trunc_rem(x, y):
    """C's % on int64 (truncated), 0 for a % -1 and where y == 0 (replaced by the callers)."""
    ys = np.where(y == 0, 1, y)
    r = np.fmod(x, ys)
    return np.where(ys == -1, 0, r)


def fmod_ref(a, b, c):
    if c in FLOATS:
        return R.cast(np.fmod(a.astype(np.float64), b.astype(np.float64)), c)
    x, y = a.astype(np.int64), b.astype(np.int64)
    return wrap(np.where(y == 0, -1, trunc_rem(x, y)), c)


def remainder_ref(a, b, c):
    if c in FLOATS:
        x, y = a.astype(np.float64), b.astype(np.float64)
        r = np.fmod(x, y)
        fix = (r != 0) & ~np.isnan(r) & (np.signbit(r) != np.signbit(y))
        added = (r + y) if c == "float64" else (r.astype(F) + y.astype(F)).astype(np.float64)
        return R.cast(np.where(fix, added, r), c)
    x, y = a.astype(np.int64), b.astype(np.int64)
    m = np.where(y == 0, -1, trunc_rem(x, y))
    m = np.where((m != 0) & ((m < 0) != (y < 0)), m + y, m)
    return wrap(m, c)


def floordiv_ref(a, b, c):
    if c in FLOATS:
        if c == "float64":
            return np.floor(a.astype(np.float64) / b.astype(np.float64))
        return R.cast(np.floor(a.astype(F) / b.astype(F)), c)
    x, y = a.astype(np.int64), b.astype(np.int64)
    ys = np.where(y == 0, 1, y)
    q = np.where(ys == -1, -x, np.floor_divide(x, ys))
    return wrap(np.where(y == 0, 0, q), c)


# ---- the operators and their promotions -----------------------------------------------------------------

def promote(a, b):
    """op::PromoteType (torch's table); None where there is none (UINT16/32/64)."""
    return R.promote(a, b) if a in R.ARITH and b in R.ARITH else None


def combine(t, s):
    """CombineCategories(tensor, scalar) of the vendor's op_apis."""
    if t in FLOATS:
        return t
    if t == "bool" or s in FLOATS:
        return promote(t, s)
    return t


@dataclass
class Op:
    ref: Callable                        # (a, b, compute) -> the result in the compute dtype
    dtypes: list[str]                    # the vendor's list (self / other / out, or the promoted dtype)
    compute: Callable = lambda a, b, soc: promote(a, b)    # tensor-tensor promotion
    inplace: str | None = None
    torch: str | None = None


MINMAX = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE BOOL BF16")
FMOD = names("FLOAT INT32 INT8 FLOAT16 UINT8 DOUBLE INT64 BF16")
REMAINDER = names("INT32 INT64 FLOAT16 FLOAT DOUBLE BF16")
FLOORDIV = names("FLOAT16 FLOAT INT64 INT32 INT16 INT8 UINT8 DOUBLE BOOL BF16")


def _floordiv_compute(a, b, soc):
    p = promote(a, b)
    return "float32" if p == "bool" else p


OPS = {
    "Minimum": Op(minmax_ref(True), MINMAX, torch="minimum"),
    "Maximum": Op(minmax_ref(False), MINMAX, torch="maximum"),
    "FmodTensor": Op(fmod_ref, FMOD, inplace="InplaceFmodTensor", torch="fmod"),
    "RemainderTensorTensor": Op(remainder_ref, REMAINDER, inplace="InplaceRemainderTensorTensor", torch="remainder"),
    "FloorDivide": Op(floordiv_ref, FLOORDIV, compute=_floordiv_compute, inplace="InplaceFloorDivide",
                      torch="floor_divide"),
}


@dataclass
class ScalarOp:
    ref: Callable
    compute: Callable                    # (tensor dtype, scalar dtype, out dtype, soc) -> compute dtype
    scalar_first: bool = False
    inplace: str | None = None


def _fmod_scalar_compute(t, s, out, soc):
    return combine(t, s) if soc == "950" else promote(t, s)


def _floordivs_compute(t, s, out, soc):
    if soc == "950":
        p = combine(t, "float32" if s in FLOATS else s)
        p = "float32" if p in ("float16", "bfloat16") else p
    else:
        p = promote(t, s)
    return "float32" if p == "bool" else p


SCALAR_OPS = {
    "FmodScalar": ScalarOp(fmod_ref, _fmod_scalar_compute, inplace="InplaceFmodScalar"),
    "RemainderTensorScalar": ScalarOp(remainder_ref, lambda t, s, out, soc: combine(t, s),
                                      inplace="InplaceRemainderTensorScalar"),
    "RemainderScalarTensor": ScalarOp(remainder_ref,
                                      lambda t, s, out, soc: combine(t, s) if soc == "950" else out,
                                      scalar_first=True),
    "FloorDivides": ScalarOp(floordiv_ref, _floordivs_compute, inplace="InplaceFloorDivides"),
}


def values(name, shape, divisor=False):
    if name in FLOATS:
        x = RNG.standard_normal(shape) * 7
        flat = x.reshape(-1)
        if flat.size >= 12:
            flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 3.0] if not divisor else [2.0, -0.0, np.inf, -3.0, np.nan, 0.0]
        return R.cast(x, name)
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    info = np.iinfo(R.np_dtype(name))
    lo, hi = (int(info.min), int(info.max)) if info.bits <= 16 else (-(10 ** 6), 10 ** 6)
    x = RNG.integers(max(lo, -50) if divisor else lo, min(hi, 50) if divisor else hi, shape, endpoint=True)
    x = x.astype(R.np_dtype(name))
    if divisor and x.size > 3:
        x.reshape(-1)[:2] = [0, -1 if info.min < 0 else 1]
    elif x.size > 3:
        x.reshape(-1)[:2] = [info.min, info.max]
    return x


def tensor_ref(op, a, b, out):
    c = OPS[op].compute(dtype_name(a), dtype_name(b), "950")
    aa, bb = np.broadcast_arrays(R.cast(a, c), R.cast(b, c))
    return R.cast(OPS[op].ref(aa, bb, c), out)


def out_of(op, name):
    return _floordiv_compute(name, name, "950") if op == "FloorDivide" else name


CASES = [(op, d) for op, o in OPS.items() for d in o.dtypes]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_broadcast_bit_exact(op, name):
    a, b = values(name, (4, 1, 33)), values(name, (3, 1), divisor=True)
    out = out_of(op, name)
    got = getattr(ops, op)(a, b, np.zeros((4, 3, 33), R.np_dtype(out)))
    same_bits(got, tensor_ref(op, a, b, out))


@pytest.mark.parametrize("op", [op for op, o in OPS.items() if o.inplace])
def test_in_place_strided_and_empty(op):
    o = OPS[op]
    for name in ("float32", "float16", "int32"):
        a, b = values(name, (5, 9)), values(name, (9,), divisor=True)
        t = pyaclnn.from_numpy(a.copy())
        getattr(ops, o.inplace)(t, b)
        same_bits(t.numpy(), tensor_ref(op, a, b, dtype_name(a)))
    a, b = values("float32", (6, 8)), values("float32", (6, 8), divisor=True)
    same_bits(getattr(ops, op)(strided(a, transpose=True), strided(b), np.zeros((6, 8), F)), tensor_ref(op, a, b, "float32"))
    view = strided(a)
    getattr(ops, o.inplace)(view, b[:1])
    same_bits(view.numpy(), tensor_ref(op, a, b[:1], "float32"))
    assert code(getattr(ops, o.inplace), a[:1], b) == INVALID           # the result would not be selfRef's shape
    assert getattr(ops, op)(np.zeros((0, 3), F), np.zeros((1, 3), F), np.zeros((0, 3), F)).shape == (0, 3)


PROMOTIONS = [("int32", "float16"), ("int8", "int64"), ("bool", "int32"), ("float16", "bfloat16"), ("uint8", "int8"),
              ("bool", "bool"), ("float32", "float64")]


@pytest.mark.parametrize("op", list(OPS))
def test_mixed_dtypes_promote_as_the_op_api(op):
    o = OPS[op]
    for x, y in PROMOTIONS:
        if x not in o.dtypes and op not in ("RemainderTensorTensor",) or y not in o.dtypes and op != "RemainderTensorTensor":
            continue
        a, b = values(x, (2, 16)), values(y, (2, 16), divisor=True)
        c = o.compute(x, y, "950")
        out = c if c != "bool" or op in ("Minimum", "Maximum") else "float32"
        ok = c in o.dtypes
        if not ok:                                        # (out in the list: the promoted dtype is what fails)
            assert code(getattr(ops, op), a, b, np.zeros((2, 16), F)) == INVALID, (x, y)
            continue
        same_bits(getattr(ops, op)(a, b, np.zeros((2, 16), R.np_dtype(out))), tensor_ref(op, a, b, out))


SCALARS = [(2.5, "float64"), (-3, "int64"), (0, "int64"), (-0.0, "float32"), (7, "int32"), (1.5, "float16")]


@pytest.mark.parametrize("op", list(SCALAR_OPS))
@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
def test_scalar_forms(op, name):
    s = SCALAR_OPS[op]
    x = values(name, (3, 11), divisor=s.scalar_first)
    for v, sdt in SCALARS:
        c = s.compute(name, sdt, None, "950")
        if op == "RemainderScalarTensor":
            out = c if c in REMAINDER else "float32"
            c = s.compute(name, sdt, out, "950")
        else:
            out = c if c in FLOATS or op != "FloorDivides" else c
        sc = ops.Scalar(v, sdt)
        args = (sc, x) if s.scalar_first else (x, sc)
        lists = {"FmodScalar": FMOD, "FloorDivides": FLOORDIV}
        if op in lists and (name not in lists[op] or sdt not in lists[op] or c not in lists[op]):
            assert code(getattr(ops, op), *args, np.zeros(x.shape, R.np_dtype(out))) == INVALID, (name, sdt)
            continue
        if op.startswith("Remainder") and c not in REMAINDER:
            assert code(getattr(ops, op), *args, np.zeros(x.shape, R.np_dtype(out))) == INVALID, (name, sdt)
            continue
        got = getattr(ops, op)(*args, np.zeros(x.shape, R.np_dtype(out)))
        sv = R.cast(np.array(v, R.np_dtype(sdt)), c)
        xv = R.cast(x, c)
        a, b = (np.broadcast_to(sv, x.shape), xv) if s.scalar_first else (xv, np.broadcast_to(sv, x.shape))
        same_bits(got, R.cast(s.ref(a, b, c), out))
        if s.inplace and out == name:
            t = pyaclnn.from_numpy(x.copy())
            getattr(ops, s.inplace)(t, sc)
            same_bits(t.numpy(), got)


def test_against_torch_cpu():
    torch = pytest.importorskip("torch")
    a, b = values("float32", (3000,)), values("float32", (3000,), divisor=True)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    for op, fn in (("Minimum", torch.minimum), ("Maximum", torch.maximum), ("FmodTensor", torch.fmod),
                   ("RemainderTensorTensor", torch.remainder)):
        got = getattr(ops, op)(a, b, np.zeros_like(a))
        want = fn(ta, tb).numpy()
        same_bits(got[~np.isnan(want)], want[~np.isnan(want)])
        assert np.array_equal(np.isnan(got), np.isnan(want)), op
    # floor_divide: torch's div_floor works from fmod and can differ by one where a / b rounds onto an integer
    got = ops.FloorDivide(a, b, np.zeros_like(a)).astype(np.float64)
    want = torch.floor_divide(ta, tb).numpy().astype(np.float64)
    fin = np.isfinite(want) & np.isfinite(got)
    assert np.abs(got[fin] - want[fin]).max() <= 1 and (got[fin] == want[fin]).mean() > 0.99
    ai, bi = values("int32", (3000,)), values("int32", (3000,), divisor=True)
    nz = bi != 0
    for op, fn in (("FmodTensor", torch.fmod), ("RemainderTensorTensor", torch.remainder),
                   ("FloorDivide", torch.floor_divide)):
        got = getattr(ops, op)(ai[nz], bi[nz], np.zeros(nz.sum(), np.int32))
        same_bits(got, fn(torch.from_numpy(ai[nz]), torch.from_numpy(bi[nz])).numpy())


def test_zero_divisors_and_specials():
    x = np.int32([7, -7, 0, np.iinfo(np.int32).min, np.iinfo(np.int32).min])
    y = np.int32([0, 0, 0, -1, 0])
    same_bits(ops.FmodTensor(x, y, np.zeros(5, np.int32)), np.int32([-1, -1, -1, 0, -1]))      # the kernel's -1
    same_bits(ops.RemainderTensorTensor(x, y, np.zeros(5, np.int32)), np.int32([-1, -1, -1, 0, -1]))
    same_bits(ops.FloorDivide(x, y, np.zeros(5, np.int32)), np.int32([0, 0, 0, np.iinfo(np.int32).min, 0]))
    f = F([5.5, -5.5, 0.0, -0.0, np.inf, 1.0])
    g = F([0.0, -0.0, 2.0, 2.0, 2.0, np.inf])
    same_bits(ops.FmodTensor(f, g, np.zeros(6, F)), F([np.nan, np.nan, 0.0, -0.0, np.nan, 1.0]))
    same_bits(ops.RemainderTensorTensor(F([-1.0, 1.0, -0.0]), F([3.0, -3.0, 3.0]), np.zeros(3, F)),
              F([2.0, -2.0, -0.0]))


def test_remainder_scalar_shapes_per_soc():
    # Atlas A2 accepts a [1] out for 0-d operands (and the reverse) out of place; the 950 wants the shape.
    a, b = np.float32(5.0).reshape(()), np.float32(3.0).reshape(())
    assert code(ops.RemainderTensorTensor, a, b, np.zeros(1, F)) == INVALID
    import helpers
    rc, out, err = helpers.run_python("""
        import numpy as np
        from pyaclnn import ops
        r = ops.RemainderTensorTensor(np.float32(5.0).reshape(()), np.float32(-3.0).reshape(()), np.zeros(1, np.float32))
        print(r.tolist())
    """, {"PYACLNN_STUB_SOC": A2})
    assert rc == 0 and out.strip() == "[-1.0]", err


# ---- validation --------------------------------------------------------------------------------------

def _expected_tensor(op, name, soc):
    o = OPS[op]
    c = o.compute(name, name, soc)
    if op in ("Minimum", "Maximum", "FmodTensor"):
        return 0 if name in o.dtypes and c in o.dtypes else INVALID
    if op == "RemainderTensorTensor":
        return 0 if c in o.dtypes else INVALID
    return 0 if name in o.dtypes else INVALID


@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_status_per_soc(soc):
    s = "950" if soc != A2 else "A2"
    calls, want = [], []
    for op in OPS:
        for name in ALL:
            out = out_of(op, name)
            calls.append((op, [("t", name, [2, 3]), ("t", name, [3]), ("t", out, [2, 3])]))
            want.append(_expected_tensor(op, name, s))
    for name in ALL:                                      # FloorDivides / FmodScalar with a float scalar
        c = _floordivs_compute(name, "float64", None, s)
        calls.append(("FloorDivides", [("t", name, [3]), ("s", 2.5, "float64"), ("t", "float64", [3])]))
        ok = name in FLOORDIV and (s != "950" or (c in FLOORDIV and promote(c, "float64") == "float64"))
        want.append(0 if ok else INVALID)
        c = _fmod_scalar_compute(name, "float64", None, s)
        calls.append(("FmodScalar", [("t", name, [3]), ("s", 2.5, "float64"), ("t", "float64", [3])]))
        want.append(0 if name in FMOD and c in FMOD else INVALID)
    got = status_codes(calls, soc)
    bad = [(c, g, w) for c, g, w in zip(calls, got, want) if g != w]
    assert bad == []


def test_validation_codes():
    x = np.zeros((2, 3), F)
    s = ops.Scalar(2, "int64")
    for op in OPS:
        f = getattr(ops, op)
        assert code(f, None, x, x) == NULLPTR and code(f, x, None, x) == NULLPTR and code(f, x, x, None) == NULLPTR
        assert code(f, x, np.zeros((4, 3), F), x) == INVALID                    # no broadcast
        assert code(f, x, x, np.zeros((3, 2), F)) == INVALID                    # out's shape
        assert code(f, np.zeros((1,) * 9, F), np.zeros((1,) * 9, F), np.zeros((1,) * 9, F)) == INVALID
    for op, args in (("FmodScalar", (x, s, x)), ("RemainderTensorScalar", (x, s, x)),
                     ("RemainderScalarTensor", (s, x, x)), ("FloorDivides", (x, s, x))):
        f = getattr(ops, op)
        for k in range(3):
            bad = list(args)
            bad[k] = None
            assert code(f, *bad) == NULLPTR, (op, k)
        assert code(f, *[np.zeros((3, 2), F) if a is args[2] and k == 2 else a for k, a in enumerate(args)]) == INVALID
    assert code(ops.Minimum, x, x, x.astype(np.int32)) == INVALID               # FLOAT can't be cast to INT32
    assert code(ops.FmodTensor, x, x, x.astype(np.int32)) == 0                  # Fmod casts to any listed out
    assert code(ops.FmodScalar, x, ops.Scalar(True, "bool"), x) == INVALID      # the scalar's dtype is checked
    assert code(ops.RemainderTensorTensor, x.astype(np.int8), x.astype(np.int8), x.astype(np.int8)) == INVALID
    assert code(ops.InplaceRemainderTensorScalar, x.astype(np.int32), ops.Scalar(2.5, "float64")) == INVALID


def test_catalog_lists():
    from pyaclnn import _catalog
    cat = _catalog.operators()
    for op in ("Minimum", "Maximum", "FmodTensor", "FloorDivide"):
        d = next(iter(cat[f"aclnn{op}"]["dtypes"].values()))
        assert names(" ".join(d["950"])) == OPS[op].dtypes and names(" ".join(d["A2"])) == OPS[op].dtypes, op


# ---- torch_npu on the emulator --------------------------------------------------------------------------

TORCH_X = {n: (values(n, (48,)), values(n, (48,), divisor=True)) for n in ("float32", "float16", "bfloat16", "int32")}
_BODY = """

for op, fn in SPEC["ops"].items():
    for name, (ad, bd) in SPEC["x"].items():
        a, b = T(dec(ad)), T(dec(bd))
        run_array(f"{op}-{name}", lambda: getattr(torch, fn)(a.npu(), b.npu()))
for name, (ad, bd) in SPEC["x"].items():
    a, b = T(dec(ad)), T(dec(bd))
    run_array(f"fmod_s-{name}", lambda: torch.fmod(a.npu(), 3))
    run_array(f"remainder_s-{name}", lambda: torch.remainder(a.npu(), -3))
    run_array(f"floordiv_s-{name}", lambda: torch.floor_divide(a.npu(), 4))
    run_array(f"fmod_-{name}", lambda: a.npu().fmod_(b.npu()))
    run_array(f"remainder_-{name}", lambda: a.npu().remainder_(b.npu()))
    run_array(f"floordiv_-{name}", lambda: a.npu().floor_divide_(b.npu()))
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {"ops": {op: o.torch for op, o in OPS.items()},
                                 "x": {k: [enc(a), enc(b)] for k, (a, b) in TORCH_X.items()}})


@pytest.mark.parametrize("op", list(OPS))
def test_torch_npu_calls(on_npu, op):
    for name, (a, b) in TORCH_X.items():
        res = on_npu[f"{op}-{name}"]
        assert "error" not in res, res
        same_bits(dec(res), tensor_ref(op, a, b, dec(res).dtype.name if name != "bfloat16" else name))


def test_torch_npu_scalar_and_in_place(on_npu):
    for name, (a, b) in TORCH_X.items():
        for key, op in (("fmod_", "FmodTensor"), ("remainder_", "RemainderTensorTensor"), ("floordiv_", "FloorDivide")):
            res = on_npu[f"{key}-{name}"]
            assert "error" not in res, (key, res)
            same_bits(dec(res), tensor_ref(op, a, b, name))
        for key in ("fmod_s", "remainder_s", "floordiv_s"):
            res = on_npu[f"{key}-{name}"]
            assert "error" not in res, (key, res)
            got = dec(res)
            divisor = {"fmod_s": 3, "remainder_s": -3, "floordiv_s": 4}[key]
            ref = {"fmod_s": fmod_ref, "remainder_s": remainder_ref, "floordiv_s": floordiv_ref}[key]
            c = name if name in FLOATS else "int64" if key != "floordiv_s" else "int64"
            c = dtype_name(got) if key == "floordiv_s" and name in FLOATS else c
            want = ref(R.cast(a, c), R.cast(np.full(a.shape, divisor), c), c)
            same_bits(got, R.cast(want, dtype_name(got)))
