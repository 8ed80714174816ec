"""The rounding family (native_stubs/src/ops/math/rounding.toml): Sign, Signbit, Round, RoundDecimals (and
its in-place form), Floor (and in place), Trunc, Frac (and in place), IsNegInf, IsPosInf, bit for bit against
NumPy references written from the vendor's kernels (hicann/ops-math op_kernel/arch35) and torch CPU: every dtype
of the vendor's lists (Ascend 950 here, Atlas A2 in a subprocess), NaN/inf/-0.0, decimals across the kernel's
cases, strided views, empty tensors, the validation codes, and torch_npu's calls on the emulator.

Adding an operator adds a row to OPS."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import math

import numpy as np
import pytest

import pyaclnn
from _math_ops import (A2, ALL, INVALID, NULLPTR, code, dec, enc, names, same_bits, sample, status_codes,
                       torch_npu_run)
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(1729)
F = np.float32
FLOATS = ("float32", "float16", "bfloat16", "float64")
SOC = {"950": "950", "A2": "A2"}


def dtype_name(a) -> str:
    return "bfloat16" if a.dtype == R.BF16 else a.dtype.name


# ---- references (written from the kernels) --------------------------------------------------------

def sign_ref(x, soc):
    if x.dtype == bool:
        return x.copy()
    v = x.astype(np.float64)
    return R.cast((v > 0).astype(np.float64) - (v < 0).astype(np.float64), dtype_name(x))   # NaN, -0.0 -> +0


def signbit_ref(x, soc):
    if dtype_name(x) in FLOATS and soc == "950":
        return np.signbit(x.astype(np.float64))                   # the sign bit: -0.0, -NaN true
    if x.dtype == bool or x.dtype.kind == "u":
        return np.zeros(x.shape, bool)
    return x.astype(np.float64) < 0 if dtype_name(x) in FLOATS else x < 0


def rint_signed32(v):
    return np.copysign(np.rint(v), v).astype(F)


def pow10(d: int) -> float:
    """10.0 ** d by the C library's pow, as the DOUBLE kernel computes it (NumPy 1.24's np.power gives
    1e23 one ulp off); inf past the double range."""
    return math.inf if d > 308 else 10.0 ** d


def round_float(x, d):
    name = dtype_name(x)
    if name == "float64":
        v = x.astype(np.float64)
        if d == 0:
            return np.copysign(np.rint(v), v)
        pw = pow10(abs(d))
        return np.copysign(np.rint(v * pw), v) / pw if d > 0 else np.copysign(np.rint(v / pw), v) * pw
    v = x.astype(F)
    if d == 0:
        r = rint_signed32(v)
    elif abs(d) > 38:
        r = np.full(v.shape, np.nan, F)                            # RoundNan
    else:
        pw = F(10.0 ** abs(d))
        r = rint_signed32(v * pw) / pw if d > 0 else rint_signed32(v / pw) * pw
    return R.cast(r, name)


def round_int32(x, d):
    """RoundIntCustom and the tiling's cases (power, overflow values) for int32."""
    x = x.astype(np.int64)
    if d >= 0:
        return x.astype(np.int32)
    if d < -9:
        return np.full(x.shape, np.iinfo(np.int32).min if d < -308 else 0, np.int32)
    a = np.abs(x)
    if d == -9:
        v = np.where(a >= 1_500_000_000, 2_000_000_000, np.where(a > 500_000_000, 1_000_000_000, 0))
        return np.where(x == -2 ** 31, -2_000_000_000, np.where(x < 0, -v, v)).astype(np.int32)
    k = -d
    power = 10 ** k
    q, r = a // power, a % power
    m = q + (((2 * r == power) & (q % 2 == 1)) | (2 * r > power))
    res = ((np.where(x < 0, -m, m) * power + 2 ** 31) % 2 ** 32 - 2 ** 31)
    num = [0, 2147483645, -2147483600, 2147483499, -2147480000, 2147450000, -2147000000, 2145000000, -2100000000]
    if k % 2:
        res = np.where((a > num[k]) | (x == -2 ** 31), -2 ** 31, res)
    else:
        res = np.where(x == -2 ** 31, num[k], res)
    return res.astype(np.int32)


def round_int64(x, d):
    if d >= 0:
        return x.copy()
    if d < -18:
        return np.zeros_like(x)
    out = []
    for v in x.reshape(-1).tolist():
        p = 10 ** -d
        q, r = divmod(abs(v), p)
        m = q + ((2 * r == p and q % 2 == 1) or 2 * r > p)
        w = (-m if v < 0 else m) * p
        out.append((w + 2 ** 63) % 2 ** 64 - 2 ** 63)
    return np.array(out, np.int64).reshape(x.shape)


def round_ref(x, d=0):
    name = dtype_name(x)
    if name in FLOATS:
        return round_float(x, d)
    return round_int32(x, d) if name == "int32" else round_int64(x, d)


def float_or_copy(f):
    def ref(x, soc=None):
        return R.cast(f(x.astype(np.float64)), dtype_name(x)) if dtype_name(x) in FLOATS else x.copy()
    return ref


def frac_ref(x, soc=None):
    if dtype_name(x) not in FLOATS:
        return np.zeros_like(x)
    v = x.astype(np.float64)
    return R.cast(v - np.trunc(v), dtype_name(x))


def isinf_ref(sign):
    def ref(x, soc=None):
        if dtype_name(x) not in FLOATS:
            return np.zeros(x.shape, bool)
        return x.astype(np.float64) == sign * np.inf
    return ref


# ---- the operators ---------------------------------------------------------------------------------

@dataclass
class Op:
    dtypes_950: list[str]
    dtypes_a2: list[str]
    ref: Callable                     # (x, soc) -> the result (self's dtype, or BOOL)
    out: str = "same"                 # "same": out has self's dtype; "bool": BOOL; "any": any (cast)
    inplace: str | None = None        # the in-place form's name
    torch: str | None = None          # torch's function, for the torch_npu check


SIGNBIT = names("FLOAT INT32 INT64 FLOAT16 INT16 INT8 UINT8 DOUBLE UINT32 UINT64 BOOL UINT16 BF16")
OPS = {
    "Sign": Op(names("DOUBLE FLOAT FLOAT16 INT32 INT64 BOOL BF16"), names("DOUBLE FLOAT FLOAT16 INT32 INT64 BOOL BF16"),
               sign_ref, torch="sign"),
    "Signbit": Op(SIGNBIT, SIGNBIT, signbit_ref, out="bool", torch="signbit"),
    "Round": Op(names("FLOAT FLOAT16 BF16 DOUBLE INT32 INT64"), names("FLOAT FLOAT16 BF16 DOUBLE INT32 INT64"),
                lambda x, soc: round_ref(x), torch="round"),
    "Floor": Op(names("INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8 DOUBLE FLOAT FLOAT16 BF16"),
                names("INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8 DOUBLE FLOAT FLOAT16 BF16"),
                float_or_copy(np.floor), inplace="InplaceFloor", torch="floor"),
    "Trunc": Op(names("FLOAT FLOAT16 BF16 INT8 UINT8 INT32"), names("FLOAT FLOAT16 BF16"), float_or_copy(np.trunc),
                torch="trunc"),
    "Frac": Op(names("FLOAT FLOAT16 INT8 INT16 INT32 INT64 UINT8 BF16"),
               names("FLOAT FLOAT16 INT8 INT16 INT32 INT64 UINT8 BF16"), frac_ref, inplace="InplaceFrac",
               torch="frac"),
    "IsNegInf": Op(names("FLOAT FLOAT16 BF16 BOOL INT32 INT64 INT16 INT8 UINT8"),
                   names("FLOAT FLOAT16 BF16 BOOL INT32 INT64 INT16 INT8 UINT8"), isinf_ref(-1), out="bool",
                   torch="isneginf"),
    "IsPosInf": Op(names("FLOAT FLOAT16 BF16 BOOL INT32 INT64 INT16 INT8 UINT8"),
                   names("FLOAT FLOAT16 BF16 BOOL INT32 INT64 INT16 INT8 UINT8"), isinf_ref(1), out="bool",
                   torch="isposinf"),
}


def values(name, shape):
    """Samples with halves (ties), -0.0, NaN, inf, and integers over their range (small for 64-bit)."""
    if name in FLOATS:
        x = RNG.standard_normal(shape) * 8
        flat = x.reshape(-1)
        flat[:10] = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.5, -0.5, 2.5, -1.5, -0.4]
        flat[10:20] = np.round(flat[10:20] * 2) / 2                      # exact halves
        return R.cast(x, name)
    if name == "bool":
        return RNG.integers(0, 2, shape).astype(bool)
    info = np.iinfo(R.np_dtype(name))
    lo, hi = (int(info.min), int(info.max)) if info.bits <= 32 else (-(2 ** 40), 2 ** 40)
    if info.kind == "u":
        lo = 0
    x = RNG.integers(lo, hi, shape, endpoint=True).astype(R.np_dtype(name))
    x.reshape(-1)[:2] = [info.min, info.max]
    return x


def out_dtype(op, name):
    return "bool" if OPS[op].out == "bool" else name


CASES = [(op, d) for op, o in OPS.items() for d in o.dtypes_950]


@pytest.mark.parametrize("op,name", CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_every_dtype_bit_exact(op, name):
    x = values(name, (5, 41))
    got = getattr(ops, op)(x, np.zeros(x.shape, R.np_dtype(out_dtype(op, name))))
    same_bits(got, OPS[op].ref(x, "950"))


@pytest.mark.parametrize("op", [op for op, o in OPS.items() if o.inplace])
def test_in_place_strided_and_empty(op):
    o = OPS[op]
    for name in ("float32", "float16", "int32"):
        x = values(name, (4, 9))
        t = pyaclnn.from_numpy(x.copy())
        getattr(ops, o.inplace)(t)
        same_bits(t.numpy(), o.ref(x, "950"))
    x = values("float32", (6, 8))
    same_bits(getattr(ops, op)(strided(x, transpose=True), np.zeros((6, 8), F)), o.ref(x, "950"))
    view = strided(x)
    getattr(ops, o.inplace)(view)
    same_bits(view.numpy(), o.ref(x, "950"))
    assert getattr(ops, op)(np.zeros((0, 2), F), np.zeros((0, 2), F)).shape == (0, 2)


DECIMALS = [0, 1, 2, 3, 5, 8, 38, 39, -1, -2, -3, -4, -5, -7, -8, -9, -10, -38, -39, -308, -309, -(2 ** 63), 2 ** 63 - 1]


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "float64", "int32", "int64"])
def test_round_decimals_every_case_of_the_kernel(name):
    for d in DECIMALS:
        if name in FLOATS:
            x = R.cast(RNG.standard_normal(300) * 10.0 ** RNG.integers(-3, 6, 300), name)
            x[:6] = R.cast(np.array([0.125, -0.125, 1.5e-3, np.nan, -np.inf, -0.0]), name)
        else:
            x = values(name, (300,))
            x[2:12] = np.array([5, 15, 25, -25, 150, 250, 2147483646, -2147483647, 1500000000, 500000000])
        got = ops.RoundDecimals(x, d, np.zeros_like(x))
        same_bits(got, round_ref(x, d))
    x = values("float32", (4, 5))
    t = pyaclnn.from_numpy(x.copy())
    ops.InplaceRoundDecimals(t, 1)
    same_bits(t.numpy(), round_ref(x, 1))
    view = strided(x, transpose=True)
    ops.InplaceRoundDecimals(view, -1)
    same_bits(view.numpy(), round_ref(x, -1))


def test_against_torch_cpu():
    torch = pytest.importorskip("torch")
    x = values("float32", (2000,))
    t = torch.from_numpy(x)
    for op, fn in (("Floor", torch.floor), ("Trunc", torch.trunc), ("Round", torch.round), ("Frac", torch.frac),
                   ("IsNegInf", torch.isneginf), ("IsPosInf", torch.isposinf), ("Signbit", torch.signbit)):
        out = "bool" if OPS[op].out == "bool" else "float32"
        same_bits(getattr(ops, op)(x, np.zeros(x.shape, R.np_dtype(out))), fn(t).numpy())
    for d in (1, 2, 3, -1, -2):                                  # torch's x * 10^d / 10^d in fp32: the same steps
        same_bits(ops.RoundDecimals(x, d, np.zeros_like(x)), torch.round(t, decimals=d).numpy())
    s = ops.Sign(x, np.zeros_like(x))                            # NaN: the kernel gives 0 (torch: NaN)
    want = torch.sign(t).numpy()
    same_bits(s[~np.isnan(x)], want[~np.isnan(x)])
    assert np.all(s[np.isnan(x)] == 0)


def test_signbit_per_soc():
    # Ascend 950 runs the Signbit kernel (the sign bit), Atlas A2 the Less(self, 0) fallback.
    x = F([-0.0, 0.0, -1.0, np.nan, -np.nan, np.inf, -np.inf])
    same_bits(ops.Signbit(x, np.zeros(7, bool)), signbit_ref(x, "950"))
    import helpers
    rc, out, err = helpers.run_python("""
        import numpy as np
        from pyaclnn import ops
        x = np.float32([-0.0, 0.0, -1.0, np.nan, -np.nan, np.inf, -np.inf])
        print(ops.Signbit(x, np.zeros(7, bool)).tolist())
    """, {"PYACLNN_STUB_SOC": A2})
    assert rc == 0, err
    assert out.strip() == str(signbit_ref(x, "A2").tolist())


# ---- validation --------------------------------------------------------------------------------------

@pytest.mark.parametrize("soc", ["Ascend950PR", A2])
def test_dtype_lists_per_soc(soc):
    calls, want = [], []
    for op, o in OPS.items():
        lst = o.dtypes_950 if soc != A2 else o.dtypes_a2
        for name in ALL:
            calls.append((op, [("t", name, [2, 3]), ("t", out_dtype(op, name), [2, 3])]))
            want.append(0 if name in lst else INVALID)
            if o.inplace:
                calls.append((o.inplace, [("t", name, [2, 3])]))
                want.append(0 if name in lst else INVALID)
    got = status_codes(calls, soc)
    kept = list(zip(calls, want))
    bad = [(c, g, w) for (c, w), g in zip(kept, got) if g != w]
    assert bad == []


def test_catalog_lists_are_the_vendor_lists():
    from pyaclnn import _catalog
    cat = _catalog.operators()
    for op, o in OPS.items():
        d = next(iter(cat[f"aclnn{op}"]["dtypes"].values()))
        assert names(" ".join(d["950"])) == o.dtypes_950 and names(" ".join(d["A2"])) == o.dtypes_a2, op


@pytest.mark.parametrize("op", list(OPS))
def test_validation_codes(op):
    f, o = getattr(ops, op), OPS[op]
    x = np.zeros((2, 3), F)
    out = np.zeros((2, 3), R.np_dtype(out_dtype(op, "float32")))
    assert code(f, None, out) == NULLPTR and code(f, x, None) == NULLPTR
    for bad in [n for n in ALL if n not in o.dtypes_950][:1]:
        assert code(f, np.zeros((2, 3), R.np_dtype(bad)), np.zeros((2, 3), R.np_dtype(out_dtype(op, bad)))) == INVALID
    wrong = np.zeros((2, 3), np.float16 if o.out != "bool" else np.float32)
    assert code(f, x, wrong) == (0 if op == "Signbit" else INVALID)         # out's dtype (Signbit: any castable)
    assert code(f, x, np.zeros((3, 2), out.dtype)) == INVALID                 # out's shape
    if op != "Sign":                                                          # Sign has no rank limit
        assert code(f, np.zeros((1,) * 9, F), np.zeros((1,) * 9, out.dtype)) == INVALID
    else:
        same_bits(f(np.full((1,) * 9, -2, F), np.zeros((1,) * 9, F)), np.full((1,) * 9, -1, F))
    if o.inplace:
        g = getattr(ops, o.inplace)
        assert code(g, None) == NULLPTR and code(g, np.zeros((1,) * 9, F)) == INVALID


def test_round_decimals_validation():
    x = np.zeros((2, 3), F)
    assert code(ops.RoundDecimals, None, 1, x) == NULLPTR and code(ops.RoundDecimals, x, 1, None) == NULLPTR
    assert code(ops.RoundDecimals, x, 1, x.astype(np.float16)) == INVALID
    assert code(ops.RoundDecimals, x.astype(np.int16), 1, x.astype(np.int16)) == INVALID
    assert code(ops.InplaceRoundDecimals, None, 1) == NULLPTR
    assert code(ops.InplaceRoundDecimals, x.astype(np.uint8), 1) == INVALID


# ---- torch_npu on the emulator --------------------------------------------------------------------------

TORCH_X = {n: values(n, (64,)) for n in ("float32", "float16", "bfloat16", "int32")}
_BODY = """

for op, fn in SPEC["ops"].items():
    for name, xd in SPEC["x"].items():
        x = T(dec(xd))
        run_array(f"{op}-{name}", lambda: getattr(torch, fn)(x.npu()))
for name, xd in SPEC["x"].items():
    x = T(dec(xd))
    run_array(f"round2-{name}", lambda: torch.round(x.npu(), decimals=2))
    run_array(f"floor_-{name}", lambda: x.npu().floor_())
    run_array(f"frac_-{name}", lambda: x.npu().frac_())
    run_array(f"round_2-{name}", lambda: x.npu().round_(decimals=-1))
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {"ops": {op: o.torch for op, o in OPS.items()},
                                 "x": {k: enc(v) for k, v in TORCH_X.items()}})


@pytest.mark.parametrize("op", list(OPS))
def test_torch_npu_calls(on_npu, op):
    o = OPS[op]
    for name, x in TORCH_X.items():
        res = on_npu[f"{op}-{name}"]
        if name in o.dtypes_950:
            assert "error" not in res, res
            got = dec(res)
            want = o.ref(x, "950")
            if op in ("Round",) and name == "int32":
                want = x
            same_bits(got, want)
        else:
            assert "161002" in res["error"] or "not implemented" in res["error"], res


def test_torch_npu_decimals_and_in_place(on_npu):
    for name, x in TORCH_X.items():
        if name == "int32":
            continue
        same_bits(dec(on_npu[f"round2-{name}"]), round_ref(x, 2))
        same_bits(dec(on_npu[f"round_2-{name}"]), round_ref(x, -1))
        same_bits(dec(on_npu[f"floor_-{name}"]), OPS["Floor"].ref(x, "950"))
        same_bits(dec(on_npu[f"frac_-{name}"]), frac_ref(x))
