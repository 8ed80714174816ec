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


def test_dtype_lists_on_a2_and_950():
    """Each operator's 950 list in process, the A2 list in one subprocess (Exp, Expm1, Neg: integer rows)."""
    extra = sorted({n for u in UNARY.values() for n in u.a2})
    probe = FLOATS + ["float64", "int32", "int64"] + extra
    here = {op: [code(getattr(ops, "Foreach" + op), [_one(n)], [_one(n)]) == 0 for n in probe] for op in UNARY}
    for op, u in UNARY.items():
        assert here[op] == [n in FLOATS + list(u.ints950) for n in probe], op
    rc, out, err = helpers.run_python(f"""
        import json
        import numpy as np
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
        res = {{op: [ok(op, n) for n in {probe!r}] for op in {list(UNARY)!r}}}
        import pyaclnn
        t = [pyaclnn.from_numpy(np.zeros((1, 3), np.int16))]
        ops.ForeachExp([np.int16([[-3, 0, 2]])], t)
        res["exp16"] = t[0].numpy().tolist()
        t = [pyaclnn.from_numpy(np.zeros(3, np.uint8))]
        ops.ForeachNeg([np.uint8([0, 1, 200])], t)
        res["neg8"] = t[0].numpy().tolist()
        ops.ForeachAbs([], [])                      # A2: no tensor-count check
        print("RESULT " + json.dumps(res))
    """, {"PYACLNN_STUB_SOC": A2})
    assert rc == 0, err
    res = __import__("json").loads(out.split("RESULT ")[1])
    for op, u in UNARY.items():
        assert res[op] == [n in FLOATS + list(u.ints950) + list(u.a2) for n in probe], op
    assert res["exp16"] == [[0, 1, 7]]              # exp in FLOAT, cast back (0.0498, 1, 7.389)
    assert res["neg8"] == [0, 255, 56]              # wraps


# ---- torch_npu on the emulator --------------------------------------------------------------------------

TORCH_X = {n: [values(n, (5, 7)), values(n, (33,))] for n in FLOATS}
_BODY = """
def run(key, f):
    try:
        OUT[key] = [enc(to_np(t)) for t in f()]
    except Exception as exc:
        OUT[key] = {"error": str(exc)[:300]}

for fn in SPEC["unary"]:
    for name, xs in SPEC["x"].items():
        ts = [T(dec(x)).npu() for x in xs]
        run(f"{fn}-{name}", lambda: getattr(torch, "_foreach_" + fn)(ts))
        ts2 = [t.clone() for t in ts]
        run(f"{fn}_-{name}", lambda: (getattr(torch, "_foreach_" + fn + "_")(ts2), ts2)[1])
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
