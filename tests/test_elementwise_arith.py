"""Add / Sub / Mul / Div (and scalar, in-place, DivMod forms) on the elementwise engine against
tests/reference/elementwise.py: bit-identical results, broadcasting, the promotion table, alpha
kernels, validation codes, thread-count independence, and torch CPU where installed."""
from __future__ import annotations

import ctypes
import os

import numpy as np
import pytest

import pyaclnn
from pyaclnn import ops
from pyaclnn.errors import AclError
from reference import elementwise as R

NULLPTR, INVALID = 161001, 161002
RNG = np.random.default_rng(11)


def sample(name: str, shape, rng=RNG) -> np.ndarray:
    """Values that exercise rounding: integers over the whole range, floats with specials."""
    dt = R.np_dtype(name)
    if name == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=np.int64).astype(dt)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(np.float64)
    flat = x.reshape(-1)
    if flat.size >= 8:
        flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0]
    return R.cast(x, name)


def bits(x: np.ndarray) -> np.ndarray:
    x = np.ascontiguousarray(x)
    return x.view(f"u{x.dtype.itemsize}") if x.dtype.kind not in "b" else x.view(np.uint8)


def same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    # NaN payloads may differ between canonical NaNs: compare NaN-ness there, bits elsewhere.
    if got.dtype.kind == "f" or got.dtype == R.BF16:
        gn, wn = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
        assert np.array_equal(gn, wn)
        assert np.array_equal(bits(got)[~gn], bits(want)[~wn])
    else:
        assert np.array_equal(bits(got), bits(want))


def scalar(v, dtype):
    return ops.Scalar(v, dtype)


# ---- same-dtype arithmetic, every dtype ---------------------------------------------------------

@pytest.mark.parametrize("name", R.ARITH)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_same_dtype_bit_exact(op, name):
    if op == "sub" and name == "bool":
        pytest.skip("bool subtraction is rejected (tested below)")
    a, b = sample(name, (5, 33)), sample(name, (5, 33))
    compute = "float32" if op == "div" and name not in R.FLOATS else name
    out = np.zeros((5, 33), R.np_dtype(compute))
    if op == "add":
        got = ops.Add(a, b, scalar(1, "int64"), out)
    elif op == "sub":
        got = ops.Sub(a, b, scalar(1, "int64"), out)
    elif op == "mul":
        got = ops.Mul(a, b, out)
    else:
        got = ops.Div(a, b, out)
    same_bits(got, R.binary(op, a, b, compute, compute))


def test_bool_subtraction_is_rejected():
    a = np.array([True, False])
    with pytest.raises(AclError) as e:
        ops.Sub(a, a, scalar(1, "int64"), np.zeros(2, bool))
    assert e.value.code == INVALID


# ---- promotion ----------------------------------------------------------------------------------

PAIRS = [(a, b) for a in R.ARITH for b in R.ARITH if a < b]


@pytest.mark.parametrize("a_name,b_name", PAIRS)
def test_promotion_table_mul(a_name, b_name):
    a, b = sample(a_name, (4, 9)), sample(b_name, (4, 9))
    p = R.promote(a_name, b_name)
    got = ops.Mul(a, b, np.zeros((4, 9), R.np_dtype(p)))
    same_bits(got, R.binary("mul", a, b, p, p))


def test_promotion_result_cast_to_a_wider_out():
    a, b = sample("int8", (16,)), sample("uint8", (16,))
    got = ops.Add(a, b, scalar(1, "int64"), np.zeros(16, np.float32))   # int16 compute, float32 out
    same_bits(got, R.binary("add", a, b, "int16", "float32"))


@pytest.mark.parametrize("a_name,b_name,out", [("float32", "float32", "int32"), ("int32", "int32", "bool"),
                                               ("float16", "int8", "int8")])
def test_promote_dtype_that_cannot_cast_to_out_is_rejected(a_name, b_name, out):
    with pytest.raises(AclError) as e:
        ops.Add(sample(a_name, (3,)), sample(b_name, (3,)), scalar(1, "int64"), np.zeros(3, R.np_dtype(out)))
    assert e.value.code == INVALID
    assert "can't be cast" in str(e.value)


def test_integer_division_is_true_division_in_float32():
    a = np.int32([7, -7, 1, 0, 5])
    b = np.int32([2, 2, 3, 0, 0])
    got = ops.Div(a, b, np.zeros(5, np.float32))
    with np.errstate(all="ignore"):
        want = (a.astype(np.float64) / b).astype(np.float32)
    same_bits(got, want)   # 3.5, -3.5, 0.33333334, nan, inf


@pytest.mark.parametrize("mode,fn", [(1, np.trunc), (2, np.floor)])
def test_divmod_rounded_quotients(mode, fn):
    a = np.int32([7, -7, 7, -7, 9])
    b = np.int32([2, 2, -2, -2, 3])
    got = ops.DivMod(a, b, mode, np.zeros(5, np.int32))
    assert got.tolist() == fn(a / b).astype(np.int32).tolist()
    x = np.float32([7.5, -7.5, 1.0])
    y = np.float32([2.0, 2.0, 3.0])
    same_bits(ops.DivMod(x, y, mode, np.zeros(3, np.float32)), fn(x / y).astype(np.float32))


# ---- broadcasting and views ---------------------------------------------------------------------

@pytest.mark.parametrize("sa,sb", [((3, 1, 5), (4, 1)), ((), (2, 3)), ((7,), (1,)), ((2, 1, 1, 3), (2, 1, 3)),
                                   ((1, 1, 1, 1, 1, 1, 1, 8), (8,))])
def test_broadcasting(sa, sb):
    a, b = sample("float32", sa), sample("float32", sb)
    shape = np.broadcast_shapes(sa, sb)
    same_bits(ops.Add(a, b, scalar(1.0, "float32"), np.zeros(shape, np.float32)),
              R.binary("add", *np.broadcast_arrays(a, b), "float32", "float32"))


def test_non_broadcastable_and_wrong_out_shape_are_rejected():
    with pytest.raises(AclError) as e:
        ops.Mul(np.zeros((2, 3), np.float32), np.zeros((4,), np.float32), np.zeros((2, 3), np.float32))
    assert e.value.code == INVALID and "broadcast" in str(e.value)
    with pytest.raises(AclError) as e:
        ops.Mul(np.zeros((2, 3), np.float32), np.zeros((3,), np.float32), np.zeros((3, 2), np.float32))
    assert e.value.code == INVALID and "Shape of out should be [2, 3]" in str(e.value)


def test_unsupported_dtype_is_rejected():
    with pytest.raises(AclError) as e:
        ops.Add(np.zeros(3, np.uint16), np.zeros(3, np.uint16), scalar(1, "int64"), np.zeros(3, np.uint16))
    assert e.value.code == INVALID and "UINT16" in str(e.value)


def test_more_than_eight_dims_is_rejected():
    with pytest.raises(AclError) as e:
        ops.Mul(np.zeros((1,) * 9, np.float32), np.zeros(1, np.float32), np.zeros((1,) * 9, np.float32))
    assert e.value.code == INVALID


def test_strided_inputs_and_output():
    base = sample("float32", (6, 10))
    a = pyaclnn.from_numpy(base).as_strided((3, 4), (20, 2), 1)        # every other row/col, offset 1
    b = pyaclnn.from_numpy(sample("float32", (4, 3))).transpose(0, 1)  # a transposed view
    out_store = pyaclnn.zeros((4, 8), "float32")
    out = out_store.as_strided((3, 4), (1, 8), 2)                       # column-major output view
    ops.Mul(a, b, out)
    want = R.binary("mul", base[0::2][:3, 1:9:2].reshape(3, 4), b.numpy(), "float32", "float32")
    full = out_store.numpy()
    same_bits(full.reshape(-1)[2:][np.add.outer(np.arange(3), np.arange(4) * 8)], want)
    untouched = np.ones(32, bool)
    untouched[2 + np.add.outer(np.arange(3), np.arange(4) * 8).reshape(-1)] = False
    assert np.all(full.reshape(-1)[untouched] == 0)


def test_empty_tensors():
    got = ops.Add(np.zeros((0, 3), np.float32), np.zeros((3,), np.float32), scalar(1, "int64"),
                  np.zeros((0, 3), np.float32))
    assert got.shape == (0, 3)


# ---- alpha -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16"])
def test_alpha_uses_axpy_muls_then_add_in_fp32(name):
    a, b = sample(name, (257,)), sample(name, (257,))
    got = ops.Add(a, b, scalar(0.1, "float32"), np.zeros(257, R.np_dtype(name)))
    same_bits(got, R.axpy_f32(a, b, 0.1, name, name))
    got = ops.Sub(a, b, scalar(0.1, "float32"), np.zeros(257, R.np_dtype(name)))
    same_bits(got, R.axpy_f32(a, b, -0.1, name, name))


def test_alpha_on_integers_multiplies_then_adds_with_wrap():
    a, b = sample("int32", (64,)), sample("int32", (64,))
    got = ops.Add(a, b, scalar(3, "int64"), np.zeros(64, np.int32))
    with np.errstate(all="ignore"):
        assert np.array_equal(got, a + b * np.int32(3))


def test_alpha_that_cannot_cast_is_rejected():
    with pytest.raises(AclError) as e:
        ops.Add(np.int32([1]), np.int32([2]), scalar(0.5, "float32"), np.zeros(1, np.int32))
    assert e.value.code == INVALID and "Alpha dtype FLOAT" in str(e.value)


# ---- scalar forms ------------------------------------------------------------------------------

def test_adds_fp16_keeps_fp16_when_the_scalar_fits():
    a = sample("float16", (100,))
    got = ops.Adds(a, scalar(0.5, "float32"), scalar(1, "int64"), np.zeros(100, np.float16))
    same_bits(got, R.binary("add", a, np.float16(0.5), "float16", "float16"))


def test_adds_fp16_computes_in_fp32_when_the_scalar_does_not_fit():
    # Ascend950 (default SoC): 0.1 is not an fp16 value, so the op_api computes in FLOAT.
    a = sample("float16", (100,))
    got = ops.Adds(a, scalar(0.1, "float32"), scalar(1, "int64"), np.zeros(100, np.float16))
    same_bits(got, R.binary("add", a, np.float32(0.1), "float32", "float16"))


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_subs_subtracts_the_scalar(name):
    a = sample(name, (100,))
    got = ops.Subs(a, scalar(0.5, "float32"), scalar(1, "int64"), np.zeros(100, R.np_dtype(name)))
    same_bits(got, R.binary("sub", a, np.float32(0.5), name, name))


def test_subs_on_integers():
    a = sample("int32", (64,))
    got = ops.Subs(a, scalar(7, "int64"), scalar(1, "int64"), np.zeros(64, np.int32))
    same_bits(got, R.binary("sub", a, np.int32(7), "int32", "int32"))


def test_scalar_forms_apply_alpha_as_axpy():
    """Adds / Subs: out = self +- alpha * other, alpha != 1 through the NPU's fp32 Axpy."""
    a = sample("float32", (257,))
    other = np.full(257, 0.5, np.float32)
    got = ops.Adds(a, scalar(0.5, "float32"), scalar(0.1, "float32"), np.zeros(257, np.float32))
    same_bits(got, R.axpy_f32(a, other, 0.1, "float32", "float32"))
    got = ops.Subs(a, scalar(0.5, "float32"), scalar(0.1, "float32"), np.zeros(257, np.float32))
    same_bits(got, R.axpy_f32(a, other, -0.1, "float32", "float32"))


def test_muls_int_tensor_float_scalar_promotes_to_float():
    a = sample("int32", (50,))
    got = ops.Muls(a, scalar(1.5, "float64"), np.zeros(50, np.float32))
    same_bits(got, R.binary("mul", a, np.float32(1.5), "float32", "float32"))


def test_inplace_forms_write_self():
    x = pyaclnn.from_numpy(np.float32([1, 2, 3, 4]).reshape(2, 2))
    ops.InplaceAdd(x, np.float32([10, 20]), scalar(1, "int64"))
    ops.InplaceMul(x, np.float32([[2], [3]]))
    ops.InplaceMuls(x, scalar(0.5, "float32"))
    assert x.numpy().tolist() == [[11.0, 22.0], [19.5, 36.0]]   # ((x + [10, 20]) * [[2], [3]]) * 0.5
    with pytest.raises(AclError) as e:   # other would broadcast selfRef to a bigger shape
        ops.InplaceMul(pyaclnn.zeros((2,), "float32"), np.zeros((3, 2), np.float32))
    assert e.value.code == INVALID


def test_inplace_with_overlapping_other_reads_before_writing():
    base = pyaclnn.from_numpy(np.arange(8, dtype=np.float32))
    self_view = base.as_strided((7,), (1,), 1)     # elements 1..7
    other_view = base.as_strided((7,), (1,), 0)    # elements 0..6, overlapping
    ops.InplaceAdd(self_view, other_view, scalar(1, "int64"))
    x = np.arange(8, dtype=np.float32)
    want = x.copy()
    want[1:] = x[1:] + x[:-1]
    assert base.numpy().tolist() == want.tolist()


@pytest.mark.parametrize("name", ["float16", "bfloat16", "int32", "int64"])
@pytest.mark.parametrize("op", ["add", "mul"])
def test_chunks_with_and_without_nan_in_place(name, op):
    """The general loop converts 256 elements at a time and redoes a chunk with a NaN result element by
    element: chunks of both kinds in one in-place call (the output is self) with a strided other, for the
    dtypes that do not take the fp32 loop."""
    a, b_store = sample(name, (1000,)), sample(name, (2000,))
    if name in ("float16", "bfloat16"):
        a[:6] = 1.0                        # no NaN in the first chunk ...
        a[300] = np.nan                    # ... one in the second
    b = b_store[::2]
    x = pyaclnn.from_numpy(a.copy())
    other = pyaclnn.from_numpy(b_store).as_strided((1000,), (2,), 0)
    if op == "add":
        ops.InplaceAdd(x, other, scalar(1, "int64"))
    else:
        ops.InplaceMul(x, other)
    same_bits(x.numpy(), R.binary(op, a, b, name, name))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "adds", "muls"])
def test_fp32_chunks_with_and_without_nan_in_place(op):
    """fp32 + - * / run a direct loop over chunks of 256 elements and leave a chunk with a NaN result to the
    general loop: chunks of both kinds in one call, in place (the output is self), with a strided other."""
    rng = np.random.default_rng(5)
    a = (rng.standard_normal(1000) * 100).astype(np.float32)
    b_store = (rng.standard_normal(2000) * 3).astype(np.float32)
    a[300] = np.nan                        # only the second chunk has a NaN result ...
    b_store[2 * 700] = -0.0                # ... and the third a signed zero divisor (an infinity, not a NaN)
    a[701], b_store[2 * 701] = 0.0, -0.0   # 0 * -0 = -0, 0 - -0 = 0, 0 / -0 = NaN: a NaN in the third chunk too
    b = b_store[::2]
    x = pyaclnn.from_numpy(a.copy())
    other = pyaclnn.from_numpy(b_store).as_strided((1000,), (2,), 0)
    if op == "add":
        ops.InplaceAdd(x, other, scalar(1, "int64"))
    elif op == "sub":
        ops.InplaceSub(x, other, scalar(1, "int64"))
    elif op == "mul":
        ops.InplaceMul(x, other)
    elif op == "div":
        ops.InplaceDiv(x, other)
    elif op == "adds":
        ops.InplaceAdds(x, scalar(-2.5, "float32"), scalar(1, "int64"))
    else:
        ops.InplaceMuls(x, scalar(-2.5, "float32"))
    if op in ("adds", "muls"):
        want = R.binary(op[:-1], a, np.full(1000, -2.5, np.float32), "float32", "float32")
    else:
        want = R.binary(op, a, b, "float32", "float32")
    same_bits(x.numpy(), want)


# ---- null pointers through the C entry point ----------------------------------------------------

def test_null_arguments_return_161001():
    from pyaclnn import _loader
    lib = ctypes.CDLL(os.path.join(_loader.stub_library_dir(), "libopapi.so"))
    ws, ex = ctypes.c_uint64(), ctypes.c_void_p()
    f = lib.aclnnAddGetWorkspaceSize
    f.argtypes = [ctypes.c_void_p] * 4 + [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_void_p)]
    assert f(None, None, None, None, ctypes.byref(ws), ctypes.byref(ex)) == NULLPTR
    with pyaclnn.zeros((2,), "float32") as t:
        h = t.acl_handle()
        assert f(h, h, None, h, ctypes.byref(ws), ctypes.byref(ex)) == NULLPTR
        assert "alpha is NULL" in (pyaclnn.errors.recent_error_message() or "")
        assert f(h, h, None, h, None, ctypes.byref(ex)) == NULLPTR


# ---- threads ------------------------------------------------------------------------------------

def test_results_do_not_depend_on_thread_count(set_switch):
    a, b = sample("bfloat16", (300, 700)), sample("float32", (700,))
    results = []
    for threads in ("1", "3", "8"):
        set_switch("PYACLNN_STUB_KERNEL_THREADS", threads)
        results.append(ops.Add(a, b, scalar(0.25, "float32"), np.zeros((300, 700), R.BF16)))
    for r in results[1:]:
        same_bits(r, results[0])
    same_bits(results[0], R.axpy_f32(a, b, 0.25, "float32", "bfloat16"))


# ---- torch CPU ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["float32", "int32", "int64", "int16", "int8", "uint8"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_against_torch_cpu(op, name):
    torch = pytest.importorskip("torch")
    a, b = sample(name, (8, 16)), sample(name, (16,))
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    want = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div}[op](ta, tb).numpy()
    out = np.zeros((8, 16), want.dtype)
    if op in ("add", "sub"):
        got = getattr(ops, op.capitalize())(a, b, scalar(1, "int64"), out)
    else:
        got = getattr(ops, op.capitalize())(a, b, out)
    same_bits(got, want)
