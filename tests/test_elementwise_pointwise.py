"""The pointwise, comparison and masking operators on the elementwise engine (Neg, Abs, Ceil, Sqrt,
Reciprocal, Exp, Rsqrt, Cos, Sin, Sigmoid, Silu, SiluBackward, SigmoidBackward, Pow, Rsub(s),
Eq/Ne/Gt/Ge/Lt/Le, IsFinite, BitwiseAnd, SWhere, InplaceMaskedFillScalar, Triu) against the NumPy
references of tests/reference/elementwise.py (bit for bit for the exact ones) or torch CPU within the
tolerance stated in pyaclnn/ops/_fidelity.py (the transcendental ones), plus broadcasting, strided
views and the vendor's validation codes."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R
from test_elementwise_arith import same_bits, sample

NULLPTR, INVALID = 161001, 161002
RNG = np.random.default_rng(15)
SHAPE = (6, 37)


def zeros(shape, name):
    return np.zeros(shape, R.np_dtype(name))


# ---- exact unary operators: every supported dtype, bit for bit ------------------------------------

EXACT = {   # operator -> (support list, compute rule)
    "Neg": (["int8", "int32", "int64", "float16", "float32", "float64", "bfloat16"], "keep"),
    "Abs": (["float64", "float32", "float16", "int64", "int32", "int16", "int8", "uint8", "bool", "bfloat16"], "keep"),
    "Ceil": (["float32", "float16", "bfloat16", "float64"], "keep"),
    "Sqrt": (["float32", "float16", "float64", "int8", "int16", "int32", "int64", "bool", "uint8", "bfloat16"], "float"),
    "Reciprocal": (["float32", "float16", "float64", "int8", "int16", "int32", "int64", "bool", "uint8", "bfloat16"],
                   "float"),
}
EXACT_CASES = [(op, dt) for op, (dts, _) in EXACT.items() for dt in dts]


@pytest.mark.parametrize("op,name", EXACT_CASES, ids=[f"{o}-{d}" for o, d in EXACT_CASES])
def test_exact_unary_bit_for_bit(op, name):
    x = sample(name, SHAPE)
    if name in R.FLOATS and op in ("Sqrt",):
        x = R.cast(np.abs(x.astype(np.float64)), name)   # plus a few negatives below
        x.reshape(-1)[7:10] = R.cast(np.float64([-1.0, -0.0, -2.5]), name)
    compute = name if EXACT[op][1] == "keep" else R.float_compute(name)
    got = getattr(ops, op)(x, zeros(SHAPE, compute))
    same_bits(got, R.unary_exact(op.lower(), x, compute))


@pytest.mark.parametrize("op", ["Neg", "Ceil", "Sqrt", "Reciprocal"])
def test_exact_unary_in_place(op):
    x = sample("float32", SHAPE)
    t = pyaclnn.from_numpy(x.copy())
    getattr(ops, "Inplace" + op)(t)
    same_bits(t.numpy(), R.unary_exact(op.lower(), x, "float32"))


def test_unary_on_strided_views_and_output_cast():
    base = sample("float32", (8, 10))
    src = pyaclnn.from_numpy(base).as_strided((4, 5), (1, 15), 3)          # transposed, stepping, offset
    out_store = pyaclnn.zeros((5, 8), "float64")
    out = out_store.as_strided((4, 5), (2, 8), 1)
    ops.Neg(src, out)                                                     # FLOAT computed, cast to DOUBLE out
    view = base.reshape(-1)[3 + np.add.outer(np.arange(4), np.arange(5) * 15)]
    got = out_store.numpy().reshape(-1)[1 + np.add.outer(np.arange(4) * 2, np.arange(5) * 8)]
    same_bits(got, (-view).astype(np.float64))


# ---- transcendental operators: tolerance against torch CPU and a float64 NumPy reference ---------

def _f64_reference(op, x, y=None):
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        s = 1.0 / (1.0 + np.exp(-v))
        return {"Exp": lambda: np.exp(v), "Rsqrt": lambda: 1.0 / np.sqrt(v), "Cos": lambda: np.cos(v),
                "Sin": lambda: np.sin(v), "Sigmoid": lambda: s, "Silu": lambda: v * s,
                "SiluBackward": lambda: y.astype(np.float64) * s * (1 + v * (1 - s)),
                "SigmoidBackward": lambda: y.astype(np.float64) * v * (1 - v)}[op]()


def _torch_reference(torch, op, x, y=None):
    t = torch.from_numpy(x.astype(np.float32))
    if op == "SiluBackward":
        t.requires_grad_(True)
        torch.nn.functional.silu(t).backward(torch.from_numpy(y.astype(np.float32)))
        return t.grad.numpy()
    if op == "SigmoidBackward":
        return torch.ops.aten.sigmoid_backward(torch.from_numpy(y.astype(np.float32)), t).numpy()
    return {"Exp": torch.exp, "Rsqrt": torch.rsqrt, "Cos": torch.cos, "Sin": torch.sin, "Sigmoid": torch.sigmoid,
            "Silu": torch.nn.functional.silu}[op](t).numpy()


TRANSCENDENTAL = ["Exp", "Rsqrt", "Cos", "Sin", "Sigmoid", "Silu", "SiluBackward", "SigmoidBackward"]
# The tolerance each dtype is tested against (pyaclnn/ops/_fidelity.py states the same numbers):
# against the float64 reference rounded to the dtype, and against torch CPU computing in fp32.
TOL_F64 = {"float32": 1, "float16": 1, "bfloat16": 1}
TOL_TORCH = {"float32": 2, "float16": 1, "bfloat16": 1}


def _transcendental_inputs(op, name):
    x = RNG.standard_normal(4096) * 4
    if op == "Rsqrt":
        x = np.abs(x) * 10.0 ** RNG.integers(-3, 4, x.shape)
    if op in ("Cos", "Sin"):
        x = x * 10   # up to ~100 rad: argument reduction matters
    if op == "SigmoidBackward":
        x = 1.0 / (1.0 + np.exp(-x))   # an output of sigmoid
    x = R.cast(x, name)
    y = R.cast(RNG.standard_normal(4096), name)
    return x, y


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("op", TRANSCENDENTAL)
def test_transcendental_within_tolerance(op, name):
    x, y = _transcendental_inputs(op, name)
    out = zeros(x.shape, name)
    got = getattr(ops, op)(y, x, out) if op.endswith("Backward") else getattr(ops, op)(x, out)
    want = R.cast(R.cast(_f64_reference(op, x, y), "float32"), name)   # fp32 result, then the dtype
    assert R.ulp_distance(got, want, name).max() <= TOL_F64[name]
    torch = pytest.importorskip("torch")
    tw = R.cast(_torch_reference(torch, op, x, y), name)
    if op == "SiluBackward" and name == "float32":
        # torch's fp32 formula loses bits where it cancels (near the zero of 1 + x (1 - s), x ~ -1.28, and
        # for large x where 1 - s is tiny): measured up to ~6 ulp off the float64 value there, while the
        # emulator stays within 1 ulp of it (checked above). Compared at 2^-20 of the gradient's scale.
        err = np.abs(got.astype(np.float64) - tw.astype(np.float64))
        assert np.all(err <= 2.0 ** -20 * (np.abs(y.astype(np.float64)) + np.abs(tw.astype(np.float64)))), op
        return
    assert R.ulp_distance(got, tw, name).max() <= TOL_TORCH[name], op


def test_transcendental_specials():
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 100.0, -100.0, 89.0])
    with np.errstate(all="ignore"):
        same_bits(ops.Exp(x, zeros(8, "float32")), np.exp(x.astype(np.float64)).astype(np.float32))
        same_bits(ops.Rsqrt(np.float32([0.0, -0.0, np.inf, -1.0, 4.0]), zeros(5, "float32")),
                  np.float32([np.inf, -np.inf, 0.0, np.nan, 0.5]))
    same_bits(ops.Sigmoid(np.float32([np.inf, -np.inf, 0.0]), zeros(3, "float32")), np.float32([1.0, 0.0, 0.5]))


def test_exp_of_integers_and_bool_computes_in_float():
    got = ops.Exp(np.int64([0, 1, 2]), zeros(3, "float32"))
    assert R.ulp_distance(got, np.exp(np.float64([0, 1, 2])).astype(np.float32), "float32").max() == 0
    got = ops.Exp(np.array([True, False]), zeros(2, "float16"))
    assert got.tolist() == [np.float16(np.e), 1.0]


# ---- pow and rsub ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8"])
def test_pow_integers_exact_with_wrap(name):
    x = R.cast(RNG.integers(-9, 10, 64), name)
    got = ops.PowTensorScalar(x, ops.Scalar(3, "int64"), zeros(64, name))
    with np.errstate(all="ignore"):
        want = (x.astype(np.int64) ** 3).astype(R.np_dtype(name))
    same_bits(got, want)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_pow_square_and_half_are_correctly_rounded(name):
    x = R.cast(np.abs(RNG.standard_normal(512)) * 30, name)
    got = ops.PowTensorScalar(x, ops.Scalar(2.0, "float32"), zeros(512, name))
    same_bits(got, R.binary("mul", x, x, name, name))
    got = ops.PowTensorScalar(x, ops.Scalar(0.5, "float32"), zeros(512, name))
    same_bits(got, R.unary_exact("sqrt", x, name))


def test_pow_tensor_tensor_broadcasts():
    a = R.cast(np.abs(RNG.standard_normal((3, 4))) + 0.5, "float32")
    e = np.float32([0.0, 1.0, 2.0, -1.0])
    got = ops.PowTensorTensor(a, e, zeros((3, 4), "float32"))
    assert R.ulp_distance(got, np.power(a.astype(np.float64), e).astype(np.float32), "float32").max() <= 1


def test_rsubs_and_rsub():
    x = sample("float32", SHAPE)
    same_bits(ops.Rsubs(x, ops.Scalar(1.0, "float32"), ops.Scalar(1, "int64"), zeros(SHAPE, "float32")),
              R.binary("sub", np.float32(1.0), x, "float32", "float32"))
    y = sample("float32", SHAPE)
    same_bits(ops.Rsub(x, y, ops.Scalar(0.5, "float32"), zeros(SHAPE, "float32")),
              R.axpy_f32(y, x, -0.5, "float32", "float32"))   # other + (-alpha) * self, the NPU's Axpy
    xi = sample("int32", SHAPE)
    with np.errstate(all="ignore"):
        same_bits(ops.Rsubs(xi, ops.Scalar(7, "int64"), ops.Scalar(2, "int64"), zeros(SHAPE, "int32")),
                  (np.int32(7) - xi * np.int32(2)).astype(np.int32))


# ---- comparisons -------------------------------------------------------------------------------

CMP_DTYPES = ["int8", "uint8", "int16", "int32", "int64", "float16", "float32", "float64", "bool", "bfloat16"]
CMP_OPS = ["Eq", "Ne", "Gt", "Ge", "Lt", "Le"]


@pytest.mark.parametrize("name", CMP_DTYPES)
@pytest.mark.parametrize("op", CMP_OPS)
def test_compare_tensor_every_dtype(op, name):
    a = sample(name, SHAPE)
    b = a.copy()
    b.reshape(-1)[::3] = sample(name, b.reshape(-1)[::3].shape)   # equal and unequal elements
    got = getattr(ops, op + "Tensor")(a, b, zeros(SHAPE, "bool"))
    same_bits(got, R.compare(op.lower(), a, b, name))


@pytest.mark.parametrize("op", CMP_OPS)
def test_compare_scalar_and_promotion(op):
    a = sample("int32", SHAPE)
    got = getattr(ops, op + "Scalar")(a, ops.Scalar(2.5, "float64"), zeros(SHAPE, "bool"))   # computes in FLOAT
    same_bits(got, R.compare(op.lower(), a, np.float64(2.5), "float32"))
    f = sample("float16", SHAPE)
    got = getattr(ops, op + "Scalar")(f, ops.Scalar(0.1, "float64"), zeros(SHAPE, "float32"))   # fp16; FLOAT out
    same_bits(got, R.compare(op.lower(), f, np.float64(0.1), "float16").astype(np.float32))
    got = getattr(ops, op + "Tensor")(sample("uint8", (3, 1)), sample("int8", (5,)), zeros((3, 5), "bool"))
    assert got.shape == (3, 5)


def test_compare_broadcast_strided_and_in_place():
    a = pyaclnn.from_numpy(sample("float32", (4, 6))).transpose(0, 1)    # (6, 4), strided
    b = sample("float32", (4,))
    got = ops.GtTensor(a, b, zeros((6, 4), "bool"))
    same_bits(got, R.compare("gt", a.numpy(), b, "float32"))
    t = pyaclnn.from_numpy(np.float32([1.0, np.nan, 3.0]))
    ops.InplaceNeScalar(t, ops.Scalar(3.0, "float32"))
    assert t.numpy().tolist() == [1.0, 1.0, 0.0]     # NaN != 3; the bool result cast to FLOAT
    t = pyaclnn.from_numpy(np.int32([[1, 5], [7, 2]]))
    ops.InplaceLtTensor(t, np.int32([4, 4]))
    assert t.numpy().tolist() == [[1, 0], [0, 1]]


def test_isfinite_and_bitwise_and():
    x = np.float32([0.0, np.inf, -np.inf, np.nan, 1e38, -3.0])
    assert ops.IsFinite(x, zeros(6, "bool")).tolist() == [True, False, False, False, True, True]
    assert ops.IsFinite(np.int32([1, 2]), zeros(2, "bool")).tolist() == [True, True]
    a, b = sample("bool", SHAPE), sample("bool", SHAPE)
    same_bits(ops.BitwiseAndTensor(a, b, zeros(SHAPE, "bool")), a & b)
    same_bits(ops.BitwiseAndScalar(a, ops.Scalar(True, "bool"), zeros(SHAPE, "bool")), a)
    i = sample("int16", SHAPE)
    same_bits(ops.BitwiseAndScalar(i, ops.Scalar(0x0FF0, "int64"), zeros(SHAPE, "int16")), i & np.int16(0x0FF0))


# ---- masking -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool"])
def test_where_and_masked_fill(name):
    cond = sample("bool", (5, 1, 7))
    a, b = sample(name, (4, 7)), sample(name, (5, 4, 1))
    got = ops.SWhere(cond, a, b, zeros((5, 4, 7), name))
    same_bits(got, np.where(cond, a, b))
    mask = sample("bool", (7,))
    t = pyaclnn.from_numpy(a.copy())
    value = True if name == "bool" else 3
    ops.InplaceMaskedFillScalar(t, mask, ops.Scalar(value, "int64" if name != "bool" else "bool"))
    same_bits(t.numpy(), np.where(mask, np.asarray(value).astype(a.dtype), a))


def test_where_promotes_and_masked_fill_casts_the_value():
    got = ops.SWhere(np.array([True, False]), np.int32([1, 2]), np.float16([0.5, 0.25]), zeros(2, "float32"))
    assert got.tolist() == [1.0, 0.25]
    t = pyaclnn.from_numpy(np.float16([1.0, 2.0]))
    ops.InplaceMaskedFillScalar(t, np.array([True, False]), ops.Scalar(-1e9, "float64"))
    assert t.numpy().tolist() == [-np.inf, 2.0]   # the NPU's Cast: out of fp16 range -> -inf


@pytest.mark.parametrize("diagonal", [-2, 0, 1, 5])
@pytest.mark.parametrize("name", ["float32", "bfloat16", "int64", "bool"])
def test_triu(name, diagonal):
    x = sample(name, (2, 5, 4))
    same_bits(ops.Triu(x, diagonal, zeros(x.shape, name)), R.triu(x, diagonal))
    t = pyaclnn.from_numpy(x.copy()).transpose(1, 2)   # in place on a transposed view
    ops.InplaceTriu(t, diagonal)
    same_bits(t.numpy(), R.triu(np.swapaxes(x, 1, 2), diagonal))


@pytest.mark.parametrize("diagonal", [-(2 ** 62), -4, -1, 0, 3, 2 ** 62])
@pytest.mark.parametrize("lower", [False, True])
def test_triu_tril_contiguous_in_place_and_overlapping(lower, diagonal):
    """Contiguous views go a row at a time: in place, onto an output overlapping self (read first), and
    with diagonals beyond the matrix either way; numpy's triu / tril (j - i >= k / j - i <= k) are the
    reference."""
    x = sample("float32", (3, 4, 5))
    want = np.tril(x, diagonal) if lower else np.triu(x, diagonal)
    t = pyaclnn.from_numpy(x.copy())
    (ops.InplaceTril if lower else ops.InplaceTriu)(t, diagonal)
    same_bits(t.numpy(), want)
    store = pyaclnn.from_numpy(np.concatenate([x.reshape(-1), np.zeros(7, np.float32)]))
    self_view = store.as_strided((3, 4, 5), (20, 5, 1), 0)
    out_view = store.as_strided((3, 4, 5), (20, 5, 1), 7)      # shifted by 7 elements: overlaps self
    (ops.Tril if lower else ops.Triu)(self_view, diagonal, out_view)
    same_bits(store.numpy()[7:].reshape(3, 4, 5), want)


# ---- validation ---------------------------------------------------------------------------------

@pytest.mark.parametrize("call,text", [
    (lambda: ops.Ceil(np.int32([1]), zeros(1, "int32")), "self dtype INT32 is not supported"),
    (lambda: ops.Abs(np.float32([1]), zeros(1, "float16")), "should be the same as self dtype"),
    (lambda: ops.Sqrt(np.int32([1]), zeros(1, "int32")), "out dtype INT32 is not supported"),
    (lambda: ops.Exp(np.int32([1]), zeros(1, "float32")), "self dtype INT32 is not supported"),
    (lambda: ops.Exp(np.float32([1]), zeros(1, "int32")), "can't be cast"),
    (lambda: ops.IsFinite(np.float32([1]), zeros(1, "int8")), "out dtype INT8 is not supported"),
    (lambda: ops.Silu(np.float64([1]), zeros(1, "float64")), "self dtype DOUBLE is not supported"),
    (lambda: ops.Neg(np.float32([1, 2]), zeros(3, "float32")), "Shape of out should be [2]"),
    (lambda: ops.EqTensor(np.float32([1, 2]), np.float32([1, 2, 3]), zeros(2, "bool")), "can not broadcast"),
    (lambda: ops.GtScalar(np.uint16([1]), ops.Scalar(1, "int64"), zeros(1, "bool")), "UINT16"),
    (lambda: ops.BitwiseAndScalar(np.float32([1]), ops.Scalar(1, "int64"), zeros(1, "float32")), "FLOAT"),
    (lambda: ops.BitwiseAndScalar(np.int32([1]), ops.Scalar(1.5, "float32"), zeros(1, "int32")), "promote"),
    (lambda: ops.SWhere(np.int32([1]), np.float32([1]), np.float32([1]), zeros(1, "float32")), "condition dtype"),
    (lambda: ops.InplaceMaskedFillScalar(pyaclnn.zeros((2,), "float32"), np.ones((3, 2), bool),
                                         ops.Scalar(1, "int64")), "Shape of selfRef should be [3, 2]"),
    (lambda: ops.Triu(np.float32([1, 2]), 0, zeros(2, "float32")), "must have 2 to 8 dimensions"),
    (lambda: ops.Triu(np.zeros((2, 2), np.float32), 0, zeros((2, 2), "float16")), "should be the same"),
    (lambda: ops.InplaceExp(pyaclnn.zeros((2,), "int64")), "selfRef dtype INT64 is not supported"),
    (lambda: ops.Rsubs(np.array([True]), ops.Scalar(True, "bool"), ops.Scalar(1, "int64"), zeros(1, "bool")),
     "bool operands"),
])
def test_invalid_arguments_return_161002(call, text):
    with pytest.raises(AclError) as e:
        call()
    assert e.value.code == INVALID and text in str(e.value), str(e.value)


@pytest.mark.parametrize("fn,nargs", [("aclnnExpGetWorkspaceSize", 2), ("aclnnEqTensorGetWorkspaceSize", 3),
                                      ("aclnnSWhereGetWorkspaceSize", 4), ("aclnnTriuGetWorkspaceSize", 3)])
def test_null_arguments_return_161001(fn, nargs):
    from pyaclnn import _loader
    lib = ctypes.CDLL(os.path.join(_loader.stub_library_dir(), "libopapi.so"))
    f = getattr(lib, fn)
    f.argtypes = [ctypes.c_void_p] * nargs + [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)]
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    args = [None] * nargs
    if fn.startswith("aclnnTriu"):
        f.argtypes[1] = ctypes.c_int64
        args[1] = 0
    assert f(*args, ctypes.byref(ws), ctypes.byref(ex)) == NULLPTR
    assert "is NULL" in (pyaclnn.errors.recent_error_message() or "")


def test_results_do_not_depend_on_thread_count(set_switch):
    x = sample("bfloat16", (300, 500))
    results = []
    for threads in ("1", "4"):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        results.append(ops.Silu(x, zeros((300, 500), "bfloat16")))
    same_bits(results[1], results[0])
