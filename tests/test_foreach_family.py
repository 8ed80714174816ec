"""The _foreach operators on the shared foreach driver (native_stubs/src/ops/foreach/foreach_*.toml), data-driven:
every tensor of the lists against torch CPU's single-tensor function (ulp bounds per operator: the math family's
element functions, measured) and bit for bit against the emulator's single-tensor operator where it has one;
every dtype of the vendor's lists (Ascend 950 in process, Atlas A2 in one subprocess), non-contiguous and empty
tensors, the generated op_api's codes (161001, 161002) and the tiling's (561002), and torch_npu's _foreach_*
calls on the emulator (one torch_npu process).

Adding an operator adds a row to a table."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import helpers
import pyaclnn
from _math_ops import A2, INVALID, NULLPTR, code, enc, dec, same_bits, torch_npu_run
from _op_helpers import strided
from pyaclnn import ops
from reference import elementwise as R

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
RNG = np.random.default_rng(2026)
TILING = 561002
FLOATS = ["float32", "float16", "bfloat16"]


@dataclass
class Unary:
    torch: str                      # torch's function
    ulp: int = 0                    # bound vs torch CPU, fp32 (fp16/bf16: 1 when > 0)
    domain: str = "any"             # the inputs: any, unit (-1, 1), pos (> 0), gt-1 (> -1)
    single: str | None = None       # the emulator's single-tensor operator (bit for bit, FLOAT), default the name
    a2: tuple = ()                  # A2's extra dtypes
    ints950: tuple = ()             # integer dtypes of both lists


UNARY = {
    "Abs": Unary("abs"), "Acos": Unary("acos", 1, "unit"), "Asin": Unary("asin", 1, "unit"),
    "Atan": Unary("atan", 1), "Cos": Unary("cos", 1), "Cosh": Unary("cosh", 2), "Erf": Unary("erf", 1),
    "Erfc": Unary("erfc", 1), "Exp": Unary("exp", 1, a2=("int16", "int8", "uint8")),
    "Expm1": Unary("expm1", 1, a2=("int16", "int8", "uint8")), "Log": Unary("log", 1, "pos"),
    "Log10": Unary("log10", 2, "pos"), "Log1p": Unary("log1p", 2, "gt-1"), "Log2": Unary("log2", 1, "pos"),
    "Neg": Unary("neg", a2=("int16", "int8", "uint8"), ints950=("int32",)),
    "Reciprocal": Unary("reciprocal"), "Sigmoid": Unary("sigmoid", 2), "Sign": Unary("sign", ints950=("int8", "int32", "int64")),
    "Sin": Unary("sin", 1), "Sinh": Unary("sinh", 8), "Tan": Unary("tan", 64), "Tanh": Unary("tanh", 2),
}
SHAPES = [(3, 5), (17,), (2, 0, 3), (2, 3, 4)]


def values(name, shape, domain="any"):
    dt = R.np_dtype(name)
    if dt.kind in "iu":
        return RNG.integers(max(np.iinfo(dt).min, -100), min(np.iinfo(dt).max, 100), shape).astype(dt)
    x = RNG.standard_normal(shape) * 3
    if domain == "unit":
        x = RNG.uniform(-0.999, 0.999, shape)
    elif domain == "pos":
        x = np.abs(x) + 1e-3
    elif domain == "gt-1":
        x = np.abs(x) - 0.9
    return R.cast(x, name)


def bits(got, want):
    """same_bits, empty arrays included."""
    if np.size(got) == 0:
        assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
        return
    same_bits(got, want)


def T(a):
    if a.dtype == R.BF16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a))


def N(t, name):
    return R.cast(t.float().numpy(), name) if t.dtype == torch.bfloat16 else t.numpy()


def run_unary(op, xs):
    outs = [pyaclnn.from_numpy(np.zeros(tuple(x.shape), x.numpy().dtype if hasattr(x, "numpy") and
                                        not isinstance(x, np.ndarray) else x.dtype)) for x in xs]
    getattr(ops, "Foreach" + op)(xs, outs)
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("op", list(UNARY))
def test_unary_vs_torch_and_single_op(op):
    u = UNARY[op]
    for name in FLOATS + list(u.ints950):
        vals = [values(name, s, u.domain) for s in SHAPES]
        xs = list(vals)
        if name == "float32":                      # a non-contiguous view and special values
            vals[0].reshape(-1)[:2] = [np.inf, np.nan]
            vals.append(values(name, (4, 6), u.domain))
            xs = vals[:-1] + [strided(vals[-1], transpose=True)]
        got = run_unary(op, xs)
        for g, x in zip(got, vals):
            want = N(getattr(torch, u.torch)(T(x)), name)
            if name not in FLOATS or u.ulp == 0:
                bits(g, want)
                continue
            both_nan = np.isnan(g.astype(np.float64)) & np.isnan(want.astype(np.float64))
            d = R.ulp_distance(g[~both_nan], want[~both_nan], name)
            assert d.size == 0 or d.max() <= (u.ulp if name == "float32" else 1), (name, d.max())
            if name == "float32" and g.size:
                bits(g, getattr(ops, u.single or op)(x, np.zeros_like(x)))


def test_unary_in_place_and_empty_list():
    xs = [values("float32", s) for s in SHAPES]
    ts = [pyaclnn.from_numpy(x.copy()) for x in xs]
    ops.ForeachExp(ts, ts)
    for t, x in zip(ts, xs):
        bits(t.numpy(), ops.Exp(x, np.zeros_like(x)))
    assert code(ops.ForeachAbs, [], []) == TILING               # Ascend 950's tiling: 1 to 256 tensors


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int32", "int16"])
def test_zero_inplace(name):
    vals = [values(name, s) for s in SHAPES]
    ts = [pyaclnn.from_numpy(v) for v in vals] + [strided(values(name, (3, 4)))]
    ops.ForeachZeroInplace(ts)
    for t in ts:
        bits(t.numpy(), np.zeros(tuple(t.shape), t.numpy().dtype))
    assert code(ops.ForeachZeroInplace, None) == NULLPTR
    if name == "int32":
        assert code(ops.ForeachZeroInplace, [_one("int8")]) == INVALID
        assert code(ops.ForeachZeroInplace, [_one("int32"), _one("int16")]) == TILING


def _one(name="float32", shape=(2, 3)):
    return np.zeros(shape, R.np_dtype(name))


@pytest.mark.parametrize("op", ["Abs", "Sign", "Neg", "Exp"])
def test_unary_validation_codes(op):
    f = getattr(ops, "Foreach" + op)
    x = [_one(), _one()]
    assert code(f, None, x) == NULLPTR and code(f, x, None) == NULLPTR
    assert code(f, [_one("float64")], [_one("float64")]) == INVALID                 # not in the rows
    assert code(f, [_one()], [_one("float16")]) == INVALID                           # out[j] of x[j]'s dtype
    assert code(f, x, [_one()]) == INVALID                                           # out as long as x
    assert code(f, [_one(), _one("float16")], [_one(), _one("float16")]) == TILING    # one dtype in the list
    assert code(f, [_one(shape=(1,) * 9)], [_one(shape=(1,) * 9)]) == TILING          # at most 8 dims
    assert code(f, [_one()], [_one(shape=(3, 2))]) == TILING                          # out's shape
    assert code(f, [_one()] * 257, [_one()] * 257) == TILING
    with pytest.raises(pyaclnn.errors.AclError, match=r"x\[1\] dtype FLOAT16 differs from x\[0\]'s FLOAT"):
        f([_one(), _one("float16")], [_one(), _one("float16")])


EXTRA_A2 = sorted({n for u in UNARY.values() for n in u.a2})
PROBE = FLOATS + ["float64", "int32", "int64"] + EXTRA_A2
SUB_A, SUB_B = values("float16", (64,)), values("float16", (64,))


@pytest.fixture(scope="module")
def on_a2():
    """The one Atlas A2 subprocess: each unary operator's accepted dtypes, and a few results."""
    rc, out, err = helpers.run_python(f"""
        import json
        import numpy as np
        import pyaclnn
        from pyaclnn import ops
        from pyaclnn.errors import AclError
        import ml_dtypes
        def ok(op, n):
            dt = ml_dtypes.bfloat16 if n == "bfloat16" else np.dtype(n)
            try:
                getattr(ops, "Foreach" + op)([np.zeros((2, 3), dt)], [np.zeros((2, 3), dt)])
                return True
            except AclError:
                return False
        res = {{op: [ok(op, n) for n in {PROBE!r}] for op in {list(UNARY)!r}}}
        t = [pyaclnn.from_numpy(np.zeros((1, 3), np.int16))]
        ops.ForeachExp([np.int16([[-3, 0, 2]])], t)
        res["exp16"] = t[0].numpy().tolist()
        t = [pyaclnn.from_numpy(np.zeros(3, np.uint8))]
        ops.ForeachNeg([np.uint8([0, 1, 200])], t)
        res["neg8"] = t[0].numpy().tolist()
        ops.ForeachAbs([], [])                      # A2: no tensor-count check
        a, b = np.float16({SUB_A.tolist()!r}), np.float16({SUB_B.tolist()!r})
        o = [pyaclnn.from_numpy(np.zeros_like(a))]
        ops.ForeachSubListV2([a], [b], ops.Scalar(5.0, "float64"), o)
        res["sub16"] = o[0].numpy().view(np.uint16).tolist()
        o = [pyaclnn.from_numpy(np.float16([0.0]))]
        ops.ForeachMulScalarList([np.float16([0.0234375])], [ops.Scalar(2051, "int64")], o)
        res["mul_list16"] = float(o[0].numpy()[0])
        o = [pyaclnn.from_numpy(np.zeros(3, np.int16))]
        ops.ForeachRoundOffNumberV2([np.int16([-7, 0, 9])], ops.Scalar(2, "int8"), o)
        res["round16"] = o[0].numpy().tolist()
        print("RESULT " + json.dumps(res))
    """, {"PYACLNN_STUB_SOC": A2})
    assert rc == 0, err
    return __import__("json").loads(out.split("RESULT ")[1])


def test_dtype_lists_on_a2_and_950(on_a2):
    """Each operator's 950 list in process, the A2 list in the subprocess (Exp, Expm1, Neg: integer rows)."""
    for op, u in UNARY.items():
        here = [code(getattr(ops, "Foreach" + op), [_one(n)], [_one(n)]) == 0 for n in PROBE]
        assert here == [n in FLOATS + list(u.ints950) for n in PROBE], op
        assert on_a2[op] == [n in FLOATS + list(u.ints950) + list(u.a2) for n in PROBE], op
    assert on_a2["exp16"] == [[0, 1, 7]]            # exp in FLOAT, cast back (0.0498, 1, 7.389)
    assert on_a2["neg8"] == [0, 255, 56]            # wraps


# ---- torch_npu on the emulator --------------------------------------------------------------------------

TORCH_X = {n: [values(n, (5, 7)), values(n, (33,))] for n in FLOATS}
_BODY = """

for fn in SPEC["unary"]:
    for name, xs in SPEC["x"].items():
        ts = [T(dec(x)).npu() for x in xs]
        run_arrays(f"{fn}-{name}", lambda: getattr(torch, "_foreach_" + fn)(ts))
        ts2 = [t.clone() for t in ts]
        run_arrays(f"{fn}_-{name}", lambda: (getattr(torch, "_foreach_" + fn + "_")(ts2), ts2)[1])
for name, xs in SPEC["x"].items():
    a = [T(dec(x)).npu() for x in xs]
    b = [t.abs() + 1 for t in a]
    run_arrays(f"DivList-{name}", lambda: torch._foreach_div(a, b))
    run_arrays(f"MulList-{name}", lambda: torch._foreach_mul(a, b))
    run_arrays(f"SubListV2-{name}", lambda: torch._foreach_sub(a, b, alpha=2.0))
    run_arrays(f"DivScalarV2-{name}", lambda: torch._foreach_div(a, 4.0))
    run_arrays(f"SubScalarV2-{name}", lambda: torch._foreach_sub(a, 0.5))
    for k in ("add", "mul", "sub"):
        run_arrays(f"{k}-list-{name}", lambda: getattr(torch, "_foreach_" + k)(a, [0.5, -2.0]))
    run_arrays(f"MaximumList-{name}", lambda: torch._foreach_maximum(a, b))
    run_arrays(f"MinimumScalarV2-{name}", lambda: torch._foreach_minimum(a, 0.5))
    run_arrays(f"MaximumScalarList-{name}", lambda: torch._foreach_maximum(a, [0.5, -2.0]))
    g = [t.clone() for t in a]
    found, inv = torch.zeros(1).npu(), torch.full((1,), 0.25).npu()
    run_arrays(f"unscale-{name}", lambda: (torch._amp_foreach_non_finite_check_and_unscale_(g, found, inv), g + [found])[1])
    run_arrays(f"floor-{name}", lambda: torch._foreach_floor(a))
    run_arrays(f"frac-{name}", lambda: torch._foreach_frac(a))
    z = [t.clone() for t in a]
    run_arrays(f"zero-{name}", lambda: (torch._foreach_zero_(z), z)[1])
"""


@pytest.fixture(scope="module")
def on_npu():
    return torch_npu_run(_BODY, {"unary": [u.torch for u in UNARY.values()],
                                 "x": {n: [enc(x) for x in xs] for n, xs in TORCH_X.items()}})


@pytest.mark.parametrize("op", list(UNARY))
def test_torch_npu_foreach_unary(on_npu, op):
    u = UNARY[op]
    for name, xs in TORCH_X.items():
        for key in (f"{u.torch}-{name}", f"{u.torch}_-{name}"):
            res = on_npu[key]
            assert "error" not in res, res
            for r, x in zip(res, xs):
                bits(dec(r), run_unary(op, [x])[0])


# ---- lists with lists, scalars and scalar lists (foreach_binary.toml) --------------------------------------

F32 = np.float32
SCALARS = [0.5, -3.0, 2.0, 0.25]                    # exact in every float dtype: no scalar rounding in play
BINARY = {   # op: (dtypes, the inputs' kinds, the float32 reference of one tensor)
    "ForeachDivList": (FLOATS, "ll", lambda a, b, s: a / b),
    "ForeachMulList": (FLOATS + ["int32", "int16", "int8", "uint8"], "ll", lambda a, b, s: a * b),
    "ForeachSubListV2": (FLOATS + ["int32", "int8"], "lls", lambda a, b, s: a - (F32(s) * b).astype(a.dtype)),
    "ForeachDivScalarV2": (FLOATS, "ls", lambda a, b, s: a / F32(s)),
    "ForeachSubScalarV2": (FLOATS + ["int32"], "ls", lambda a, b, s: a - np.asarray(s).astype(a.dtype)),
    "ForeachAddScalarList": (FLOATS + ["int32"], "lS", lambda a, b, s: a + np.asarray(s).astype(a.dtype)),
    "ForeachMulScalarList": (FLOATS + ["int32"], "lS", lambda a, b, s: a * np.asarray(s).astype(a.dtype)),
    "ForeachSubScalarList": (FLOATS + ["int32"], "lS", lambda a, b, s: a - np.asarray(s).astype(a.dtype)),
}
for _k, _f in (("Maximum", np.maximum), ("Minimum", np.minimum)):   # foreach_minmax.toml
    BINARY[f"Foreach{_k}List"] = (FLOATS + ["int32"], "ll", lambda a, b, s, f=_f: f(a, b))
    BINARY[f"Foreach{_k}ScalarV2"] = (FLOATS + ["int32"], "ls", lambda a, b, s, f=_f: f(a, np.asarray(s).astype(a.dtype)))
    BINARY[f"Foreach{_k}ScalarList"] = (FLOATS + ["int32"], "lS",
                                        lambda a, b, s, f=_f: f(a, np.asarray(s).astype(a.dtype)))
BSHAPES = [(3, 5), (17,), (0, 2), (2, 3, 4)]


def scalar_for(name, v):
    return ops.Scalar(int(v * 4), "int64") if name not in FLOATS else ops.Scalar(v, "float64")


def wide(x):                                      # the compute dtype's values (fp32 for fp16/bf16)
    return x.astype(F32) if x.dtype.kind == "f" or x.dtype == R.BF16 else x.astype(np.int64)


@pytest.mark.parametrize("op", list(BINARY))
def test_binary_vs_fp32_reference(op):
    dtypes, kinds, ref = BINARY[op]
    for name in dtypes:
        a = [values(name, s) for s in BSHAPES]
        b = [values(name, s, "pos") if name in FLOATS else values(name, s) for s in BSHAPES]
        sv = SCALARS if name in FLOATS else [int(v * 4) for v in SCALARS]
        args = [a] + ([b] if kinds[1] == "l" else [])
        if kinds.endswith("s"):
            args.append(scalar_for(name, SCALARS[1]))
        if kinds.endswith("S"):
            args.append([scalar_for(name, v) for v in SCALARS])
        outs = [pyaclnn.from_numpy(np.zeros_like(x)) for x in a]
        getattr(ops, op)(*args, outs)
        for j, (o, x, y) in enumerate(zip(outs, a, b)):
            s = sv[j] if kinds.endswith("S") else sv[1]
            with np.errstate(all="ignore"):
                w = ref(wide(x), wide(y), s)
            want = R.cast(w.astype(np.float64), name) if name in FLOATS else w.astype(R.np_dtype(name))
            bits(o.numpy(), want)


def test_addcdiv_scalar_v2_is_addcdiv_per_tensor():
    a, b, c = ([values("float32", s, "pos") for s in SHAPES] for _ in range(3))
    outs = [pyaclnn.from_numpy(np.zeros_like(x)) for x in a]
    ops.ForeachAddcdivScalarV2(a, b, c, ops.Scalar(-0.3, "float64"), outs)
    for o, x, y, z in zip(outs, a, b, c):
        bits(o.numpy(), ops.Addcdiv(x, y, z, ops.Scalar(float(F32(-0.3)), "float32"), np.zeros_like(x)))


def test_binary_validation_codes(on_a2):
    x, h = [_one(), _one()], [_one("float16")]
    assert code(ops.ForeachDivList, x, None, x) == NULLPTR
    assert code(ops.ForeachDivList, x, [_one()], x) == INVALID                            # lengths
    assert code(ops.ForeachDivList, [_one()], [_one(shape=(3, 2))], [_one()]) == INVALID   # shapes
    assert code(ops.ForeachMulList, [_one("int64")], [_one("int64")], [_one("int64")]) == INVALID
    # DivScalarV2 keeps A2's scalar rule on Ascend 950 (MulScalarV2 takes a FLOAT scalar for FLOAT16 there)
    assert code(ops.ForeachDivScalarV2, h, ops.Scalar(2.0, "float32"), h) == INVALID
    assert code(ops.ForeachMulScalarV2, h, ops.Scalar(2.0, "float32"), [_one("float16")]) == 0
    assert code(ops.ForeachSubListV2, [_one("int32")], [_one("int32")], ops.Scalar(1.0, "float64"),
                [_one("int32")]) == INVALID
    f = ops.ForeachAddScalarList
    assert code(f, x, [ops.Scalar(1, "int64")] * 2, x) == 0                                # any scalar dtype
    assert code(f, x, [ops.Scalar(1.0, "float64")], x) == INVALID                          # one per tensor
    assert code(f, [_one("float64")], [ops.Scalar(1.0, "float64")], [_one("float64")]) == INVALID
    assert code(f, [_one(), _one("float16")], [ops.Scalar(1.0, "float64")] * 2, [_one(), _one("float16")]) == TILING
    assert code(f, x, None, x) == NULLPTR
    # a generated ScalarList's scalars become FLOAT for a FLOAT16 list (2051 is not an fp16 value)
    o = [pyaclnn.from_numpy(np.float16([0.0]))]
    ops.ForeachMulScalarList([np.float16([0.0234375])], [ops.Scalar(2051, "int64")], o)
    bits(o[0].numpy(), np.float16([0.0234375 * 2051]))                  # 48.0703125 -> 48.0625 (not 48.09375)
    assert on_a2["mul_list16"] == 48.0625                               # on A2 too (not FLOAT16's rule)
    m = ops.ForeachMaximumScalarV2                                  # the scalar within the list's dtype's range
    assert code(m, h, ops.Scalar(65504.0, "float64"), h) == 0
    assert code(m, h, ops.Scalar(1e5, "float64"), h) == INVALID
    assert code(m, x, ops.Scalar(float("inf"), "float64"), x) == INVALID
    assert code(m, x, ops.Scalar(float("inf"), "float32"), x) == 0                # its own dtype: not checked
    assert code(m, x, ops.Scalar(float("nan"), "float64"), x) == 0
    assert code(ops.ForeachMinimumScalarV2, [_one("int32")], ops.Scalar(2 ** 40, "int64"), [_one("int32")]) == INVALID
    assert code(ops.ForeachMinimumScalarV2, [], ops.Scalar(1e300, "float64"), []) == 0
    assert code(ops.ForeachMaximumList, [_one(), _one("int32")], [_one(), _one("int32")],
                [_one(), _one("int32")]) == TILING


def test_sub_list_float16_per_soc(on_a2):
    """Ascend 950's kernel computes x1 - alpha * x2 in fp32 (rounded once to fp16), A2's in fp16 (Muls, Sub)."""
    a, b = SUB_A, SUB_B
    o = [pyaclnn.from_numpy(np.zeros_like(a))]
    ops.ForeachSubListV2([a], [b], ops.Scalar(5.0, "float64"), o)
    bits(o[0].numpy(), R.cast(wide(a) - F32(5) * wide(b), "float16"))
    want = (a - (b * np.float16(5)).astype(np.float16)).astype(np.float16)
    assert on_a2["sub16"] == want.view(np.uint16).tolist()


def test_torch_npu_foreach_binary(on_npu):
    for name, xs in TORCH_X.items():
        a = xs
        b = [R.cast(np.abs(x.astype(np.float64)) + 1, name) for x in xs]
        calls = {"DivList": lambda o: ops.ForeachDivList(a, b, o),
                 "MulList": lambda o: ops.ForeachMulList(a, b, o),
                 "SubListV2": lambda o: ops.ForeachSubListV2(a, b, ops.Scalar(2.0, "float64"), o),
                 "DivScalarV2": lambda o: ops.ForeachDivScalarV2(a, ops.Scalar(4.0, "float64"), o),
                 "SubScalarV2": lambda o: ops.ForeachSubScalarV2(a, ops.Scalar(0.5, "float64"), o)}
        calls["MaximumList"] = lambda o: ops.ForeachMaximumList(a, b, o)
        calls["MinimumScalarV2"] = lambda o: ops.ForeachMinimumScalarV2(a, ops.Scalar(0.5, "float64"), o)
        calls["MaximumScalarList"] = lambda o: ops.ForeachMaximumScalarList(
            a, [ops.Scalar(0.5, "float64"), ops.Scalar(-2.0, "float64")], o)
        for k in ("Add", "Mul", "Sub"):
            calls[k.lower() + "-list"] = (lambda k: lambda o: getattr(ops, f"Foreach{k}ScalarList")(
                a, [ops.Scalar(0.5, "float64"), ops.Scalar(-2.0, "float64")], o))(k)
        for key, call in calls.items():
            res = on_npu[f"{key}-{name}"]
            assert "error" not in res, (key, res)
            outs = [pyaclnn.from_numpy(np.zeros_like(x)) for x in a]
            call(outs)
            for r, o in zip(res, outs):
                bits(dec(r), o.numpy())


# ---- ForeachRoundOffNumberV2 (foreach_round.toml) -------------------------------------------------------------

def round_ref(x, mode):
    v = x.astype(np.float32)
    t = np.trunc(v)
    ties = np.abs(v - t) == 0.5
    odd = np.where(np.fmod(t, 2) != 0, t, t + np.copysign(np.float32(1), v))
    r = {1: np.rint(v), 2: np.floor(v), 3: np.ceil(v), 4: np.where(ties, t + np.copysign(np.float32(1), v), np.rint(v)),
         5: t, 6: np.where(ties, odd, np.rint(v)), 7: v - t}.get(mode, v)
    return R.cast(r.astype(np.float64), "bfloat16" if x.dtype == R.BF16 else str(x.dtype))


@pytest.mark.parametrize("mode", [0, 1, 2, 3, 4, 5, 6, 7, 9, 257])
def test_round_off_number_modes(mode):
    for name in FLOATS + ["int32"]:
        base = values(name, (40,))
        if name in FLOATS:
            base[:12] = R.cast(np.float64([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, np.inf, -np.inf, np.nan, 7.75, -3.25]),
                               name)
        xs = [base, values(name, (2, 0)), strided(values(name, (3, 4)))]
        outs = [pyaclnn.from_numpy(np.zeros(tuple(x.shape), base.dtype)) for x in xs]
        ops.ForeachRoundOffNumberV2(xs, ops.Scalar(mode, "int64" if mode > 100 else "int8"), outs)
        for o, x in zip(outs, xs):
            x = x if isinstance(x, np.ndarray) else x.numpy()
            m = np.int8(mode % 256 - (256 if mode % 256 > 127 else 0))      # the op_api's INT8 conversion
            want = round_ref(x, int(m)) if name in FLOATS else (np.zeros_like(x) if m == 7 else x)
            bits(o.numpy(), want)


def test_round_off_number_validation(on_a2):
    f, x = ops.ForeachRoundOffNumberV2, [_one()]
    assert code(f, None, ops.Scalar(1, "int8"), x) == NULLPTR and code(f, x, None, x) == NULLPTR
    assert code(f, x, ops.Scalar(1, "int32"), x) == INVALID
    assert code(f, x, ops.Scalar(1.0, "float32"), x) == INVALID
    assert code(f, [_one("int16")], ops.Scalar(1, "int8"), [_one("int16")]) == INVALID     # A2 only
    assert code(f, [_one(), _one("float16")], ops.Scalar(1, "int8"), [_one(), _one("float16")]) == INVALID
    assert code(f, x, ops.Scalar(1, "int8"), [_one(shape=(3, 2))]) == INVALID
    assert on_a2["round16"] == [-7, 0, 9]


# ---- ForeachNonFiniteCheckAndUnscale (foreach_unscale.toml) -------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
def test_non_finite_check_and_unscale(name):
    inv = np.float32([0.37])
    for poison in (None, np.inf, np.nan):
        vals = [values(name, s) for s in [(3, 5), (17,), (2, 3, 4)]]
        vals = [np.where(np.isfinite(v.astype(np.float64)), v, R.cast(np.zeros(1), name)).astype(v.dtype) for v in vals]
        if poison is not None:
            vals[1][3] = poison
        ts = [pyaclnn.from_numpy(v.copy()) for v in vals[:2]] + [strided(vals[2])]
        flag = pyaclnn.from_numpy(np.float32([0.0]))
        ops.ForeachNonFiniteCheckAndUnscale(ts, flag, inv)
        for t, v in zip(ts, vals):
            bits(t.numpy(), R.cast((v.astype(np.float32) * inv[0]).astype(np.float64), name))
        assert flag.numpy().tolist() == [0.0 if poison is None else 1.0]
    flag = pyaclnn.from_numpy(np.float32([1.0]))                       # kept when all finite
    ops.ForeachNonFiniteCheckAndUnscale([values(name, (4,))], flag, inv)
    assert flag.numpy().tolist() == [1.0]


def test_non_finite_check_and_unscale_validation():
    f, g, one = ops.ForeachNonFiniteCheckAndUnscale, [_one()], np.float32([1.0])
    assert code(f, None, one, one) == NULLPTR and code(f, g, None, one) == NULLPTR
    assert code(f, [_one("float64")], one, one) == INVALID
    assert code(f, g, one.astype(np.float16), one) == INVALID
    assert code(f, [], one, one) == TILING
    assert code(f, [_one(), _one("float16")], one, one) == TILING
    assert code(f, [_one(shape=(0, 3))], one, one) == TILING
    assert code(f, g, np.float32([0, 0]), one) == TILING


def test_torch_npu_foreach_unscale_round_zero(on_npu):
    for name, xs in TORCH_X.items():
        res = on_npu[f"unscale-{name}"]
        assert "error" not in res, res
        for r, x in zip(res, xs):
            bits(dec(r), R.cast((x.astype(np.float32) * np.float32(0.25)).astype(np.float64), name))
        assert dec(res[-1]).tolist() == [0.0]
        for key, mode in (("floor", 2), ("frac", 7)):
            res = on_npu[f"{key}-{name}"]
            assert "error" not in res, res
            for r, x in zip(res, xs):
                bits(dec(r), round_ref(x, mode))
        for r in on_npu[f"zero-{name}"]:
            assert not dec(r).astype(np.float64).any()
